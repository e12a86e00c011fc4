import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CheckpointDeletionHook, type CheckpointManager } from "../../core/src/checkpoints/index.js";
import { silentLogger } from "../../core/src/logging/logger.js";
import { makeManager, makeSandbox, read, write, type Sandbox } from "./helpers.js";
import { nth } from "../helpers/items.js";
import { buildDriver, holding, runDriver } from "./driver-process.js";

beforeAll(buildDriver);

function shadowGit(sb: Sandbox, ...args: string[]): string {
  return execFileSync("git", ["--git-dir", path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git"), ...args], {
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    encoding: "utf8",
  });
}

describe("several processes on one shadow repository", () => {
  it("two processes checkpoint the same workspace at once; every checkpoint is intact", async () => {
    const sb = makeSandbox();
    for (let i = 0; i < 50; i++) write(sb.workspace, `src/file-${i}.ts`, `export const v = ${i};\n`);
    const a = runDriver(sb, "task-a", 15, ["a/one.txt", "a/two.txt"]);
    const b = runDriver(sb, "task-b", 15, ["b/one.txt"]);
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.err + rb.err).toBe("");
    expect([ra.code, rb.code]).toEqual([0, 0]);
    const manager = makeManager(sb);
    const listA = await manager.list("task-a");
    const listB = await manager.list("task-b");
    expect(listA.length).toBe(16);
    expect(listB.length).toBe(16);
    // Each turn's snapshot holds that task's content of that turn.
    expect(shadowGit(sb, "show", `${nth(listA, 15, "checkpoint of task a").id}:a/one.txt`)).toBe("task-a turn 15\n");
    expect(shadowGit(sb, "show", `${nth(listB, 7, "checkpoint of task b").id}:b/one.txt`)).toBe("task-b turn 7\n");
    expect(shadowGit(sb, "fsck", "--no-dangling", "--no-progress")).toBe("");
  });

  it("a process killed in the middle of saves leaves nothing that blocks the next save", async () => {
    const sb = makeSandbox();
    for (let i = 0; i < 300; i++) write(sb.workspace, `src/f-${i}.txt`, `content ${i}\n`.repeat(50));
    const files = Array.from({ length: 40 }, (_, i) => `gen/out-${i}.txt`);
    const run = runDriver(sb, "victim", 1000, files);
    // Kill it once it is busy saving.
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (run.output().includes("saved 3 ")) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    run.child.kill("SIGKILL");
    const result = await run.done;
    expect(result.signal).toBe("SIGKILL");
    // Whatever the killed git left behind (index.lock, the repository lock) is recovered.
    const gitDir = path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git");
    fs.writeFileSync(path.join(gitDir, "index.lock"), "");
    const manager = makeManager(sb, { lockStaleMs: 2000 });
    const task = { id: "next", workspaceRoots: [sb.workspace] };
    expect(await manager.ensureBaseline(task)).toBeDefined();
    write(sb.workspace, "src/f-1.txt", "changed after the crash\n");
    const cp = (await manager.saveTurn(task, { editedPaths: ["src/f-1.txt"] }))!;
    expect(cp).toBeDefined();
    expect(shadowGit(sb, "show", `${cp.id}:src/f-1.txt`)).toBe("changed after the crash\n");
    expect(fs.existsSync(path.join(gitDir, "index.lock"))).toBe(false);
  });
});

