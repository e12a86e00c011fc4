/**
 * A task deleted in one window stays deleted though another window still shows it. The other
 * window's sidecar keeps its copy of the task loaded; a checkpoint status of the task's folder
 * (its next task there) is told to that copy too, and the seqs it hands out were reserved in a
 * file inside the task's folder: written with the folders made on the way, it made the deleted
 * task's folder again, which the next start listed as a damaged task (the soak test's "task ...:
 * expected true to be false"). Real sidecar binaries, one scripted model server.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { makeTestRoots, startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "../runtime/harness.js";

const running: RunningSidecar[] = [];
let server: ModelServerProcess | undefined;
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop().catch(() => {})));
  await server?.stop();
});

async function listedIds(s: RunningSidecar): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let token = ""; ;) {
    const page = await s.clients.history.listTasks({ pageSize: 200, pageToken: token });
    for (const t of page.tasks) ids.add(t.id);
    if (!page.nextPageToken) return ids;
    token = page.nextPageToken;
  }
}

describe("a task deleted in one window", () => {
  it("is not brought back by another window that still showed it", { timeout: 120_000 }, async () => {
    const roots = makeTestRoots("dline-deleted-elsewhere-");
    const workspace = makeWorkspace(roots.base);
    const first = await startSidecar({ roots });
    running.push(first);
    const second = await startSidecar({ roots });
    running.push(second);
    const model = await configureModel(first.clients, "openai", {
      loop: true,
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "out.txt", content: "done\n" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    server = model.server;
    await setAutoApproval(first.clients, { editFiles: true });
    const completed = (status: TaskStatus) => status === TaskStatus.COMPLETED;

    const { taskId: deleted } = await first.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "the task to delete",
      profileId: model.profileId,
    });
    await followUntilDone(first.clients, deleted, undefined, 0n, completed);
    // The second window shows it (its checkpoints), so its sidecar loads it without holding it.
    await second.clients.checkpoints.listCheckpoints({ taskId: deleted });
    await first.clients.tasks.deleteTasks({ taskIds: [deleted], mode: 1 });
    const folder = path.join(roots.docsDir, "tasks", deleted);
    expect(fs.existsSync(folder)).toBe(false);

    // The second window's next task in the same folder: its checkpoints' statuses go to every
    // task of the folder loaded there.
    const { taskId: next } = await second.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "the next task",
      profileId: model.profileId,
    });
    const events = await followUntilDone(second.clients, next, undefined, 0n, completed);
    expect(events.some((e) => e.event.case === "checkpointStatus")).toBe(true);
    expect(fs.existsSync(folder), "the deleted task's folder").toBe(false);

    // And after a restart, it is not listed (as a damaged task) either.
    for (const s of running.splice(0)) await s.stop();
    const after = await startSidecar({ roots });
    running.push(after);
    const listed = await listedIds(after);
    expect(listed.has(next)).toBe(true);
    expect(listed.has(deleted)).toBe(false);
  });
});
