import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type DlineError } from "../../core/src/errors.js";
import type { TaskDeletionHook } from "../../core/src/tasks/deletion-hooks.js";
import { uiMessage } from "../../core/src/tasks/message-store.js";
import { openTaskStorage, type TaskStorage } from "../../core/src/tasks/task-storage.js";
import { buildChild, deadPid, exited, lineCollector, openStorage, runChild, taskEnv, type TaskEnv } from "./helpers.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function storageFor(env: TaskEnv): Promise<TaskStorage> {
  const s = await openStorage(env);
  cleanup.push(() => s.close());
  return s;
}

function recordingHook(): TaskDeletionHook & { calls: string[] } {
  const calls: string[] = [];
  return {
    name: "recorder",
    calls,
    async onTaskDeleted(id, ws) {
      calls.push(`task:${id}:${ws}`);
    },
    async onAllTasksDeleted() {
      calls.push("all");
    },
  };
}

function seedTasks(s: TaskStorage, ids: string[], favorites: string[] = []) {
  for (const id of ids) {
    const t = s.store.create({ id, title: `task ${id}`, workspaceRoot: `/ws/${id}`, favorite: favorites.includes(id) });
    t.files.messages.append(uiMessage({ id: "m1", text: "hi" }));
    t.release();
  }
}

async function claimInChild(env: TaskEnv, taskId: string, purpose = "run") {
  const child = runChild(await buildChild("task-worker"), ["claim", env.layout.roots.documentsRoot, taskId, purpose]);
  cleanup.push(async () => {
    child.kill("SIGKILL");
    await exited(child);
  });
  const lines = lineCollector(child);
  await lines.waitFor((l) => l.some((x) => x.startsWith("claimed")));
  return child;
}

describe("task ownership across processes", () => {
  it("a second process may read but not claim; the error names the owner's pid", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    seedTasks(s, ["t1"]);
    const child = await claimInChild(env, "t1");
    const err = (() => {
      try {
        s.ownership.claim("t1");
      } catch (e) {
        return e as DlineError;
      }
      return undefined;
    })();
    expect(err?.code).toBe("failed_precondition");
    expect(err?.message).toContain(String(child.pid));
    const view = s.store.get("t1");
    expect(view.ownerPid).toBe(child.pid);
    expect(view.messages.map((m) => m.id)).toEqual(["m1"]);
    expect(() => s.store.openForWrite("t1")).toThrow(/pid/);
  });

  it("recovers the claim of a dead owner, and of a torn lock file", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    seedTasks(s, ["t1", "t2"]);
    const lock = env.layout.task("t1").ownerLock;
    fs.writeFileSync(lock, JSON.stringify({ pid: await deadPid(), hostname: os.hostname(), since: 1 }));
    expect(s.ownership.owner("t1")).toBeUndefined();
    const w = s.store.openForWrite("t1");
    expect(JSON.parse(fs.readFileSync(lock, "utf8")).pid).toBe(process.pid);
    w.release();
    expect(fs.existsSync(lock)).toBe(false);
    const torn = env.layout.task("t2").ownerLock;
    fs.writeFileSync(torn, '{"pid": 12');
    fs.utimesSync(torn, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    s.ownership.claim("t2");
    expect(s.ownership.holds("t2")).toBe(true);
    s.ownership.release("t2");
  });
});

