import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type DlineError } from "../../core/src/errors.js";
import { createLogger, type Logger } from "../../core/src/logging/logger.js";
import type { TaskDeletionHook } from "../../core/src/tasks/deletion-hooks.js";
import { uiMessage } from "../../core/src/tasks/message-store.js";
import { openTaskStorage, type TaskStorage } from "../../core/src/tasks/task-storage.js";
import { buildChild, deadPid, exited, lineCollector, runChild, taskEnv, type TaskEnv } from "./helpers.js";
import { nth } from "../helpers/items.js";

// What a deletion must never do to the user's other tasks and their checkpoints, and how one cut
// short is finished. The hooks here record what the checkpoint owner would be asked to do.

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

type RecordingHook = TaskDeletionHook & { calls: string[] };

function recordingHook(onTaskDeleted?: (id: string) => Promise<void>): RecordingHook {
  const calls: string[] = [];
  return {
    name: "recorder",
    calls,
    async onTaskDeleted(id, ws) {
      calls.push(`task:${id}:${ws}`);
      await onTaskDeleted?.(id);
    },
    async onAllTasksDeleted() {
      calls.push("all");
    },
    async onDeletionsFinished() {
      calls.push("finished");
    },
  };
}

/** A logger keeping its records: hook failures are only logged. */
function recordingLogger(): { logger: Logger; records: any[] } {
  const records: any[] = [];
  return { records, logger: createLogger({ write: (l) => records.push(JSON.parse(l)), close: () => {} }, "debug") };
}

async function open(env: TaskEnv, hooks: TaskDeletionHook[] = [], logger: Logger = env.logger): Promise<TaskStorage> {
  const s = await openTaskStorage({ layout: env.layout, sqlite: env.sqlite, logger, deletionHooks: hooks });
  cleanup.push(() => s.close());
  return s;
}

function seedTasks(s: TaskStorage, ids: string[]): void {
  for (const id of ids) {
    const t = s.store.create({ id, title: `task ${id}`, workspaceRoot: `/ws/${id}` });
    t.files.messages.append(uiMessage({ id: "m1", text: "hi" }));
    t.release();
  }
}

/** Another sidecar (a separate process) holding the task open, as it does while running it. */
async function runInOtherSidecar(env: TaskEnv, taskId: string): Promise<void> {
  const child = runChild(await buildChild("task-worker"), ["claim", env.layout.roots.documentsRoot, taskId, "run"]);
  cleanup.push(async () => {
    child.kill("SIGKILL");
    await exited(child);
  });
  await lineCollector(child).waitFor((l) => l.some((x) => x.startsWith("claimed")));
}

/** The journal a sidecar killed in the middle of a deletion leaves behind. */
async function journalOfDeadSidecar(env: TaskEnv, taskIds: string[], allTasks: boolean): Promise<void> {
  const pid = await deadPid();
  const entry = { pid, hostname: os.hostname(), at: 1 };
  const journal = {
    version: 1,
    tasks: taskIds.map((taskId) => ({ taskId, workspaceRoot: `/ws/${taskId}`, ...entry })),
    allTasks: allTasks ? entry : null,
  };
  fs.mkdirSync(path.dirname(env.layout.pendingDeletionsJson), { recursive: true });
  fs.writeFileSync(env.layout.pendingDeletionsJson, JSON.stringify(journal));
}

