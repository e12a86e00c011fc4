// `dline-core serve --workspace DIR` (what `dline task` starts): the folder's checkpoints get
// ready while the client connects, before any call names the folder, so a task's first edit
// does not wait for the whole scan of its workspace after the task was asked for.
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointState } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { runCli } from "../helpers/cli-child.js";
import { makeTestRoots, sidecarBinary, startSidecar, type RunningSidecar } from "../helpers/sidecar.js";

const running: RunningSidecar[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

/** The index files of the checkpoint repositories under a documents root. */
function shadowIndexes(docsDir: string): string[] {
  const root = path.join(docsDir, "checkpoints");
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root)
    .map((name) => path.join(root, name, ".git", "index"))
    .filter((file) => fs.existsSync(file));
}

function project(base: string): string {
  const ws = path.join(base, "project");
  fs.mkdirSync(path.join(ws, "src"), { recursive: true });
  for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(ws, "src", `f${i}.txt`), `file ${i}\n`);
  execFileSync("git", ["init", "-q"], { cwd: ws });
  return ws;
}

describe("serve --workspace", () => {
  it("scans the named folder into its checkpoint repository with no call made", async () => {
    const roots = makeTestRoots();
    const ws = project(roots.base);
    const s = await startSidecar({ roots, args: ["--workspace", ws] });
    running.push(s);
    await expect.poll(() => shadowIndexes(roots.docsDir).length, { timeout: 20_000 }).toBe(1);
    // The scan took every file in: the status says ready, without a task.
    await expect
      .poll(async () => (await s.clients.checkpoints.getStatus({ workspaceRoot: ws })).state)
      .toBe(CheckpointState.READY);
    const files = execFileSync("git", ["--git-dir", path.dirname(shadowIndexes(roots.docsDir)[0]!), "ls-files"], {
      encoding: "utf8",
    });
    expect(files.split("\n").filter(Boolean)).toHaveLength(50);
  });

  it("without it, a sidecar that is only connected to makes no checkpoint repository", async () => {
    const roots = makeTestRoots();
    project(roots.base);
    const s = await startSidecar({ roots });
    running.push(s);
    await s.clients.system.initialize({ clientName: "vitest", clientVersion: "1", workspaceRoots: [] });
    // The domain modules load with this call; nothing names the folder.
    await s.clients.history.listTasks({});
    expect(shadowIndexes(roots.docsDir)).toEqual([]);
  });

  it("a folder whose checkpoints are turned off is left alone", async () => {
    const roots = makeTestRoots();
    const ws = project(roots.base);
    await runCli(["settings", "set", "checkpointsEnabled", "false"], roots.env);
    const s = await startSidecar({ roots, args: ["--workspace", ws] });
    running.push(s);
    await expect
      .poll(async () => (await s.clients.checkpoints.getStatus({ workspaceRoot: ws })).state)
      .toBe(CheckpointState.DISABLED);
    expect(shadowIndexes(roots.docsDir)).toEqual([]);
  });

  it("a folder that is not there is left for the task to refuse", async () => {
    const roots = makeTestRoots();
    const s = await startSidecar({ roots, args: ["--workspace", path.join(roots.base, "no-such-folder")] });
    running.push(s);
    await s.clients.history.listTasks({});
    expect(fs.existsSync(path.join(roots.base, "no-such-folder"))).toBe(false);
    expect(shadowIndexes(roots.docsDir)).toEqual([]);
    expect((await s.clients.system.health({})).status).toBe("ok");
  });

  it("acp refuses it: its folders come from session/new", () => {
    const roots = makeTestRoots();
    const out = spawnSync(sidecarBinary, ["acp", "--workspace", roots.base], { env: roots.env, encoding: "utf8" });
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/session\/new: --workspace does not apply/);
  });

  it("--one-command takes no value, and acp refuses it: it serves its editor as long as it runs", () => {
    const roots = makeTestRoots();
    const valued = spawnSync(sidecarBinary, ["serve", "--one-command=yes"], { env: roots.env, encoding: "utf8" });
    expect(valued.status).toBe(2);
    expect(valued.stderr).toMatch(/--one-command takes no value/);
    const acp = spawnSync(sidecarBinary, ["acp", "--one-command"], { env: roots.env, encoding: "utf8" });
    expect(acp.status).toBe(2);
    expect(acp.stderr).toMatch(/--one-command does not apply/);
  });
});
