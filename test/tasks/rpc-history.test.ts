import * as fs from "node:fs";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { TaskSort } from "../../core/src/gen/dline/v1/history_pb.js";
import { DeleteMode, MessageRole, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { uiMessage } from "../../core/src/tasks/message-store.js";
import type { TaskStorage } from "../../core/src/tasks/task-storage.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { openStorage, taskEnv, type TaskEnv } from "./helpers.js";
import { nth } from "../helpers/items.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function seeded(count: number): Promise<{ env: TaskEnv; local: TaskStorage; sidecar: RunningSidecar }> {
  const env = taskEnv();
  const local = await openStorage(env);
  cleanup.push(() => local.close());
  for (let i = 0; i < count; i++) {
    const t = local.store.create({
      id: `task-${String(i).padStart(3, "0")}`,
      title: i % 2 ? `Odd task ${i}` : `Even task ${i}`,
      taskText: i === 3 ? "migrate the payment gateway" : "",
      workspaceRoot: i % 3 === 0 ? "/ws/three" : "/ws/other",
      createdAt: 1_000_000 + i * 1000,
      cost: (i * 7) % 5,
    });
    t.files.messages.append(uiMessage({ id: "m1", role: "user", kind: "text", text: `prompt ${i}`, time: 5 }));
    t.files.messages.append(uiMessage({ id: "m2", role: "assistant", text: "answer" }));
    t.release();
  }
  const sidecar = await startSidecar({ roots: env.roots });
  cleanup.push(() => sidecar.stop());
  return { env, local, sidecar };
}

async function codeOf(p: Promise<unknown>): Promise<Code | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return ConnectError.from(e).code;
  }
}

