/**
 * A file restore, and the Undo of one, made in one window is told to every window that follows
 * the task (its own sidecar or another one): a `files_restored` event on the task's stream, after
 * which a window lists the checkpoints again and shows which one the files are restored to.
 * Before, an Undo told nobody, and another window showed "Checkpoint (restored)" for good.
 * Real sidecar processes, scripted model server.
 */
import { describe, expect, it } from "vitest";
import { CheckpointKind, EditMessageMode, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import type { DlineClients } from "../../core/src/client/index.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, readIn, watch } from "./follow-helpers.js";

const scope = scopedSidecars();

type FilesRestored = Extract<TaskEvent["event"], { case: "filesRestored" }>["value"];

const turns = [
  { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "one\n" } }] },
  { toolCalls: [{ name: "attempt_completion", input: { result: "Wrote notes.txt." } }] },
  { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "two\n" } }] },
  { toolCalls: [{ name: "attempt_completion", input: { result: "Changed notes.txt." } }] },
];

/** The kinds of the checkpoints a window shows as "restored". */
async function restoredKinds(clients: DlineClients, taskId: string): Promise<CheckpointKind[]> {
  const { checkpoints } = await clients.checkpoints.listCheckpoints({ taskId });
  return checkpoints.filter((c) => c.restored && c.kind !== CheckpointKind.BEFORE_RESTORE).map((c) => c.kind);
}

describe("a file restore and its Undo, told to every window of the task", () => {
  it("Restore Files Only, then Undo, in one sidecar: the other sidecar's stream says both", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 2, turns.slice(0, 2));
    const [a, b] = sidecars;
    await setAutoApproval(a.clients, { editFiles: true, readFiles: true });
    const { taskId } = await a.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    const inA = watch(a.clients, taskId);
    await inA.status(TaskStatus.COMPLETED);
    const inB = watch(b.clients, taskId);
    await inB.status(TaskStatus.COMPLETED);
    const restored = (after: bigint) =>
      Promise.all(
        [inA, inB].map(
          async (w) =>
            (await w.until((e) => e.event.case === "filesRestored" && e.seq > after)).event.value as FilesRestored,
        ),
      );

    const { checkpoints } = await a.clients.checkpoints.listCheckpoints({ taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    const res = await a.clients.checkpoints.restore({ taskId, checkpointId: baseline.id, mode: RestoreMode.FILES });
    expect(res.filesRestored).toBe(true);
    expect(readIn(workspace, "notes.txt")).toBeUndefined();
    const [toldA, toldB] = await restored(0n);
    expect(toldB).toMatchObject({ checkpointId: baseline.id, undoCheckpointId: res.undoCheckpointId, undo: false });
    expect(toldA).toEqual(toldB);
    expect(await restoredKinds(b.clients, taskId)).toEqual([CheckpointKind.BASELINE]);

    const seq = inB.lastSeq();
    const undo = await a.clients.checkpoints.restore({
      taskId,
      checkpointId: res.undoCheckpointId,
      mode: RestoreMode.FILES,
    });
    expect(undo.filesRestored).toBe(true);
    expect(readIn(workspace, "notes.txt")).toBe("one\n");
    const [, undoneB] = await restored(seq);
    expect(undoneB).toMatchObject({ checkpointId: res.undoCheckpointId, undo: true });
    // What B reads on that event: no checkpoint is "restored" any more.
    expect(await restoredKinds(b.clients, taskId)).toEqual([]);
    await Promise.all([inA.stop(), inB.stop()]);
  });

  it("Restore All of an edited message, then Undo, in one sidecar: the other sidecar's stream says both", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 2, turns);
    const [a, b] = sidecars;
    await setAutoApproval(a.clients, { editFiles: true, readFiles: true });
    const { taskId } = await a.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    const inA = watch(a.clients, taskId);
    await inA.status(TaskStatus.COMPLETED);
    await a.clients.tasks.sendMessage({ taskId, text: "Now change it" });
    await inA.completedAfter(inA.lastSeq());
    expect(readIn(workspace, "notes.txt")).toBe("two\n");
    const inB = watch(b.clients, taskId);
    await inB.status(TaskStatus.COMPLETED);

    const message = (await b.clients.tasks.getTask({ taskId })).messages.find((m) => m.text === "Now change it")!;
    const all = await a.clients.checkpoints.editMessage({
      taskId,
      messageId: message.id,
      text: "Now change it, please",
      mode: EditMessageMode.RESTORE_ALL,
    });
    expect(all.restored).toBe(true);
    expect(readIn(workspace, "notes.txt")).toBe("one\n");
    const told = await inB.until((e) => e.event.case === "filesRestored");
    expect(told.event.value).toMatchObject({ checkpointId: all.checkpointId, undo: false });

    const seq = inB.lastSeq();
    await a.clients.checkpoints.restore({ taskId, checkpointId: all.undoCheckpointId, mode: RestoreMode.FILES });
    expect(readIn(workspace, "notes.txt")).toBe("two\n");
    const undone = await inB.until((e) => e.event.case === "filesRestored" && e.seq > seq);
    expect(undone.event.value).toMatchObject({ checkpointId: all.undoCheckpointId, undo: true });
    expect(await restoredKinds(b.clients, taskId)).toEqual([]);
    await Promise.all([inA.stop(), inB.stop()]);
  });
});
