import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { makeTestRoots, repoRoot, sidecarBinary } from "../helpers/sidecar.js";
import { clineHomeData, snapshotTree, vscodeGlobalStorage, writeLegacyTask, writeSession } from "./fixtures.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");

async function dline(env: NodeJS.ProcessEnv, args: string[]) {
  return run(cli, args, { env, maxBuffer: 16 * 1024 * 1024 });
}

describe("dline import-cline (the CLI as a separate process)", () => {
  it("lists, dry-runs (writing nothing) and imports, as JSON and as text", async () => {
    const roots = makeTestRoots("dline-import-cli-");
    writeLegacyTask(vscodeGlobalStorage(roots.home, "Code"), "8001", { task: "Legacy from the CLI" });
    writeLegacyTask(clineHomeData(roots.home), "8002", { rawUi: "[{" });
    writeSession(path.join(clineHomeData(roots.home), "sessions"), "1717000000000_cliaa", { cwd: "/srv/app" });
    const before = snapshotTree(roots.home);
    const env = { ...roots.env, DLINE_CORE: sidecarBinary, CLINE_DIR: "   " };

    const listed = JSON.parse((await dline(env, ["--json", "import-cline"])).stdout);
    expect(listed.items.map((i: { sourceKey: string }) => i.sourceKey).sort()).toEqual(["legacy:8001", "legacy:8002", "session:1717000000000_cliaa"]);
    expect(listed.items.find((i: { sourceKey: string }) => i.sourceKey === "legacy:8002").skippedCode).toBe("malformed");

    const dry = JSON.parse((await dline(env, ["import-cline", "--dry-run", "--json", "--all"])).stdout);
    expect(dry.dryRun).toBe(true);
    expect(Object.fromEntries(dry.results.map((r: { sourceKey: string; outcome: string }) => [r.sourceKey, r.outcome]))).toEqual({
      "legacy:8001": "would_import",
      "legacy:8002": "skipped",
      "session:1717000000000_cliaa": "would_import",
    });
    const tasksDir = path.join(roots.docsDir, "tasks");
    expect(fs.readdirSync(tasksDir).filter((n) => n.startsWith("cline"))).toEqual([]);

    const { stdout } = await dline(env, ["import-cline", "legacy:8001"]);
    expect(stdout).toMatch(/^imported\s+legacy:8001 -> cline-8001/m);
    const all = JSON.parse((await dline(env, ["--json", "import-cline", "--all"])).stdout);
    expect(Object.fromEntries(all.results.map((r: { sourceKey: string; outcome: string }) => [r.sourceKey, r.outcome]))).toEqual({
      "legacy:8001": "already_imported",
      "legacy:8002": "skipped",
      "session:1717000000000_cliaa": "imported",
    });
    const history = JSON.parse((await dline(env, ["--json", "history"])).stdout);
    expect(history.tasks.map((t: { title: string }) => t.title).sort()).toEqual(["Legacy from the CLI", "Session 1717000000000_cliaa"]);
    const shown = JSON.parse((await dline(env, ["--json", "show", "cline-8001"])).stdout);
    expect(shown.messages[0].text).toBe("Legacy from the CLI");
    expect(snapshotTree(roots.home)).toEqual(before);

    await expect(dline(env, ["import-cline", "--all", "legacy:8001"])).rejects.toMatchObject({ code: 2 });
    fs.rmSync(roots.base, { recursive: true, force: true });
  });
});
