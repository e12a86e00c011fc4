import * as fs from "node:fs";
import * as os from "node:os";
import Database from "better-sqlite3";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { DeleteMode, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { JournalStore } from "../../core/src/tasks/journal-store.js";
import { MessageStore, uiMessage } from "../../core/src/tasks/message-store.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { buildChild, deadPid, exited, lineCollector, openStorage, runChild, taskEnv, type TaskEnv } from "./helpers.js";
import { entry } from "../helpers/items.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function sidecarOn(env: TaskEnv): Promise<RunningSidecar> {
  const s = await startSidecar({ roots: env.roots });
  cleanup.push(() => s.stop());
  return s;
}

async function seed(env: TaskEnv, ids: string[], status?: "running") {
  const local = await openStorage(env);
  for (const id of ids) {
    const t = local.store.create({ id, title: `task ${id}`, workspaceRoot: "/ws", status });
    t.files.messages.append(uiMessage({ id: "m-seed", text: "seed" }));
    t.files.state.write({ seeded: true });
    t.release();
  }
  await local.close();
}

/** Starts a worker, waits until it acknowledged `minAcks` writes, SIGKILLs it; returns the acknowledged ids. */
async function killMidWrite(
  env: TaskEnv,
  mode: "messages" | "messages-buffered" | "journal",
  taskId: string,
  minAcks: number,
): Promise<string[]> {
  const child = runChild(await buildChild("task-worker"), [mode, env.layout.roots.documentsRoot, taskId]);
  const lines = lineCollector(child);
  await lines.waitFor((l) => l.filter((x) => x.startsWith("ack ")).length >= minAcks);
  child.kill("SIGKILL");
  expect(await exited(child)).toBe("SIGKILL");
  return lines.lines.filter((l) => l.startsWith("ack ")).map((l) => l.slice(4));
}

