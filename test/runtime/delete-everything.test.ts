/**
 * Delete Everything right after a task in a workspace of some thousands of files, whose
 * baseline checkpoint starts without anyone waiting, while an editor keeps reading the task's
 * checkpoints: the checkpoints folder is gone when DeleteTasks answers and stays gone
 * (checkpoint work under way finishes before the folder is removed, and reads do not create a
 * repository). Real sidecar binary, real git, scripted model.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DeleteMode, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace } from "./harness.js";
import { lastOf } from "../helpers/items.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

describe("Delete Everything and checkpoints in flight", () => {
  it("removes the checkpoints folder for good, with checkpoint work possibly under way", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const { clients } = sidecar;
    const { server, profileId } = await configureModel(clients, "openai", { turns: [{ text: "Hi." }] });
    cleanups.push(() => server.stop());
    // Enough files that the baseline may still be running when the one-turn task has ended.
    const files: Record<string, string> = {};
    for (let i = 0; i < 6000; i++) files[`src/dir${i % 60}/file${i}.txt`] = `content ${i}\n`;
    const workspace = makeWorkspace(sidecar.roots.base, files);
    const { documentsRoot } = await clients.system.initialize({ clientName: "test", workspaceRoots: [workspace] });
    const checkpointsDir = path.join(documentsRoot, "checkpoints");

    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "Say hi", profileId });
    const events = await followUntilDone(clients, taskId, async () => {});
    const last = lastOf(events, "event");
    expect(last.event.case === "statusChanged" && last.event.value.status).toBe(TaskStatus.COMPLETED);
    expect(fs.existsSync(checkpointsDir)).toBe(true);

    // An editor keeps asking for the task's checkpoints while it is being deleted (the chat's
    // refresh after the last checkpoint): those reads must not bring the folder back.
    let reading = true;
    const reads = (async () => {
      let n = 0;
      while (reading) {
        await clients.checkpoints.listCheckpoints({ taskId }).catch(() => undefined);
        await clients.checkpoints.getStatus({ workspaceRoot: workspace }).catch(() => undefined);
        n++;
      }
      return n;
    })();
    const { deletedTaskIds } = await clients.tasks.deleteTasks({ mode: DeleteMode.ALL });
    expect(deletedTaskIds).toEqual([taskId]);
    await new Promise((r) => setTimeout(r, 300));
    reading = false;
    expect(await reads).toBeGreaterThan(0);
    expect(fs.existsSync(checkpointsDir)).toBe(false);
    // Nothing writes it again afterwards.
    await new Promise((r) => setTimeout(r, 1500));
    expect(fs.existsSync(checkpointsDir)).toBe(false);
  });
});