describe("a killed process's repository lock", () => {
  it("is taken over at once, however long its stale time: the lock names its holder, which is gone", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one\n");
    const run = runDriver(sb, "victim", 0, [], { holdLock: true, lockStaleMs: 600_000 });
    await holding(run);
    const lockDir = path.join(sb.layout.checkpointRepoDir(sb.workspace), "repo.lock");
    expect(fs.existsSync(lockDir)).toBe(true);
    run.child.kill("SIGKILL");
    await run.done;
    expect(fs.existsSync(lockDir)).toBe(true); // left behind
    // A stale time of ten minutes: before, the next save waited for it (this test timed out).
    const manager = makeManager(sb, { lockStaleMs: 600_000 });
    const task = { id: "next", workspaceRoots: [sb.workspace] };
    write(sb.workspace, "b.txt", "made between the tasks\n");
    expect(await manager.ensureBaseline(task)).toMatchObject({ reused: false });
    write(sb.workspace, "a.txt", "two\n");
    const cp = (await manager.saveTurn(task, { editedPaths: ["a.txt"] }))!;
    expect(shadowGit(sb, "show", `${cp.id}:a.txt`)).toBe("two\n");
    await manager.stop();
  }, 60_000);

  it("a holder that runs keeps it: the next checkpoint waits for it, then goes on", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one\n");
    const run = runDriver(sb, "holder", 0, [], { holdLock: true, lockStaleMs: 600_000 });
    await holding(run);
    const manager = makeManager(sb, { lockStaleMs: 600_000 });
    const task = { id: "next", workspaceRoots: [sb.workspace] };
    write(sb.workspace, "a.txt", "two\n");
    let settled = false;
    const baseline = manager.ensureBaseline(task).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(settled).toBe(false);
    // Once the holder is gone, the checkpoint goes on.
    run.child.kill("SIGKILL");
    await run.done;
    const cp = (await baseline)!;
    expect(shadowGit(sb, "show", `${cp.id}:a.txt`)).toBe("two\n");
    await manager.stop();
  }, 60_000);
});

