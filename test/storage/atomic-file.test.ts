/**
 * The one atomic write (storage/atomic-file.ts) and the one name for a damaged file's copy:
 * what each kind of caller relies on. The core's own files get an exact owner-only mode; a
 * user's workspace file keeps its mode (a tool's edit must not change who may read or run it);
 * a writer killed mid-write leaves no temp file behind for long; a damaged file's copy never
 * replaces an earlier copy.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  corruptCopyPath,
  moveAsideSync,
  writeFileAtomic,
  writeFileAtomicSync,
} from "../../core/src/storage/atomic-file.js";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-atomic-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const modeOf = (file: string) => fs.statSync(file).mode & 0o7777;

describe("writeFileAtomic", () => {
  it("writes a core file owner-only in an owner-only folder it creates, whatever was there", async () => {
    const file = path.join(dir, "settings", "settings.json");
    await writeFileAtomic(file, '{"a":1}\n');
    expect(fs.readFileSync(file, "utf8")).toBe('{"a":1}\n');
    expect(modeOf(file)).toBe(0o600);
    expect(modeOf(path.dirname(file))).toBe(0o700);
    fs.chmodSync(file, 0o644);
    writeFileAtomicSync(file, "second");
    expect(fs.readFileSync(file, "utf8")).toBe("second");
    expect(modeOf(file)).toBe(0o600);
  });

  it("gives a mode it is asked for exactly, past the umask", async () => {
    const file = path.join(dir, "addon.node");
    writeFileAtomicSync(file, new Uint8Array([1, 2, 3]), { mode: 0o700 });
    expect(modeOf(file)).toBe(0o700);
    await writeFileAtomic(file, "x", { mode: 0o640 });
    expect(modeOf(file)).toBe(0o640);
  });

  it("keeps the mode of a user's file it replaces, bits the umask would clear included", async () => {
    const script = path.join(dir, "run.sh");
    fs.writeFileSync(script, "#!/bin/sh\necho old\n");
    fs.chmodSync(script, 0o777);
    await writeFileAtomic(script, "#!/bin/sh\necho new\n", { userFile: true });
    expect(fs.readFileSync(script, "utf8")).toContain("echo new");
    expect(modeOf(script)).toBe(0o777);
  });

  it("gives a new user file the umask's default, not the core's private mode", async () => {
    const file = path.join(dir, "notes.md");
    await writeFileAtomic(file, "# Notes\n", { userFile: true });
    fs.writeFileSync(path.join(dir, "plain.md"), "");
    expect(modeOf(file)).toBe(modeOf(path.join(dir, "plain.md")));
  });

  it("leaves no temp file beside the target, and removes those of a writer that died", async () => {
    const file = path.join(dir, "state", "globalState.json");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // A pid that no longer exists: a process that ran and exited.
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    }).stdout;
    const orphan = path.join(path.dirname(file), `.globalState.json.${dead}.7.tmp`);
    const live = path.join(path.dirname(file), `.globalState.json.${process.ppid}.7.tmp`);
    fs.writeFileSync(orphan, "{half");
    fs.writeFileSync(live, "{someone else's write in progress");
    await writeFileAtomic(file, "{}");
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual([path.basename(live), "globalState.json"].sort());
  });

  it("in the user's folder, removes only the replaced file's own temp files of a writer that died", async () => {
    const file = path.join(dir, "bigout.txt");
    fs.writeFileSync(file, "old\n");
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    }).stdout;
    // A sidecar killed while a tool wrote bigout.txt left its half-written copy.
    const orphan = path.join(dir, `.bigout.txt.${dead}.10.tmp`);
    fs.writeFileSync(orphan, "half");
    // Not ours to remove: a live writer's, another file's, and the person's own files.
    const kept = [
      `.bigout.txt.${process.ppid}.3.tmp`,
      `.other.txt.${dead}.10.tmp`,
      ".bigout.txt.notes.tmp",
      "bigout.txt.tmp",
    ];
    for (const name of kept) fs.writeFileSync(path.join(dir, name), "keep");
    await writeFileAtomic(file, "new\n", { userFile: true });
    expect(fs.readFileSync(file, "utf8")).toBe("new\n");
    expect(fs.readdirSync(dir).sort()).toEqual([...kept, "bigout.txt"].sort());
  });

  it("removes its temp file when the write fails and keeps the old content", async () => {
    const file = path.join(dir, "task_metadata.json");
    writeFileAtomicSync(file, "old");
    fs.mkdirSync(path.join(dir, "blocker"));
    // Renaming a file over a folder fails: the old target stays whole, no temp is left.
    await expect(writeFileAtomic(path.join(dir, "blocker"), "new")).rejects.toThrow();
    expect(fs.readFileSync(file, "utf8")).toBe("old");
    expect(fs.readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});

describe("corruptCopyPath", () => {
  it("names the copy <name>.corrupt-<time> with a time a file name can hold", () => {
    const at = new Date("2026-12-01T18:30:05.123Z");
    expect(corruptCopyPath("/x/state.json", at)).toBe("/x/state.json.corrupt-2026-12-01T18-30-05-123Z");
  });

  it("never names an existing copy: two damaged versions in the same millisecond are both kept", () => {
    const file = path.join(dir, "state.json");
    const at = new Date();
    fs.writeFileSync(corruptCopyPath(file, at), "first damaged version");
    const second = corruptCopyPath(file, at);
    expect(second).toBe(`${file}.corrupt-${at.toISOString().replace(/[:.]/g, "-")}-1`);
    fs.writeFileSync(file, "second damaged version");
    fs.renameSync(file, second);
    fs.writeFileSync(file, "third damaged version");
    expect(corruptCopyPath(file, at)).toBe(`${second.slice(0, -2)}-2`);
  });

  it("moveAsideSync keeps the file's bytes under that name", () => {
    const file = path.join(dir, "pending-deletions.json");
    fs.writeFileSync(file, "{not json");
    const aside = moveAsideSync(file);
    expect(path.basename(aside)).toMatch(
      /^pending-deletions\.json\.corrupt-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z(-\d+)?$/,
    );
    expect(fs.readFileSync(aside, "utf8")).toBe("{not json");
    expect(fs.existsSync(file)).toBe(false);
  });
});
