import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { makeTestRoots, repoRoot, sidecarBinary } from "../helpers/sidecar.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { spawnModelServer } from "../model-server/spawn.js";
import { clineHomeData, snapshotTree, vscodeGlobalStorage, writeLegacyTask, writeSession } from "./fixtures.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");

async function dline(env: NodeJS.ProcessEnv, args: string[], cwd?: string) {
  return run(cli, args, { env, cwd, maxBuffer: 16 * 1024 * 1024 });
}

/** The CLI's exit code, stdout and stderr, whether it succeeded or not. */
async function dlineResult(
  env: NodeJS.ProcessEnv,
  args: string[],
  cwd?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await dline(env, args, cwd);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
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
    expect(listed.items.map((i: { sourceKey: string }) => i.sourceKey).sort()).toEqual([
      "legacy:8001",
      "legacy:8002",
      "session:1717000000000_cliaa",
    ]);
    expect(listed.items.find((i: { sourceKey: string }) => i.sourceKey === "legacy:8002").skippedCode).toBe(
      "malformed",
    );

    const dry = JSON.parse((await dline(env, ["import-cline", "--dry-run", "--json", "--all"])).stdout);
    expect(dry.dryRun).toBe(true);
    expect(
      Object.fromEntries(dry.results.map((r: { sourceKey: string; outcome: string }) => [r.sourceKey, r.outcome])),
    ).toEqual({
      "legacy:8001": "would_import",
      "legacy:8002": "skipped",
      "session:1717000000000_cliaa": "would_import",
    });
    const tasksDir = path.join(roots.docsDir, "tasks");
    expect(fs.readdirSync(tasksDir).filter((n) => n.startsWith("cline"))).toEqual([]);

    const { stdout } = await dline(env, ["import-cline", "legacy:8001"]);
    expect(stdout).toMatch(/^imported\s+legacy:8001 -> cline-8001/m);
    const all = JSON.parse((await dline(env, ["--json", "import-cline", "--all"])).stdout);
    expect(
      Object.fromEntries(all.results.map((r: { sourceKey: string; outcome: string }) => [r.sourceKey, r.outcome])),
    ).toEqual({
      "legacy:8001": "already_imported",
      "legacy:8002": "skipped",
      "session:1717000000000_cliaa": "imported",
    });
    const history = JSON.parse((await dline(env, ["--json", "history"])).stdout);
    expect(history.tasks.map((t: { title: string }) => t.title).sort()).toEqual([
      "Legacy from the CLI",
      "Session 1717000000000_cliaa",
    ]);
    const shown = JSON.parse((await dline(env, ["--json", "show", "cline-8001"])).stdout);
    expect(shown.messages[0].text).toBe("Legacy from the CLI");
    expect(snapshotTree(roots.home)).toEqual(before);

    await expect(dline(env, ["import-cline", "--all", "legacy:8001"])).rejects.toMatchObject({ code: 2 });
    fs.rmSync(roots.base, { recursive: true, force: true });
  });

  it("prints help for --help without looking for anything, and names the CLI command for an unknown key", async () => {
    const roots = makeTestRoots("dline-import-cli-help-");
    writeLegacyTask(vscodeGlobalStorage(roots.home, "Code"), "8101", { task: "Listed only when asked" });
    const before = snapshotTree(roots.home);
    const env = { ...roots.env, DLINE_CORE: sidecarBinary };
    const help = await dlineResult(env, ["import-cline", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: dline \[--json\] import-cline \[--dry-run\] \[--all \| SOURCE_KEY\.\.\.\]/);
    expect(help.stdout).not.toMatch(/legacy:8101|item\(s\) found/);
    const unknown = await dlineResult(env, ["import-cline", "legacy:nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toMatch(
      /^failed\s+legacy:nope: no such item under the Cline roots; list them with: dline import-cline$/m,
    );
    expect(unknown.stdout).not.toMatch(/DiscoverCline/);
    expect(snapshotTree(roots.home)).toEqual(before);
    fs.rmSync(roots.base, { recursive: true, force: true });
  });

  it("shows an imported legacy task as lines a person reads, not Cline's JSON", async () => {
    const roots = makeTestRoots("dline-import-cli-show-");
    writeLegacyTask(clineHomeData(roots.home), "8201", {
      task: "Show me",
      usages: [{ tokensIn: 1500, tokensOut: 80, cacheWrites: 0, cacheReads: 200, cost: 0.0104 }],
      extra: [
        { type: "ask", ask: "followup", text: JSON.stringify({ question: "Which test?", options: ["unit", "e2e"] }) },
      ],
    });
    const before = snapshotTree(roots.home);
    const env = { ...roots.env, DLINE_CORE: sidecarBinary };
    await dline(env, ["import-cline", "--all"]);
    const { stdout } = await dline(env, ["show", "cline-8201"]);
    expect(stdout).toContain("[system api_req_started] API request: 1,500 tokens in, 80 out, 200 cache reads, $0.0104");
    expect(stdout).toContain("[tool] read src/a.ts");
    expect(stdout).toContain("[dline followup] Which test?");
    expect(stdout).not.toMatch(/\] \{"/);
    expect(snapshotTree(roots.home)).toEqual(before);
    fs.rmSync(roots.base, { recursive: true, force: true });
  });

  it("resume asks for --workspace for a task without one, and runs its tools there, not in the current folder", async () => {
    const roots = makeTestRoots("dline-import-cli-resume-");
    const workspace = makeWorkspace(roots.base);
    const here = path.join(roots.base, "where-the-cli-runs");
    fs.mkdirSync(here);
    writeLegacyTask(clineHomeData(roots.home), "8301", { task: "Write the notes", cwd: null });
    const before = snapshotTree(roots.home);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        { text: "Writing.", toolCalls: [{ name: "write_to_file", input: { path: "NOTES.md", content: "notes\n" } }] },
        { text: "Done.", toolCalls: [{ name: "attempt_completion", input: { result: "written" } }] },
      ],
    });
    try {
      const env = {
        ...roots.env,
        DLINE_CORE: sidecarBinary,
        OPENAI_BASE_URL: server.url,
        OPENAI_MODEL: "scripted-model",
        OPENAI_API_KEY: TEST_KEY,
      };
      await dline(env, ["import-cline", "--all"], here);
      const refused = await dlineResult(env, ["resume", "cline-8301", "--yes"], here);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        "task cline-8301 cannot continue: it has no workspace. Name the folder to continue it in: dline resume cline-8301 --workspace DIR",
      );
      expect(await server.requests()).toHaveLength(0);
      const resumed = await dlineResult(
        env,
        ["resume", "cline-8301", "--workspace", workspace, "--message", "Now write them", "--yes"],
        here,
      );
      expect(resumed.code).toBe(0);
      expect(fs.readFileSync(path.join(workspace, "NOTES.md"), "utf8")).toBe("notes\n");
      expect(fs.readdirSync(here)).toEqual([]);
      const history = JSON.parse((await dline(env, ["--json", "history", "--workspace", workspace], here)).stdout);
      expect(history.tasks.map((t: { id: string }) => t.id)).toEqual(["cline-8301"]);
    } finally {
      await server.stop();
    }
    expect(snapshotTree(roots.home)).toEqual(before);
    fs.rmSync(roots.base, { recursive: true, force: true });
  });
});