describe("HistoryService and TaskService storage RPCs (real sidecar)", () => {
  it("lists with paging, sorting, workspace, favourite and text filters", async () => {
    const { sidecar } = await seeded(12);
    const h = sidecar.clients.history;
    const ids: string[] = [];
    let pageToken = "";
    do {
      const page = await h.listTasks({ pageSize: 5, pageToken });
      ids.push(...page.tasks.map((t) => t.id));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(ids).toEqual(Array.from({ length: 12 }, (_, i) => `task-${String(11 - i).padStart(3, "0")}`));
    const oldest = await h.listTasks({ sort: TaskSort.OLDEST, pageSize: 2 });
    expect(oldest.tasks.map((t) => t.id)).toEqual(["task-000", "task-001"]);
    const costly = await h.listTasks({ sort: TaskSort.MOST_EXPENSIVE, pageSize: 3 });
    expect(costly.tasks.map((t) => t.cost)).toEqual([4, 4, 3]);
    const ws = await h.listTasks({ workspaceRoot: "/ws/three" });
    expect(ws.tasks.map((t) => t.id)).toEqual(["task-009", "task-006", "task-003", "task-000"]);
    const search = await h.listTasks({ query: "payment" });
    expect(search.tasks.map((t) => t.id)).toEqual(["task-003"]);
    expect(search.tasks[0]).toMatchObject({
      title: "Odd task 3",
      workspaceRoot: "/ws/three",
      status: TaskStatus.COMPLETED,
      source: "dline",
    });
    await h.setFavorite({ taskId: "task-004", favorite: true });
    expect((await h.listTasks({ favoritesOnly: true })).tasks.map((t) => t.id)).toEqual(["task-004"]);
    expect(await codeOf(h.listTasks({ pageToken: "bogus!" }))).toBe(Code.InvalidArgument);
    expect(await codeOf(h.setFavorite({ taskId: "no-such-task", favorite: true }))).toBe(Code.NotFound);
    expect(await codeOf(h.setFavorite({ taskId: "../etc", favorite: true }))).toBe(Code.InvalidArgument);
  });

  it("GetTask returns the summary and messages; a task this test process owns shows its pid and cannot be deleted", async () => {
    const { local, sidecar } = await seeded(2);
    const got = await sidecar.clients.tasks.getTask({ taskId: "task-001" });
    expect(got.task?.id).toBe("task-001");
    expect(got.messages.map((m) => [m.id, m.role, m.text])).toEqual([
      ["m1", MessageRole.USER, "prompt 1"],
      ["m2", MessageRole.ASSISTANT, "answer"],
    ]);
    expect(nth(got.messages, 0, "message").time).toBe(5n);
    expect(got.ownerPid).toBe(0);
    expect(await codeOf(sidecar.clients.tasks.getTask({ taskId: "missing" }))).toBe(Code.NotFound);
    expect(await codeOf(sidecar.clients.tasks.getTask({ taskId: "" }))).toBe(Code.InvalidArgument);

    const held = local.store.openForWrite("task-000");
    cleanup.push(async () => held.release());
    expect((await sidecar.clients.tasks.getTask({ taskId: "task-000" })).ownerPid).toBe(process.pid);
    const err = await sidecar.clients.tasks
      .deleteTasks({ taskIds: ["task-000"], mode: DeleteMode.SELECTED })
      .catch((e) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((err as ConnectError).rawMessage).toContain(String(process.pid));
  });

  it("DeleteTasks: selected, all except favourites, all; bad requests are invalid_argument", async () => {
    const { env, sidecar } = await seeded(6);
    const t = sidecar.clients.tasks;
    expect(await codeOf(t.deleteTasks({ mode: DeleteMode.SELECTED }))).toBe(Code.InvalidArgument);
    expect(await codeOf(t.deleteTasks({ mode: DeleteMode.UNSPECIFIED }))).toBe(Code.InvalidArgument);
    expect(await codeOf(t.deleteTasks({ mode: DeleteMode.ALL, taskIds: ["task-000"] }))).toBe(Code.InvalidArgument);
    expect(
      (await t.deleteTasks({ taskIds: ["task-000", "task-001"], mode: DeleteMode.SELECTED })).deletedTaskIds,
    ).toEqual(["task-000", "task-001"]);
    expect(fs.existsSync(env.layout.task("task-000").dir)).toBe(false);
    await sidecar.clients.history.setFavorite({ taskId: "task-005", favorite: true });
    const r = await t.deleteTasks({ mode: DeleteMode.ALL_EXCEPT_FAVORITES });
    expect(r.deletedTaskIds.sort()).toEqual(["task-002", "task-003", "task-004"]);
    expect((await sidecar.clients.history.listTasks({})).tasks.map((x) => x.id)).toEqual(["task-005"]);
    // The checkpoint owner's hook runs on "everything": the whole checkpoints folder goes.
    fs.mkdirSync(`${env.layout.checkpointsDir}/some-workspace`, { recursive: true });
    fs.writeFileSync(`${env.layout.checkpointsDir}/some-workspace/HEAD`, "ref: x");
    await t.deleteTasks({ mode: DeleteMode.ALL });
    expect((await sidecar.clients.history.listTasks({})).tasks).toEqual([]);
    expect(fs.existsSync(`${env.layout.checkpointsDir}/some-workspace`)).toBe(false);
    expect(fs.readdirSync(env.layout.tasksDir).filter((n) => n.startsWith("task-"))).toEqual([]);
  });

  it("WatchHistory streams changes made by another process, and resumes after a seq without loss", async () => {
    const { local, sidecar } = await seeded(1);
    const abort = new AbortController();
    const received: { changed: string[]; removed: string[]; seq: bigint }[] = [];
    const stream = (async () => {
      try {
        for await (const n of sidecar.clients.history.watchHistory({}, { signal: abort.signal })) {
          received.push({ changed: n.changedTaskIds, removed: n.removedTaskIds, seq: n.seq });
        }
      } catch (e) {
        if (ConnectError.from(e).code !== Code.Canceled) throw e;
      }
    })();
    await sidecar.clients.history.listTasks({}); // the stream is up once the storage answered
    await new Promise((r) => setTimeout(r, 200));
    local.history.put({ id: "from-test-process", title: "written elsewhere" }); // another process writes
    await expect.poll(() => received.flatMap((r) => r.changed), { timeout: 10_000 }).toContain("from-test-process");
    await sidecar.clients.history.setFavorite({ taskId: "task-000", favorite: true });
    await expect.poll(() => received.flatMap((r) => r.changed), { timeout: 10_000 }).toContain("task-000");
    const resumeAfter = nth(received, 0, "received event").seq;
    abort.abort();
    await stream;

    local.history.remove(["from-test-process"]);
    const resumed = sidecar.clients.history.watchHistory(
      { afterSeq: resumeAfter },
      { signal: AbortSignal.timeout(5000) },
    );
    const first = await resumed[Symbol.asyncIterator]().next();
    expect(first.value?.changedTaskIds).toEqual(["task-000"]);
    expect(first.value?.removedTaskIds).toEqual(["from-test-process"]);
  });

  it("an open WatchHistory stream does not hold the sidecar up when it stops", async () => {
    const { sidecar } = await seeded(1);
    let ended = false;
    const stream = (async () => {
      try {
        for await (const _ of sidecar.clients.history.watchHistory({})) {
          // no changes expected
        }
      } catch {
        // the connection may be cut instead of ended cleanly; either way the stream is over
      }
      ended = true;
    })();
    await sidecar.clients.history.listTasks({});
    await new Promise((r) => setTimeout(r, 100));
    expect(ended).toBe(false);
    expect(await sidecar.stop()).toBe(0);
    await stream;
    expect(ended).toBe(true);
  });
});
