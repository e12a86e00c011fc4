// A new task's edits wait for its baseline (a scan of a large workspace takes a while): the
// baseline holds every file as it was before the task, and nothing is lost if the run ends first.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { holdGitStatus, releaseHeldGits } from "./fixtures/held-git.js";
import { makeManager, makeSandbox, read, settlesWithin, until, write, type Sandbox } from "./helpers.js";

/** A file of a checkpoint, read with the system git from the shadow repository. */
function fileAt(sb: Sandbox, commit: string, rel: string): string | undefined {
  try {
    return execFileSync(
      "git",
      ["--git-dir", path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git"), "show", `${commit}:${rel}`],
      {
        env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
  } catch {
    return undefined;
  }
}

/**
 * A workspace with an earlier task's checkpoints (the shadow repository exists, as for every
 * later task), then changed by hand: what the next baseline must hold.
 */
async function laterTaskWorkspace(): Promise<Sandbox> {
  const sb = makeSandbox();
  write(sb.workspace, "src/app.txt", "first version\n");
  write(sb.workspace, "src/keep.txt", "untouched\n");
  write(sb.workspace, "build/out.txt", "generated\n");
  const earlier = makeManager(sb);
  const task = { id: "earlier", workspaceRoots: [sb.workspace] };
  await earlier.ensureBaseline(task);
  await earlier.saveCompletion(task);
  await earlier.stop();
  write(sb.workspace, "src/app.txt", "changed by hand before the task\n");
  return sb;
}

/**
 * A new task's baseline started in `sb` by a new manager (a new process) whose `git status` is
 * held: the scan is under way until the test releases it.
 */
async function baselineHeldMidScan(sb: Sandbox, taskId: string) {
  const held = holdGitStatus(sb.base);
  const manager = makeManager(sb, { env: { ...sb.env, PATH: held.path } });
  const task = { id: taskId, workspaceRoots: [sb.workspace] };
  const baseline = manager.ensureBaseline(task);
  await until(held.holding);
  return { held, manager, task, baseline };
}

afterEach(() => releaseHeldGits());

describe("edits while a new task's baseline is taken", () => {
  // They once went ahead with the file's content kept in memory for the baseline: a run that
  // ended before the baseline was saved (Ctrl-C or a kill during a first baseline's scan of
  // babel, which takes seconds; a full disk) lost what the file held before the edit for good,
  // and the task had no checkpoint. As the checkpoints' spec says, they wait for the baseline.
  it("wait for the scan, and the baseline holds each file as it was before the edit", async () => {
    const sb = await laterTaskWorkspace();
    const { held, manager, task, baseline } = await baselineHeldMidScan(sb, "later");

    const edit = manager.beforeEdit(task, ["src/app.txt", "build/out.txt"]);
    expect(await settlesWithin(edit, 500)).toBe(false);
    held.release();
    await edit;
    write(sb.workspace, "src/app.txt", "written by the tool\n");
    write(sb.workspace, "build/out.txt", "rebuilt by the tool\n");
    const base = await baseline;
    expect(base?.kind).toBe("baseline");
    expect(fileAt(sb, base!.id, "src/app.txt")).toBe("changed by hand before the task\n");
    expect(fileAt(sb, base!.id, "src/keep.txt")).toBe("untouched\n");

    const turn = await manager.saveTurn(task, { editedPaths: ["src/app.txt", "build/out.txt"] });
    expect(fileAt(sb, turn!.id, "src/app.txt")).toBe("written by the tool\n");
    const restored = await manager.restore("later", base!.id, "files");
    expect(restored.fileError).toBe("");
    expect(restored.deletedPaths).toEqual([]);
    expect(read(sb.workspace, "src/app.txt")).toBe("changed by hand before the task\n");
    // Left out of scans (build/), its pre-image kept when the edit came: a restore brings it back.
    expect(read(sb.workspace, "build/out.txt")).toBe("generated\n");
    await manager.stop();
  });

  it("a process stopped while an edit waits for the baseline leaves the file as it was, and the next task's baseline holds it", async () => {
    const sb = await laterTaskWorkspace();
    const { manager, task } = await baselineHeldMidScan(sb, "stopped");
    const edit = manager.beforeEdit(task, ["src/app.txt"]);
    expect(await settlesWithin(edit, 500)).toBe(false);
    // The sidecar stops (Ctrl-C, its window closed): the scan is killed, the edit never wrote.
    await manager.stop();
    await edit;
    expect(read(sb.workspace, "src/app.txt")).toBe("changed by hand before the task\n");

    const next = makeManager(sb);
    const nextTask = { id: "next", workspaceRoots: [sb.workspace] };
    const nextBaseline = await next.ensureBaseline(nextTask);
    expect(fileAt(sb, nextBaseline!.id, "src/app.txt")).toBe("changed by hand before the task\n");
    await next.stop();
  });

  it("hold the files as they were in a baseline built from the index (hundreds of files changed by hand)", async () => {
    const sb = await laterTaskWorkspace();
    for (let i = 0; i < 600; i++) write(sb.workspace, `generated/g${i}.txt`, `made by hand ${i}\n`);
    const { held, manager, task, baseline } = await baselineHeldMidScan(sb, "many");
    const edit = manager.beforeEdit(task, ["src/app.txt", "generated/g7.txt"]);
    held.release();
    await edit;
    write(sb.workspace, "src/app.txt", "written by the tool\n");
    write(sb.workspace, "generated/g7.txt", "rewritten by the tool\n");
    const base = await baseline;
    expect(fileAt(sb, base!.id, "src/app.txt")).toBe("changed by hand before the task\n");
    expect(fileAt(sb, base!.id, "generated/g7.txt")).toBe("made by hand 7\n");
    expect(fileAt(sb, base!.id, "generated/g599.txt")).toBe("made by hand 599\n");
    await manager.stop();
  });

  it("an edit through a linked folder: the baseline keeps the link a link", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "real/x.txt", "before the task\n");
    fs.symlinkSync("real", path.join(sb.workspace, "linked"));
    const earlier = makeManager(sb);
    const first = { id: "earlier", workspaceRoots: [sb.workspace] };
    await earlier.ensureBaseline(first);
    await earlier.saveCompletion(first);
    await earlier.stop();

    const { held, manager, task, baseline } = await baselineHeldMidScan(sb, "through-link");
    const edit = manager.beforeEdit(task, ["linked/x.txt"]);
    expect(await settlesWithin(edit, 300)).toBe(false);
    held.release();
    await edit;
    write(sb.workspace, "real/x.txt", "written by the tool\n");
    const base = await baseline;
    const gitDir = path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git");
    const entry = execFileSync("git", ["--git-dir", gitDir, "ls-tree", base!.id, "linked"], { encoding: "utf8" });
    expect(entry).toMatch(/^120000 blob /);
    expect(fileAt(sb, base!.id, "real/x.txt")).toBe("before the task\n");
    await manager.stop();
  });
});

describe("edits while the task's turn saves wait for the repository (another window holds its lock)", () => {
  it("an edit of a file no queued save reads and the newest checkpoint holds goes ahead; one of a file a save reads, a new file or a left-out one waits", async () => {
    const sb = await laterTaskWorkspace();
    write(sb.workspace, "src/second.txt", "second before the task\n");
    // A stale time no test reaches: the folder made by hand below is a live holder's lock.
    const manager = makeManager(sb, { lockStaleMs: 600_000 });
    const task = { id: "held", workspaceRoots: [sb.workspace] };
    const base = await manager.ensureBaseline(task);

    await manager.beforeEdit(task, ["src/app.txt"]);
    write(sb.workspace, "src/app.txt", "turn 1\n");
    const lockDir = path.join(sb.layout.checkpointRepoDir(sb.workspace), "repo.lock");
    // Taken as soon as this process's own background work (packing) lets go of it.
    let taken = false;
    await until(() => {
      try {
        if (!taken) fs.mkdirSync(lockDir);
        return (taken = true);
      } catch {
        return false;
      }
    });
    const turn1 = manager.saveTurn(task, { editedPaths: ["src/app.txt"] });

    // Turn 2 edits another file the baseline holds: turn 1's save keeps what the baseline has of it.
    expect(await settlesWithin(manager.beforeEdit(task, ["src/second.txt"]), 5000)).toBe(true);
    write(sb.workspace, "src/second.txt", "turn 2\n");
    const turn2 = manager.saveTurn(task, { editedPaths: ["src/second.txt"] });
    // Turn 3: app.txt is read by turn 1's save; new.txt is in no checkpoint; build/ is left out
    // of scans (its pre-image must be kept): each waits for the saves.
    const waiting = [["src/app.txt"], ["src/new.txt"], ["build/out.txt"]].map((paths) =>
      manager.beforeEdit(task, paths),
    );
    for (const edit of waiting) expect(await settlesWithin(edit, 300)).toBe(false);
    expect(await settlesWithin(turn1, 0)).toBe(false);

    fs.rmdirSync(lockDir);
    await Promise.all(waiting);
    write(sb.workspace, "src/app.txt", "turn 3\n");
    write(sb.workspace, "src/new.txt", "created\n");
    write(sb.workspace, "build/out.txt", "rebuilt\n");
    const turn3 = await manager.saveTurn(task, { editedPaths: ["src/app.txt", "src/new.txt", "build/out.txt"] });
    const [first, second] = [(await turn1)!, (await turn2)!];
    const files = (id: string) => ["src/app.txt", "src/second.txt", "src/new.txt"].map((p) => fileAt(sb, id, p));
    expect(files(base!.id)).toEqual(["changed by hand before the task\n", "second before the task\n", undefined]);
    expect(files(first.id)).toEqual(["turn 1\n", "second before the task\n", undefined]);
    expect(files(second.id)).toEqual(["turn 1\n", "turn 2\n", undefined]);
    expect(files(turn3!.id)).toEqual(["turn 3\n", "turn 2\n", "created\n"]);

    const restored = await manager.restore("held", base!.id, "files");
    expect(restored.fileError).toBe("");
    expect(restored.deletedPaths).toEqual(["src/new.txt"]);
    expect(["src/app.txt", "src/second.txt", "src/new.txt", "build/out.txt"].map((p) => read(sb.workspace, p))).toEqual(
      ["changed by hand before the task\n", "second before the task\n", undefined, "generated\n"],
    );
    await manager.stop();
  }, 60_000);
});
