/**
 * Cline files as an unlucky user may have them, through the real sidecar: saved again by a
 * Windows editor with a byte order mark (UTF-8's, or UTF-16 text), a named pipe or a folder where
 * a file belongs, a link to a file that is not JSON at all. Files with a byte order mark are
 * imported like any other; the others are listed as malformed without blocking the sidecar and
 * without quoting the file's content in the reason; Cline's folders are left as they were.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { createHash } from "node:crypto";
import { clineHomeData, legacyUiMessages, vscodeGlobalStorage, writeLegacyTask } from "./fixtures.js";

const { testRoots, sidecar } = scopedSidecars();

const SECRET = "sk-live-do-not-show";

/** Every entry under `dir` with its stamp, and the content hash of regular files (a pipe is not read). */
function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d)) {
      const p = path.join(d, name);
      const st = fs.lstatSync(p);
      const stamp = `${st.mtimeMs} ${st.ctimeMs} ${st.mode} ${st.ino} ${st.size}`;
      out[path.relative(dir, p)] = st.isFile()
        ? `${createHash("sha256").update(fs.readFileSync(p)).digest("hex")} ${stamp}`
        : stamp;
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

describe("odd Cline files through the real sidecar", () => {
  it("reads byte order marks, reports pipes, folders and links to non-JSON files without quoting them", async () => {
    const roots = testRoots("dline-import-odd-");
    const code = vscodeGlobalStorage(roots.home, "Code");
    const data = clineHomeData(roots.home);
    const utf8Bom = writeLegacyTask(code, "6001", { task: "Saved with a UTF-8 mark é" });
    const ui8 = path.join(utf8Bom, "ui_messages.json");
    fs.writeFileSync(ui8, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), fs.readFileSync(ui8)]));
    const utf16 = writeLegacyTask(code, "6002", { task: "Saved as UTF-16 ünï" });
    const ui16 = path.join(utf16, "ui_messages.json");
    fs.writeFileSync(
      ui16,
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(fs.readFileSync(ui16, "utf8"), "utf16le")]),
    );
    // A conversation file that is a named pipe: reading it would wait for a writer forever.
    const piped = writeLegacyTask(data, "6003", { task: "A pipe for a conversation", conversation: false });
    const mkfifo = spawnSync("mkfifo", [path.join(piped, "api_conversation_history.json")]);
    expect(mkfifo.status).toBe(0);
    // A UI messages file that links to a file of secrets (not JSON).
    const secrets = path.join(roots.base, "secrets.txt");
    fs.writeFileSync(secrets, `${SECRET}\n`);
    const linked = path.join(data, "tasks", "6004");
    fs.mkdirSync(linked, { recursive: true });
    fs.symlinkSync(secrets, path.join(linked, "ui_messages.json"));
    // A conversation file that is a folder.
    const folder = writeLegacyTask(data, "6005", { task: "A folder for a conversation", conversation: false });
    fs.mkdirSync(path.join(folder, "api_conversation_history.json"));
    const clineBefore = snapshotTree(roots.home);

    const { clients } = await sidecar(roots);
    const found = await clients.imports.discoverCline({}, { timeoutMs: 20_000 });
    const item = (key: string) => found.items.find((i) => i.sourceKey === key);
    expect(item("legacy:6001")?.skippedReason).toBe("");
    expect(item("legacy:6001")?.title).toBe("Saved with a UTF-8 mark é");
    expect(item("legacy:6002")?.skippedReason).toBe("");
    expect(item("legacy:6002")?.title).toBe("Saved as UTF-16 ünï");
    expect(item("legacy:6003")?.skippedCode).toBe("malformed");
    expect(item("legacy:6003")?.skippedReason).toMatch(/api_conversation_history\.json is not a regular file/);
    expect(item("legacy:6004")?.skippedCode).toBe("malformed");
    expect(item("legacy:6004")?.skippedReason).toMatch(/not valid JSON/);
    expect(item("legacy:6005")?.skippedCode).toBe("malformed");

    const res = await clients.imports.importCline({ all: true }, { timeoutMs: 20_000 });
    const outcome = (key: string) => res.results.find((r) => r.sourceKey === key);
    expect(outcome("legacy:6001")?.outcome).toBe("imported");
    expect(outcome("legacy:6002")?.outcome).toBe("imported");
    for (const key of ["legacy:6003", "legacy:6004", "legacy:6005"]) expect(outcome(key)?.outcome, key).toBe("skipped");
    const wire = JSON.stringify([found.items, res.results], (_k, v: unknown) =>
      typeof v === "bigint" ? String(v) : v,
    );
    expect(wire).not.toContain(SECRET.slice(0, 6));

    const imported = await clients.tasks.getTask({ taskId: outcome("legacy:6002")!.taskId });
    const shown = legacyUiMessages({ task: "Saved as UTF-16 ünï" }).length;
    expect(imported.messages.length).toBeGreaterThanOrEqual(shown - 1);
    expect(imported.messages.map((m) => m.text)).toContain("Saved as UTF-16 ünï");
    expect(snapshotTree(roots.home)).toEqual(clineBefore);
  });
});