describe("task deletion coordinator", () => {
  it("deletes selected tasks: row, folder, hook; the last task going triggers onAllTasksDeleted", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    const hook = recordingHook();
    s.deletion.registerHook(hook);
    seedTasks(s, ["t1", "t2"]);
    expect(await s.deletion.delete("selected", ["t1"])).toEqual({ deleted: ["t1"], refused: [] });
    expect(s.history.get("t1")).toBeUndefined();
    expect(fs.existsSync(env.layout.task("t1").dir)).toBe(false);
    expect(hook.calls).toEqual(["task:t1:/ws/t1"]);
    await s.deletion.delete("selected", ["t2"]);
    expect(hook.calls).toEqual(["task:t1:/ws/t1", "task:t2:/ws/t2", "all"]);
    expect(fs.existsSync(env.layout.pendingDeletionsJson)).toBe(false);
    expect(fs.readdirSync(env.layout.deletingTasksDir)).toEqual([]);
  });

  it("'all except favourites' keeps favourites and does not call onAllTasksDeleted; 'all' does", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    const hook = recordingHook();
    s.deletion.registerHook(hook);
    seedTasks(s, ["a", "b", "c"], ["b"]);
    const r = await s.deletion.delete("all_except_favorites");
    expect(r.deleted.sort()).toEqual(["a", "c"]);
    expect(s.history.list().tasks.map((t) => t.id)).toEqual(["b"]);
    expect(hook.calls).not.toContain("all");
    // A row some other tool wrote with an id that can never be a folder name is removed too.
    const raw = new Database(env.layout.taskHistoryDb);
    raw.prepare("INSERT INTO tasks (id, created_at, updated_at) VALUES ('../bad id', 1, 1)").run();
    raw.close();
    await s.deletion.delete("all");
    expect(s.history.count()).toBe(0);
    expect(hook.calls.at(-1)).toBe("all");
  });

  it("stops a task this sidecar runs before deleting it; refuses one another sidecar owns", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    seedTasks(s, ["mine", "theirs", "free"]);
    const running = s.store.openForWrite("mine");
    const stopped: string[] = [];
    s.ownership.setRunningTaskStopper(async (id) => {
      stopped.push(id);
      running.release();
    });
    await claimInChild(env, "theirs");
    const err = await s.deletion.delete("selected", ["mine", "theirs", "free"]).catch((e: DlineError) => e);
    expect((err as DlineError).code).toBe("failed_precondition");
    expect(stopped).toEqual(["mine"]);
    expect(s.history.list().tasks.map((t) => t.id)).toEqual(["theirs"]);
    expect(fs.existsSync(env.layout.task("theirs").dir)).toBe(true);
    const all = await s.deletion.delete("all");
    expect(all.refused.map((r) => r.taskId)).toEqual(["theirs"]);
  });

  it("a task another sidecar is deleting at the same moment is waited for, not reported as a conflict", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    seedTasks(s, ["both", "other"]);
    const child = await claimInChild(env, "both", "delete");
    const deleting = s.deletion.delete("selected", ["both", "other"]);
    // The other deleter finishes: its row and folder go, then it exits.
    await new Promise((r) => setTimeout(r, 150));
    s.history.remove(["both"]);
    fs.rmSync(env.layout.task("both").dir, { recursive: true });
    child.kill("SIGKILL");
    const result = await deleting;
    expect(result.deleted.sort()).toEqual(["both", "other"]);
    expect(result.refused).toEqual([]);
  });

  it("finishes a deletion journaled by a sidecar that died, on the next start", async () => {
    const env = taskEnv();
    let s = await openStorage(env);
    seedTasks(s, ["t1", "t2", "t3"]);
    await s.close();
    // What a sidecar killed mid-deletion leaves: the journal entry, the row gone, the folder half there.
    const dead = await deadPid();
    fs.writeFileSync(
      env.layout.pendingDeletionsJson,
      JSON.stringify({
        version: 1,
        tasks: [
          { taskId: "t1", workspaceRoot: "/ws/t1", pid: dead, hostname: os.hostname(), at: 1 },
          { taskId: "t2", workspaceRoot: "/ws/t2", pid: dead, hostname: os.hostname(), at: 1 },
        ],
        allTasks: null,
      }),
    );
    fs.mkdirSync(env.layout.deletingTasksDir, { recursive: true });
    fs.renameSync(env.layout.task("t2").dir, path.join(env.layout.deletingTasksDir, `t2.${dead}.abcdef`));
    // t3 was journaled too, but another (live) sidecar has opened it since: it must survive.
    const journal = JSON.parse(fs.readFileSync(env.layout.pendingDeletionsJson, "utf8"));
    journal.tasks.push({ taskId: "t3", workspaceRoot: "/ws/t3", pid: dead, hostname: os.hostname(), at: 1 });
    fs.writeFileSync(env.layout.pendingDeletionsJson, JSON.stringify(journal));
    await claimInChild(env, "t3");
    const hook = recordingHook();
    s = await openTaskStorage({ layout: env.layout, sqlite: env.sqlite, logger: env.logger, deletionHooks: [hook] });
    cleanup.push(() => s.close());
    expect(hook.calls.sort()).toEqual(["task:t1:/ws/t1", "task:t2:/ws/t2"]); // the checkpoint owner hears about it too
    expect(s.history.list().tasks.map((t) => t.id)).toEqual(["t3"]);
    expect(fs.existsSync(env.layout.task("t3").messagesDb)).toBe(true);
    expect(fs.existsSync(env.layout.task("t1").dir)).toBe(false);
    expect(fs.readdirSync(env.layout.deletingTasksDir)).toEqual([]);
    expect(fs.existsSync(env.layout.pendingDeletionsJson)).toBe(false);
  });

  it("invalid ids are refused before they become paths", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    const err = await s.deletion.delete("selected", ["../../etc"]).catch((e: DlineError) => e);
    expect((err as DlineError).code).toBe("invalid_argument");
    const empty = await s.deletion.delete("selected", []).catch((e: DlineError) => e);
    expect((empty as DlineError).code).toBe("invalid_argument");
  });
});

describe("restart recovery", () => {
  it("a task left running or waiting by a dead sidecar reopens as interrupted; a live owner's stays running", async () => {
    const env = taskEnv();
    let s = await openStorage(env);
    seedTasks(s, ["dead-run", "dead-wait", "live-run", "done"]);
    s.history.updateNow("dead-run", { status: "running" });
    s.history.updateNow("dead-wait", { status: "waiting" });
    s.history.updateNow("live-run", { status: "running" });
    await s.close();
    fs.writeFileSync(
      env.layout.task("dead-run").ownerLock,
      JSON.stringify({ pid: await deadPid(), hostname: os.hostname(), since: 1 }),
    );
    await claimInChild(env, "live-run");
    s = await storageFor(env);
    const status = Object.fromEntries(s.history.list().tasks.map((t) => [t.id, t.status]));
    expect(status).toEqual({
      "dead-run": "interrupted",
      "dead-wait": "interrupted",
      "live-run": "running",
      done: "completed",
    });
    // It can be resumed: this sidecar can claim it now.
    const w = s.store.openForWrite("dead-run");
    w.release();
  });
});