describe("faults", () => {
  it("SIGKILL during message appends: the database opens and no acknowledged message is lost", async () => {
    const env = taskEnv();
    await seed(env, ["t1"]);
    const acked = await killMidWrite(env, "messages", "t1", 400);
    expect(acked.length).toBeGreaterThanOrEqual(400);
    const store = MessageStore.open(env.sqlite, env.layout.task("t1").messagesDb);
    expect(store.countIds(acked)).toBe(acked.length);
    expect(new Database(env.layout.task("t1").messagesDb).pragma("integrity_check", { simple: true })).toBe("ok");
    store.close();
    // The sidecar reads it too, and the dead writer's claim does not block it.
    const sidecar = await sidecarOn(env);
    const got = await sidecar.clients.tasks.getTask({ taskId: "t1" });
    expect(got.ownerPid).toBe(0);
    expect(got.messages.length).toBeGreaterThanOrEqual(acked.length + 1);
  });

  it("SIGKILL during group-committed appends: every message reported committed is there", async () => {
    const env = taskEnv();
    await seed(env, ["t1"]);
    const acked = await killMidWrite(env, "messages-buffered", "t1", 600);
    const store = MessageStore.open(env.sqlite, env.layout.task("t1").messagesDb);
    expect(store.countIds(acked)).toBe(acked.length);
    store.close();
  });

  it("SIGKILL during journal writes: the journal opens with every acknowledged entry, publications included", async () => {
    const env = taskEnv();
    await seed(env, ["t1"]);
    const acked = (await killMidWrite(env, "journal", "t1", 300)).map(Number);
    const journal = JournalStore.open(env.sqlite, env.layout.task("t1").journalDb);
    const seqs = new Set(journal.entries().map((e) => e.seq));
    expect(acked.every((s) => seqs.has(s))).toBe(true);
    const pubs = new Set(journal.publications().map((p) => p.entrySeq));
    expect(acked.every((s) => pubs.has(s))).toBe(true);
    const last = journal.entries().at(-1)!;
    expect(journal.payload(last.payloadId)).toBeDefined();
    journal.close();
  });

  it("SIGKILL during a deletion: the next sidecar finishes it; no half-deleted task is listed", async () => {
    const env = taskEnv();
    const ids = Array.from({ length: 25 }, (_, i) => `d${String(i).padStart(2, "0")}`);
    await seed(env, ids);
    const child = runChild(await buildChild("task-worker"), ["delete", env.layout.roots.documentsRoot]);
    const lines = lineCollector(child);
    await lines.waitFor((l) => l.filter((x) => x.startsWith("deleted")).length >= 3);
    child.kill("SIGKILL");
    await exited(child);
    expect(lines.lines).not.toContain("done");
    expect(fs.existsSync(env.layout.pendingDeletionsJson)).toBe(true);
    // Every listed task is intact (its folder is there) even before recovery.
    const raw = new Database(env.layout.taskHistoryDb, { readonly: true });
    const listed = (raw.prepare("SELECT id FROM tasks").all() as { id: string }[]).map((r) => r.id);
    raw.close();
    expect(listed.length).toBeLessThan(ids.length);
    for (const id of listed) expect(fs.existsSync(env.layout.task(id).messagesDb)).toBe(true);

    const sidecar = await sidecarOn(env);
    expect((await sidecar.clients.history.listTasks({})).tasks).toEqual([]);
    expect(fs.existsSync(env.layout.pendingDeletionsJson)).toBe(false);
    expect(fs.readdirSync(env.layout.tasksDir).filter((n) => /^d\d\d$/.test(n))).toEqual([]);
    expect(fs.readdirSync(env.layout.deletingTasksDir)).toEqual([]);
  });

  it("two sidecars listing, favouriting and deleting at once stay consistent, with no busy error", async () => {
    const env = taskEnv();
    const ids = Array.from({ length: 40 }, (_, i) => `c${String(i).padStart(2, "0")}`);
    await seed(env, ids);
    const [a, b] = await Promise.all([sidecarOn(env), sidecarOn(env)]);
    const keep = ids.slice(0, 20);
    const drop = ids.slice(20);
    const ops: Promise<unknown>[] = [];
    for (const [i, id] of keep.entries()) {
      const s = i % 2 ? a : b;
      ops.push(s.clients.history.setFavorite({ taskId: id, favorite: i % 3 === 0 }));
      ops.push(s.clients.history.listTasks({ pageSize: 10 }));
    }
    for (let i = 0; i < drop.length; i += 4) {
      const chunk = drop.slice(i, i + 4);
      ops.push(a.clients.tasks.deleteTasks({ taskIds: chunk, mode: DeleteMode.SELECTED }));
      ops.push(b.clients.tasks.deleteTasks({ taskIds: chunk, mode: DeleteMode.SELECTED })); // the same tasks, from the other side
      ops.push(b.clients.history.listTasks({ query: "task" }));
    }
    const results = await Promise.allSettled(ops);
    const failures = results.filter((r) => r.status === "rejected").map((r) => ConnectError.from(r.reason));
    expect(failures.map((f) => `${Code[f.code]}: ${f.rawMessage}`)).toEqual([]);
    const [la, lb] = await Promise.all([
      a.clients.history.listTasks({ pageSize: 100 }),
      b.clients.history.listTasks({ pageSize: 100 }),
    ]);
    expect(la.tasks.map((t) => t.id).sort()).toEqual(keep);
    expect(lb.tasks.map((t) => [t.id, t.favorite])).toEqual(la.tasks.map((t) => [t.id, t.favorite]));
    expect(
      la.tasks
        .filter((t) => t.favorite)
        .map((t) => t.id)
        .sort(),
    ).toEqual(keep.filter((_, i) => i % 3 === 0));
    for (const id of drop) expect(fs.existsSync(env.layout.task(id).dir)).toBe(false);
  });

  it("two sidecars starting at once on a fresh folder create the index and import the legacy history once", async () => {
    const env = taskEnv();
    fs.mkdirSync(env.layout.tasksDir, { recursive: true });
    const lines = Array.from({ length: 30 }, (_, i) =>
      JSON.stringify({ id: `legacy-${i}`, ts: 1000 + i, task: `old task ${i}` }),
    );
    fs.writeFileSync(env.layout.legacyTaskHistoryJsonl, lines.join("\n") + "\n");
    const [a, b] = await Promise.all([sidecarOn(env), sidecarOn(env)]);
    const [la, lb] = await Promise.all([
      a.clients.history.listTasks({ pageSize: 100 }),
      b.clients.history.listTasks({ pageSize: 100 }),
    ]);
    expect(la.tasks).toHaveLength(30);
    expect(lb.tasks.map((t) => t.id)).toEqual(la.tasks.map((t) => t.id));
    const raw = new Database(env.layout.taskHistoryDb, { readonly: true });
    expect(raw.prepare("SELECT count(*) AS n FROM changes").get()).toEqual({ n: 30 }); // inserted once, not twice
    raw.close();
  });

  it("restart recovery: a task running when its sidecar died is listed as interrupted; damaged files and rows do not hide others", async () => {
    const env = taskEnv();
    await seed(env, ["ran"], "running");
    await seed(env, ["ok", "badrow", "badfile"]);
    fs.writeFileSync(
      env.layout.task("ran").ownerLock,
      JSON.stringify({ pid: await deadPid(), hostname: os.hostname(), since: 1 }),
    );
    const raw = new Database(env.layout.taskHistoryDb);
    raw.prepare("UPDATE tasks SET created_at = 'not a time' WHERE id = 'badrow'").run();
    raw.close();
    fs.writeFileSync(env.layout.task("badfile").stateJson, '{"torn');
    fs.writeFileSync(env.layout.task("badfile").stateJsonBak, "");
    const sidecar = await sidecarOn(env);
    const before = Object.fromEntries((await sidecar.clients.history.listTasks({})).tasks.map((t) => [t.id, t]));
    expect(Object.keys(before).sort()).toEqual(["badfile", "badrow", "ok", "ran"]);
    expect(entry(before, "ran", "task").status).toBe(TaskStatus.INTERRUPTED);
    expect(entry(before, "badrow", "task").status).toBe(TaskStatus.DAMAGED);
    expect(entry(before, "badrow", "task").damagedReason).toMatch(/created_at/);
    const got = await sidecar.clients.tasks.getTask({ taskId: "badfile" });
    expect(got.task?.status).toBe(TaskStatus.DAMAGED);
    expect(got.task?.damagedReason).toMatch(/state\.json/);
    expect(fs.readFileSync(env.layout.task("badfile").stateJson, "utf8")).toBe('{"torn');
    const after = Object.fromEntries((await sidecar.clients.history.listTasks({})).tasks.map((t) => [t.id, t.status]));
    expect(after).toMatchObject({ ok: TaskStatus.COMPLETED, badfile: TaskStatus.DAMAGED, ran: TaskStatus.INTERRUPTED });
  });
});