describe("deleting tasks never takes another task's checkpoints", () => {
  it("'delete all' while another sidecar runs a task does not run the all-tasks hooks; the request's garbage is collected", async () => {
    const env = taskEnv();
    const hook = recordingHook();
    const s = await open(env, [hook]);
    seedTasks(s, ["mine", "theirs"]);
    await runInOtherSidecar(env, "theirs");
    const result = await s.deletion.delete("all");
    expect(result).toEqual({ deleted: ["mine"], refused: [expect.objectContaining({ taskId: "theirs" })] });
    expect(hook.calls).toEqual(["task:mine:/ws/mine", "finished"]);
    expect(s.history.list().tasks.map((t) => t.id)).toEqual(["theirs"]);
  });

  it("deleting the last task of the list while another sidecar runs a task it cannot delete is refused, the others go", async () => {
    const env = taskEnv();
    const hook = recordingHook();
    const s = await open(env, [hook]);
    seedTasks(s, ["mine", "theirs"]);
    await runInOtherSidecar(env, "theirs");
    const err = await s.deletion.delete("selected", ["mine", "theirs"]).catch((e: unknown) => e);
    expect((err as DlineError).code).toBe("failed_precondition");
    expect((err as DlineError).message).toContain("Deleted: mine.");
    expect(hook.calls).toEqual(["task:mine:/ws/mine", "finished"]);
  });

  it("'delete all' does not run the all-tasks hooks when a task was created while it ran", async () => {
    const env = taskEnv();
    const other = await open(env);
    let created = false;
    // Another sidecar creates a task while this one is deleting.
    const hook = recordingHook(async () => {
      if (created) return;
      created = true;
      seedTasks(other, ["new"]);
    });
    const s = await open(env, [hook]);
    seedTasks(s, ["old1", "old2"]);
    const result = await s.deletion.delete("all");
    expect(result.deleted.sort()).toEqual(["old1", "old2"]);
    expect(hook.calls).not.toContain("all");
    expect(hook.calls.at(-1)).toBe("finished");
    expect(s.history.list().tasks.map((t) => t.id)).toEqual(["new"]);
    expect(fs.existsSync(env.layout.task("new").messagesDb)).toBe(true);
  });

  it("collects garbage once per request, and runs the all-tasks hooks instead when the last task goes", async () => {
    const env = taskEnv();
    const hook = recordingHook();
    const s = await open(env, [hook]);
    seedTasks(s, ["a", "b", "c"]);
    await s.deletion.delete("selected", ["a", "b"]);
    expect(hook.calls).toEqual(["task:a:/ws/a", "task:b:/ws/b", "finished"]);
    await s.deletion.delete("selected", ["c"]);
    expect(hook.calls.slice(3)).toEqual(["task:c:/ws/c", "all"]);
    expect(fs.existsSync(env.layout.pendingDeletionsJson)).toBe(false);
  });

  it("deleting a task that does not exist deletes nothing and tells no hook, also not that every task is gone", async () => {
    const env = taskEnv();
    const hook = recordingHook();
    const s = await open(env, [hook]);
    expect(await s.deletion.delete("selected", ["ghost"])).toEqual({ deleted: [], refused: [] });
    expect(hook.calls).toEqual(["finished"]);
    seedTasks(s, ["real"]);
    expect(await s.deletion.delete("selected", ["ghost"])).toEqual({ deleted: [], refused: [] });
    expect(hook.calls).toEqual(["finished", "finished"]);
    expect(s.history.list().tasks.map((t) => t.id)).toEqual(["real"]);
  });

  it("'all except favourites' never runs the all-tasks hooks, even when there was no favourite", async () => {
    const env = taskEnv();
    const hook = recordingHook();
    const s = await open(env, [hook]);
    seedTasks(s, ["a", "b"]);
    const result = await s.deletion.delete("all_except_favorites");
    expect(result.deleted.sort()).toEqual(["a", "b"]);
    expect(hook.calls.filter((c) => !c.startsWith("task:"))).toEqual(["finished"]);
  });

  it("an empty selection is refused, saying what to name", async () => {
    const env = taskEnv();
    const s = await open(env);
    const err = await s.deletion.delete("selected").catch((e: unknown) => e);
    expect((err as DlineError).code).toBe("invalid_argument");
    expect((err as DlineError).message).toBe("task_ids is empty: name the tasks to delete.");
  });

  it("a refusal names the owner and says what was deleted, only when something was", async () => {
    const env = taskEnv();
    const s = await open(env);
    seedTasks(s, ["theirs"]);
    await runInOtherSidecar(env, "theirs");
    const err = (await s.deletion.delete("selected", ["theirs"]).catch((e: unknown) => e)) as DlineError;
    expect(err.code).toBe("failed_precondition");
    expect(err.message).toMatch(/pid \d+/);
    expect(err.message).not.toContain("Deleted:");
    const owner = nth((await s.deletion.delete("all")).refused, 0, "refused task").reason;
    expect(err.message).toBe(owner);
  });

  it("a task whose history row is gone is deleted from its folder alone, its workspace unknown to the hooks", async () => {
    const env = taskEnv();
    const hook = recordingHook();
    const s = await open(env, [hook]);
    seedTasks(s, ["t1", "t2"]);
    s.history.remove(["t1"]);
    expect(await s.deletion.delete("selected", ["t1"])).toEqual({ deleted: ["t1"], refused: [] });
    expect(hook.calls).toEqual(["task:t1:", "finished"]);
    expect(fs.existsSync(env.layout.task("t1").dir)).toBe(false);
  });

  it("a hook without a garbage step is fine, and a deletion that went well logs no hook failure", async () => {
    const env = taskEnv();
    const { logger, records } = recordingLogger();
    const calls: string[] = [];
    const minimal: TaskDeletionHook = {
      name: "minimal",
      onTaskDeleted: async (id) => void calls.push(id),
      onAllTasksDeleted: async () => void calls.push("all"),
    };
    const s = await open(env, [minimal], logger);
    seedTasks(s, ["a", "b"]);
    await s.deletion.delete("selected", ["a"]);
    await s.deletion.delete("all");
    expect(calls).toEqual(["a", "b", "all"]);
    expect(records.filter((r) => r.level === "error" || r.level === "warn")).toEqual([]);
  });

  it("keeps going when a hook fails: the other hooks still run and the failure is only logged", async () => {
    const env = taskEnv();
    const failing: TaskDeletionHook = {
      name: "failing",
      onTaskDeleted: async () => {
        throw new Error("task hook broke");
      },
      onAllTasksDeleted: async () => {
        throw new Error("all hook broke");
      },
      onDeletionsFinished: async () => {
        throw new Error("finished hook broke");
      },
    };
    const hook = recordingHook();
    const { logger, records } = recordingLogger();
    const s = await open(env, [failing, hook], logger);
    seedTasks(s, ["a", "b"]);
    expect(await s.deletion.delete("selected", ["a"])).toEqual({ deleted: ["a"], refused: [] });
    expect(await s.deletion.delete("selected", ["b"])).toEqual({ deleted: ["b"], refused: [] });
    expect(hook.calls).toEqual(["task:a:/ws/a", "finished", "task:b:/ws/b", "all"]);
    expect(fs.existsSync(env.layout.pendingDeletionsJson)).toBe(false);
    const failures = records
      .filter((r) => r.level === "error")
      .map(({ msg, hook: name, taskId, error }) => ({ msg, name, taskId, error }));
    expect(failures).toEqual([
      { msg: "deletion hook failed", name: "failing", taskId: "a", error: "task hook broke" },
      {
        msg: "deletion hook failed (after deletions)",
        name: "failing",
        taskId: undefined,
        error: "finished hook broke",
      },
      { msg: "deletion hook failed", name: "failing", taskId: "b", error: "task hook broke" },
      { msg: "deletion hook failed (all tasks)", name: "failing", taskId: undefined, error: "all hook broke" },
    ]);
  });
});