describe("damage and cleanup", () => {
  it("a lock a killed git left on the snapshot branch goes after the next process's first save", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one\n");
    const first = makeManager(sb);
    await first.ensureBaseline({ id: "t1", workspaceRoots: [sb.workspace] });
    await first.stop();
    const branchLock = path.join(
      sb.layout.checkpointRepoDir(sb.workspace),
      ".git",
      "refs",
      "heads",
      "dline-snapshots.lock",
    );
    fs.writeFileSync(branchLock, "");

    const next = makeManager(sb);
    const later = { id: "t2", workspaceRoots: [sb.workspace] };
    expect(await next.ensureBaseline(later)).toBeDefined();
    write(sb.workspace, "a.txt", "two\n");
    const cp = (await next.saveTurn(later, { editedPaths: ["a.txt"] }))!;
    expect(shadowGit(sb, "show", `${cp.id}:a.txt`)).toBe("two\n");
    await next.idle();
    expect(fs.existsSync(branchLock)).toBe(false);
    // A git that needs the branch meanwhile is not blocked either (a restore moves it with fast-import).
    const restored = await next.restore("t2", nth(await next.list("t2"), 0, "checkpoint").id, "files");
    expect(restored.fileError).toBe("");
    expect(fs.readFileSync(path.join(sb.workspace, "a.txt"), "utf8")).toBe("one\n");
    await next.stop();
  });

  it("what killed processes left in a task's ref folder goes after a process's first save of that task", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one\n");
    const first = makeManager(sb);
    const task = { id: "t1", workspaceRoots: [sb.workspace] };
    const cp = (await first.ensureBaseline(task))!;
    await first.idle();
    await first.stop();
    // A process killed between writing a ref's temporary file and renaming it, and a git killed
    // while it held the lock of one of the task's checkpoint refs.
    const gitDir = path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git");
    const leftovers = [
      path.join(gitDir, "refs", "dline", "tasks", "t1", "x.77.tmp"),
      path.join(gitDir, ...cp.ref.split("/")) + ".lock",
    ];
    for (const file of leftovers) fs.writeFileSync(file, "");

    // Another task's saves look only through the folders of that task's refs: a process's
    // first save costs the same with ten tasks in the workspace or ten thousand.
    const next = makeManager(sb);
    const other = { id: "t2", workspaceRoots: [sb.workspace] };
    expect(await next.ensureBaseline(other)).toBeDefined();
    write(sb.workspace, "a.txt", "two\n");
    expect(await next.saveTurn(other, { editedPaths: ["a.txt"] })).toBeDefined();
    await next.idle();
    expect(leftovers.filter((file) => fs.existsSync(file))).toEqual(leftovers);
    await next.stop();

    // t1 continued by a third process: its folder is cleared after its first save there.
    const third = makeManager(sb);
    write(sb.workspace, "a.txt", "three\n");
    expect(await third.saveTurn(task, { editedPaths: ["a.txt"] })).toBeDefined();
    await third.idle();
    expect(leftovers.filter((file) => fs.existsSync(file))).toEqual([]);
    expect((await third.list("t1")).length).toBe(2);
    await third.stop();
  });

  it("a ref lock git reports in another task's folder is cleared, and what needed it goes on", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one\n");
    const first = makeManager(sb);
    const old = { id: "old", workspaceRoots: [sb.workspace] };
    const cp = (await first.ensureBaseline(old))!;
    await first.stop();
    // A git killed while it held the lock of the old task's checkpoint ref.
    const lock = path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git", ...cp.ref.split("/")) + ".lock";
    fs.writeFileSync(lock, "");
    const next = makeManager(sb);
    const task = { id: "t2", workspaceRoots: [sb.workspace] };
    expect(await next.ensureBaseline(task)).toBeDefined();
    await next.idle();
    // Deleting the old task updates its refs with git, which finds the lock: it is cleared and
    // the deletion done.
    await next.deleteTask("old", sb.workspace);
    expect(fs.existsSync(lock)).toBe(false);
    expect(shadowGit(sb, "for-each-ref", "refs/dline/tasks/old/")).toBe("");
    expect((await next.list("t2")).length).toBe(1);
    await next.stop();
  });

  it("a shadow repository with empty object files is set aside and rebuilt, with a clear status", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one");
    const first = makeManager(sb);
    const task = { id: "t1", workspaceRoots: [sb.workspace] };
    await first.ensureBaseline(task);
    await first.saveTurn(task, { commandRan: true });
    // A crash left every object file empty.
    const objects = path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git", "objects");
    for (const dir of fs.readdirSync(objects).filter((d) => /^[0-9a-f]{2}$/.test(d))) {
      for (const f of fs.readdirSync(path.join(objects, dir))) fs.writeFileSync(path.join(objects, dir, f), "");
    }
    const second = makeManager(sb);
    write(sb.workspace, "a.txt", "two");
    const cp = await second.saveTurn(task, { editedPaths: ["a.txt"] });
    expect(cp).toBeDefined();
    const status = await second.status({ workspaceRoot: sb.workspace });
    expect(status.state).toBe("ready");
    expect(status.message).toMatch(
      /damaged and has been rebuilt; earlier checkpoints were kept aside in .*\.git\.corrupt-/,
    );
    const aside = fs
      .readdirSync(sb.layout.checkpointRepoDir(sb.workspace))
      .filter((n) => n.startsWith(".git.corrupt-"));
    expect(aside.length).toBe(1);
    expect(shadowGit(sb, "show", `${cp!.id}:a.txt`)).toBe("two");
    expect((await second.list("t1")).length).toBeGreaterThanOrEqual(1);
  });

  it("deleting a task removes its refs and, once the request is done, its objects; other tasks stay; deleting all removes the folder", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "shared.txt", "shared");
    const manager = makeManager(sb);
    const hook = new CheckpointDeletionHook(manager, silentLogger());
    const a = { id: "task-a", workspaceRoots: [sb.workspace] };
    const b = { id: "task-b", workspaceRoots: [sb.workspace] };
    await manager.ensureBaseline(a);
    write(sb.workspace, "only-a.txt", "unique content of task a");
    const aTurn = (await manager.saveTurn(a, { editedPaths: ["only-a.txt"] }))!;
    fs.rmSync(path.join(sb.workspace, "only-a.txt"));
    await manager.ensureBaseline(b);
    write(sb.workspace, "only-b.txt", "unique content of task b");
    const bTurn = (await manager.saveTurn(b, { editedPaths: ["only-b.txt"] }))!;
    const blobA = shadowGit(sb, "rev-parse", `${aTurn.id}:only-a.txt`).trim();

    await hook.onTaskDeleted("task-a", sb.workspace);
    expect(shadowGit(sb, "for-each-ref", "refs/dline/tasks/task-a/")).toBe("");
    // The coordinator ends each deletion request with onDeletionsFinished: the garbage goes then.
    await hook.onDeletionsFinished();
    expect(() => shadowGit(sb, "cat-file", "-e", blobA)).toThrow();
    expect(shadowGit(sb, "show", `${bTurn.id}:only-b.txt`)).toBe("unique content of task b");
    expect((await manager.list("task-b")).length).toBe(2);

    // Unknown workspace ("" from the task store): found among the shadow repositories.
    await hook.onTaskDeleted("task-b", "");
    expect(shadowGit(sb, "for-each-ref", "refs/dline/tasks/")).toBe("");

    await hook.onAllTasksDeleted();
    expect(fs.existsSync(sb.layout.checkpointsDir)).toBe(false);
    expect(read(sb.workspace, "shared.txt")).toBe("shared");
  });

  it("a restore or save that reaches the repository after the task was deleted writes no ref of it", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one");
    const rows = new Set(["task-a", "task-b"]);
    let deleteDuringRestore = false;
    const manager: CheckpointManager = makeManager(sb, {
      conversation: {
        workspaceRootsOf: async (id) => (rows.has(id) ? [sb.workspace] : undefined),
        taskExists: async (id) => rows.has(id),
        // Asked between reading the checkpoint and taking the repository lock: the deletion
        // (as another sidecar would run it: row first, then the refs) lands right there.
        recordedEditedPaths: async (id) => {
          if (deleteDuringRestore) {
            rows.delete(id);
            await hook.onTaskDeleted(id, sb.workspace);
          }
          return [];
        },
        rewindConversation: async () => {},
        messageInfo: async () => undefined,
      },
    });
    const hook = new CheckpointDeletionHook(manager, silentLogger());
    const a = { id: "task-a", workspaceRoots: [sb.workspace] };
    const baseline = (await manager.ensureBaseline(a))!;
    write(sb.workspace, "a.txt", "two");
    await manager.saveTurn(a, { editedPaths: ["a.txt"] });

    deleteDuringRestore = true;
    await expect(manager.restore("task-a", baseline.id, "files")).rejects.toMatchObject({ code: "not_found" });
    expect(shadowGit(sb, "for-each-ref", "refs/dline/")).not.toContain("task-a");
    expect(read(sb.workspace, "a.txt")).toBe("two");

    // A save of a deleted task is dropped without marking the workspace's checkpoints failed.
    rows.delete("task-b");
    expect(await manager.ensureBaseline({ id: "task-b", workspaceRoots: [sb.workspace] })).toBeUndefined();
    expect(shadowGit(sb, "for-each-ref", "refs/dline/")).not.toContain("task-b");
    expect((await manager.status({ workspaceRoot: sb.workspace })).state).toBe("ready");
  });

  it("the size budget prunes the oldest checkpoints of deleted tasks, then finished ones, never a running task's", async () => {
    const sb = makeSandbox();
    const states: Record<string, "running" | "finished" | "deleted"> = {
      old: "deleted",
      done: "finished",
      live: "running",
    };
    const manager = makeManager(sb, {
      budgetBytes: 1,
      conversation: {
        workspaceRootsOf: async () => [sb.workspace],
        rewindConversation: async () => {},
        messageInfo: async () => undefined,
        taskState: async (id) => states[id] ?? "deleted",
      },
    });
    for (const id of ["old", "done", "live"]) {
      const task = { id, workspaceRoots: [sb.workspace] };
      await manager.ensureBaseline(task);
      for (let i = 0; i < 2; i++) {
        write(sb.workspace, `${id}.txt`, `${id} ${i} `.repeat(1000));
        await manager.saveTurn(task, { editedPaths: [`${id}.txt`] });
      }
      if (id === "done") await manager.saveCompletion(task);
    }
    const live = await manager.list("live");
    const old = await manager.list("old");
    const done = await manager.list("done");
    const removed = await manager.enforceBudget(sb.workspace);
    // A 1-byte budget cannot be met: everything prunable goes, deleted tasks' first, oldest first.
    expect(removed).toEqual([...old, ...done].map((c) => c.id));
    expect(await manager.list("old").catch(() => [])).toEqual([]);
    expect((await manager.list("live")).map((c) => c.id)).toEqual(live.map((c) => c.id));
    expect(shadowGit(sb, "fsck", "--no-dangling", "--no-progress")).toBe("");
  });
});
