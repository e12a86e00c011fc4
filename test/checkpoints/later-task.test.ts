import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeManager, makeSandbox, write } from "./helpers.js";

/** A file of a checkpoint, read with the system git from the shadow repository. */
function fileAt(gitDir: string, commit: string, rel: string): string | undefined {
  try {
    return execFileSync("git", ["--git-dir", gitDir, "show", `${commit}:${rel}`], {
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return undefined;
  }
}

/**
 * Runs `git status` on the shadow repository as a scan does (its config, the same options),
 * with git's trace2 performance log: how many paths git read while looking for untracked files.
 */
function untrackedScanVisits(gitDir: string, workspace: string): { paths: number; dirs: number; trees: number } {
  const trace = path.join(path.dirname(gitDir), "trace2.txt");
  fs.rmSync(trace, { force: true });
  execFileSync(
    "git",
    ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all"],
    {
      cwd: workspace,
      env: {
        PATH: process.env.PATH,
        GIT_DIR: gitDir,
        GIT_WORK_TREE: workspace,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_TRACE2_PERF: trace,
      },
      stdio: ["ignore", "ignore", "ignore"],
    },
  );
  const log = fs.readFileSync(trace, "utf8");
  const figure = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(log)?.[1] ?? NaN);
  return {
    paths: figure("paths-visited"),
    dirs: figure("directories-visited"),
    // Trees of HEAD read while comparing it with the index (those the index's cached trees vouch for are skipped).
    trees: Number(/"traverse_trees_count":(\d+)/.exec(log)?.[1] ?? NaN),
  };
}

describe("a later task in a workspace", () => {
  it("scans with git's untracked cache: a scan after a scan reads no folder whose files did not change", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    for (let i = 0; i < 200; i++) write(ws, `src/d${i % 20}/f${i}.txt`, `file ${i}\n`);
    // Folders changed in the same second as git writes its index are "racy": git reads them again.
    const past = new Date(Date.now() - 60_000);
    for (const d of ["", "src", ...Array.from({ length: 20 }, (_, i) => `src/d${i}`)])
      fs.utimesSync(path.join(ws, d), past, past);
    const manager = makeManager(sb);
    await manager.ensureBaseline({ id: "t1", workspaceRoots: [ws] });
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    // The scan above wrote the cache; the next scan of the unchanged tree checks each folder's
    // stat data and reads none of them: it visits the folders, not the 200 files in them.
    untrackedScanVisits(gitDir, ws);
    const visits = untrackedScanVisits(gitDir, ws);
    expect(visits.dirs).toBeGreaterThanOrEqual(21);
    expect(visits.paths).toBeLessThan(100);
  });

  it("scans with the index's cached trees: HEAD's folders that match the index are not read again", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    for (let i = 0; i < 200; i++) write(ws, `src/d${i % 20}/f${i}.txt`, `file ${i}\n`);
    const first = makeManager(sb);
    await first.ensureBaseline({ id: "t1", workspaceRoots: [ws] });
    await first.idle();
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    // A status reads none of HEAD's trees below the root (without the cached trees: every folder on the way).
    expect(untrackedScanVisits(gitDir, ws).trees).toBeLessThanOrEqual(1);

    // The person changes a file between tasks; the next task's scan stages it, and its folder's
    // cached tree is written again: the scan after that reads no more trees than before.
    write(ws, "src/d3/f3.txt", "changed by the person\n");
    const second = makeManager(sb);
    const next = (await second.ensureBaseline({ id: "t2", workspaceRoots: [ws] }))!;
    await second.idle();
    expect(fileAt(gitDir, next.id, "src/d3/f3.txt")).toBe("changed by the person\n");
    expect(untrackedScanVisits(gitDir, ws).trees).toBeLessThanOrEqual(1);
  });

  it("a completion after turns whose edits were all recorded is the newest snapshot, without a scan", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "a.txt", "a0");
    write(ws, "b.txt", "b0");
    const manager = makeManager(sb);
    const task = { id: "t1", workspaceRoots: [ws] };
    await manager.ensureBaseline(task);
    // The runtime asks for the baseline before a modifying tool; an edit then says which file.
    await manager.ensureBaseline(task);
    await manager.beforeEdit(task, ["a.txt"]);
    write(ws, "a.txt", "a1");
    const turn = (await manager.saveTurn(task, { editedPaths: ["a.txt"] }))!;
    // A change nobody recorded (the person's editor): the completion does not look for it.
    write(ws, "b.txt", "b1 by the person");
    const completion = (await manager.saveCompletion(task))!;
    expect(completion.tree).toBe(turn.tree);
    expect(completion.reused).toBe(true);
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    expect(fileAt(gitDir, completion.id, "a.txt")).toBe("a1");

    // The next task's baseline (a new process) scans and takes it in.
    const later = makeManager(sb);
    const next = (await later.ensureBaseline({ id: "t2", workspaceRoots: [ws] }))!;
    expect(fileAt(gitDir, next.id, "b.txt")).toBe("b1 by the person");
    expect(fileAt(gitDir, next.id, "a.txt")).toBe("a1");
  });

  it("a completion scans when a tool that may modify the workspace started and was not an edit (a command cut short)", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "a.txt", "a0");
    const manager = makeManager(sb);
    const task = { id: "t1", workspaceRoots: [ws] };
    await manager.ensureBaseline(task);
    await manager.ensureBaseline(task);
    await manager.beforeEdit(task, ["a.txt"]);
    write(ws, "a.txt", "a1");
    await manager.saveTurn(task, { editedPaths: ["a.txt"] });
    // A command starts, writes a file and is cancelled before its turn's save.
    await manager.ensureBaseline(task);
    write(ws, "built.txt", "made by the command");
    const completion = (await manager.saveCompletion(task))!;
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    expect(fileAt(gitDir, completion.id, "built.txt")).toBe("made by the command");
    expect(fileAt(gitDir, completion.id, "a.txt")).toBe("a1");
  });

  it("a resumed task's completion in a new process holds what changed while no sidecar ran", async () => {
    // Found in a crash test: a command's changes whose turn was never saved (the sidecar was
    // killed), or the person's edits while the task was cancelled, were staged by the resumed
    // process's first scan but left out of its completion, which was the snapshot before them:
    // restoring that completion undid them.
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "a.txt", "a0");
    write(ws, "b.txt", "b0");
    const task = { id: "t1", workspaceRoots: [ws] };
    const first = makeManager(sb);
    await first.ensureBaseline(task);
    await first.beforeEdit(task, ["a.txt"]);
    write(ws, "a.txt", "a1");
    await first.saveTurn(task, { editedPaths: ["a.txt"] });
    await first.stop();
    write(ws, "b.txt", "b1, changed while no sidecar ran");

    const resumed = makeManager(sb);
    const completion = (await resumed.saveCompletion(task))!;
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    expect(fileAt(gitDir, completion.id, "b.txt")).toBe("b1, changed while no sidecar ran");
    expect(fileAt(gitDir, completion.id, "a.txt")).toBe("a1");
    expect((await resumed.compare("t1", completion.id)).files).toEqual([]);
  });

  it("a later baseline with files changed since the last snapshot holds them, and an unchanged one reuses the snapshot", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    for (let i = 0; i < 50; i++) write(ws, `d${i % 5}/f${i}.txt`, `v0 ${i}`);
    const first = makeManager(sb);
    const t1 = (await first.ensureBaseline({ id: "t1", workspaceRoots: [ws] }))!;
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");

    const second = makeManager(sb);
    const t2 = (await second.ensureBaseline({ id: "t2", workspaceRoots: [ws] }))!;
    expect(t2.tree).toBe(t1.tree);
    expect(t2.reused).toBe(true);

    write(ws, "d1/f1.txt", "v1 changed");
    fs.rmSync(path.join(ws, "d2/f2.txt"));
    write(ws, "new/file.txt", "new");
    const third = makeManager(sb);
    const t3 = (await third.ensureBaseline({ id: "t3", workspaceRoots: [ws] }))!;
    expect(t3.reused).toBe(false);
    expect(fileAt(gitDir, t3.id, "d1/f1.txt")).toBe("v1 changed");
    expect(fileAt(gitDir, t3.id, "d2/f2.txt")).toBeUndefined();
    expect(fileAt(gitDir, t3.id, "new/file.txt")).toBe("new");
    expect(fileAt(gitDir, t3.id, "d3/f3.txt")).toBe("v0 3");
    // The tree is the one git makes of the workspace.
    const written = execFileSync("git", ["--git-dir", gitDir, "write-tree"], {
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_WORK_TREE: ws },
      encoding: "utf8",
    }).trim();
    expect(t3.tree).toBe(written);
  });
});