describe("a deletion cut short is finished on the next start", () => {
  it("when the history row was already removed: the folder goes and the hooks hear of it", async () => {
    const env = taskEnv();
    const first = await open(env);
    seedTasks(first, ["t1", "t2"]);
    first.history.remove(["t1"]);
    await journalOfDeadSidecar(env, ["t1"], false);
    const hook = recordingHook();
    const { logger, records } = recordingLogger();
    const s = await open(env, [hook], logger);
    expect(fs.existsSync(env.layout.task("t1").dir)).toBe(false);
    expect(hook.calls).toEqual(["task:t1:/ws/t1", "finished"]);
    expect(records.find((r) => r.msg === "finished interrupted task deletions")).toMatchObject({
      level: "info",
      count: 1,
    });
    expect(s.history.list().tasks.map((t) => t.id)).toEqual(["t2"]);
    expect(fs.existsSync(env.layout.pendingDeletionsJson)).toBe(false);
  });

  it("a journaled task that another sidecar has opened since is left to it, and not counted as finished", async () => {
    const env = taskEnv();
    const first = await open(env);
    seedTasks(first, ["t1", "t2"]);
    await journalOfDeadSidecar(env, ["t1", "t2"], false);
    await runInOtherSidecar(env, "t2");
    const hook = recordingHook();
    const { logger, records } = recordingLogger();
    const s = await open(env, [hook], logger);
    expect(hook.calls).toEqual(["task:t1:/ws/t1", "finished"]);
    expect(records.find((r) => r.msg === "finished interrupted task deletions")).toMatchObject({ count: 1 });
    expect(s.history.list().tasks.map((t) => t.id)).toEqual(["t2"]);
  });

  it("when 'delete everything' was cut after its tasks went: the all-tasks hooks run", async () => {
    const env = taskEnv();
    await journalOfDeadSidecar(env, [], true);
    const hook = recordingHook();
    await open(env, [hook]);
    expect(hook.calls).toEqual(["all"]);
    expect(fs.existsSync(env.layout.pendingDeletionsJson)).toBe(false);
  });

  it("when 'delete everything' was cut in the middle: the rest of its tasks go, then the all-tasks hooks run", async () => {
    const env = taskEnv();
    const first = await open(env);
    seedTasks(first, ["t1", "t2"]);
    await journalOfDeadSidecar(env, ["t1", "t2"], true);
    const hook = recordingHook();
    const s = await open(env, [hook]);
    expect([...hook.calls].sort()).toEqual(["all", "task:t1:/ws/t1", "task:t2:/ws/t2"]);
    expect(hook.calls.at(-1)).toBe("all");
    expect(s.history.count()).toBe(0);
  });

  it("but an interrupted 'delete everything' keeps the checkpoints of tasks made since", async () => {
    const env = taskEnv();
    const first = await open(env);
    seedTasks(first, ["later"]);
    await journalOfDeadSidecar(env, [], true);
    const hook = recordingHook();
    const { logger, records } = recordingLogger();
    const s = await open(env, [hook], logger);
    expect(hook.calls).toEqual(["finished"]);
    expect(records.map((r) => r.msg)).toContain(
      "interrupted deletion of every task ends without removing all checkpoints: tasks were created since",
    );
    expect(s.history.list().tasks.map((t) => t.id)).toEqual(["later"]);
    // The interrupted request is over: the next start does not try again.
    expect(fs.existsSync(env.layout.pendingDeletionsJson)).toBe(false);
  });

  it("a journal of a sidecar that is still alive is left to it", async () => {
    const env = taskEnv();
    const first = await open(env);
    seedTasks(first, ["t1"]);
    const child = runChild(await buildChild("task-worker"), ["claim", env.layout.roots.documentsRoot, "t1", "delete"]);
    cleanup.push(async () => {
      child.kill("SIGKILL");
      await exited(child);
    });
    await lineCollector(child).waitFor((l) => l.some((x) => x.startsWith("claimed")));
    const entry = { pid: child.pid, hostname: os.hostname(), at: 1 };
    fs.writeFileSync(
      env.layout.pendingDeletionsJson,
      JSON.stringify({ version: 1, tasks: [{ taskId: "t1", workspaceRoot: "/ws/t1", ...entry }], allTasks: entry }),
    );
    const hook = recordingHook();
    const s = await open(env, [hook]);
    expect(hook.calls).toEqual([]);
    expect(s.history.list().tasks.map((t) => t.id)).toEqual(["t1"]);
    expect(JSON.parse(fs.readFileSync(env.layout.pendingDeletionsJson, "utf8")).tasks).toHaveLength(1);
  });

  it("a folder that could not be moved away is not reported deleted; the next start removes it", async () => {
    const env = taskEnv();
    const hook = recordingHook();
    const s = await open(env, [hook]);
    seedTasks(s, ["t1", "t2"]);
    // Something that is not a folder stands where deleted task folders go.
    fs.writeFileSync(env.layout.deletingTasksDir, "");
    const err = await s.deletion.delete("selected", ["t1"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as NodeJS.ErrnoException).code).toMatch(/^(EEXIST|ENOTDIR)$/);
    expect(fs.existsSync(env.layout.task("t1").messagesDb)).toBe(true);
    expect(hook.calls).toEqual([]);
    expect(
      JSON.parse(fs.readFileSync(env.layout.pendingDeletionsJson, "utf8")).tasks.map((t: any) => t.taskId),
    ).toEqual(["t1"]);
    await s.close();
    fs.rmSync(env.layout.deletingTasksDir);
    const next = await open(env, [hook]);
    expect(fs.existsSync(env.layout.task("t1").dir)).toBe(false);
    expect(hook.calls).toEqual(["task:t1:/ws/t1", "finished"]);
    expect(next.history.list().tasks.map((t) => t.id)).toEqual(["t2"]);
  });

  it("leftovers in the deleting folder are swept: this process's and dead ones', not a live sidecar's", async () => {
    const env = taskEnv();
    const dead = await deadPid();
    fs.mkdirSync(env.layout.deletingTasksDir, { recursive: true });
    const mine = path.join(env.layout.deletingTasksDir, `a.${process.pid}.aaaaaa`);
    const deadOnes = path.join(env.layout.deletingTasksDir, `b.${dead}.bbbbbb`);
    // pid 1 is alive on every machine.
    const live = path.join(env.layout.deletingTasksDir, `c.1.cccccc`);
    for (const dir of [mine, deadOnes, live]) fs.mkdirSync(path.join(dir, "inner"), { recursive: true });
    await open(env);
    expect(fs.readdirSync(env.layout.deletingTasksDir)).toEqual(["c.1.cccccc"]);
  });
});
