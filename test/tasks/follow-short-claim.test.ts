/**
 * A window follows a task that another process changes and lets go of before the window's
 * sidecar could follow it there: a restore made by a short-lived sidecar (a `dline` run, a
 * window opened and closed). The window's sidecar is stopped (SIGSTOP) for the whole of that
 * other process's life, so it cannot switch to it in time, which is the race at its widest.
 * Before, the window never heard of that restore: its sidecar kept serving its old copy of
 * the task, and the events the other process sent were gone with it. Now the process that
 * lets go of a task leaves its last events in the task's state, and a sidecar that finds its
 * copy older than the task on disk loads it again and sends its subscribers what they missed.
 * Real sidecar processes, scripted model server.
 */
import { describe, expect, it } from "vitest";
import { CheckpointKind, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import type { RunningSidecar } from "../helpers/sidecar.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, readIn, restoredCheckpoints, watch } from "./follow-helpers.js";

const scope = scopedSidecars();

const turns = [
  { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "one\n" } }] },
  { toolCalls: [{ name: "attempt_completion", input: { result: "Wrote notes.txt." } }] },
  { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "two\n" } }] },
  { toolCalls: [{ name: "attempt_completion", input: { result: "Changed notes.txt." } }] },
];

/** Runs `step` in a sidecar of its own, started and stopped while `frozen` is stopped. */
async function whileFrozen(frozen: RunningSidecar, step: (other: RunningSidecar) => Promise<void>) {
  const pid = frozen.process.handshake.pid;
  process.kill(pid, "SIGSTOP");
  try {
    const other = await scope.sidecar(frozen.roots);
    await step(other);
    await other.stop();
  } finally {
    process.kill(pid, "SIGCONT");
  }
}

describe("a task changed by a process that let go of it before the window could follow", () => {
  it("a files-only restore made there reaches the window's stream, and the listing says it", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 1, turns.slice(0, 2));
    const [a] = sidecars;
    await setAutoApproval(a.clients, { editFiles: true, readFiles: true });
    const { taskId } = await a.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    const inA = watch(a.clients, taskId);
    await inA.status(TaskStatus.COMPLETED);
    const seen = inA.lastSeq();

    let undoCheckpointId = "";
    let baselineId = "";
    await whileFrozen(a, async (other) => {
      const { checkpoints } = await other.clients.checkpoints.listCheckpoints({ taskId });
      baselineId = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!.id;
      const res = await other.clients.checkpoints.restore({
        taskId,
        checkpointId: baselineId,
        mode: RestoreMode.FILES,
      });
      expect(res.filesRestored).toBe(true);
      undoCheckpointId = res.undoCheckpointId;
    });
    expect(readIn(workspace, "notes.txt")).toBeUndefined();

    const told = await inA.until((e) => e.event.case === "filesRestored" && e.seq > seen);
    expect(told.event.value).toMatchObject({ checkpointId: baselineId, undoCheckpointId, undo: false });
    expect(await restoredCheckpoints(a.clients, taskId)).toEqual([baselineId]);
    // Told once, in seq order, and the stream goes on: the window's next message runs here.
    expect(inA.events.filter((e) => e.event.case === "filesRestored")).toHaveLength(1);
    const seqs = inA.events.map((e) => e.seq);
    expect([...seqs].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))).toEqual(seqs);
    await inA.stop();
  });

  it("a task-only restore made there: the window's stream cuts the conversation and says where the task stands", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 1, turns);
    const [a] = sidecars;
    await setAutoApproval(a.clients, { editFiles: true, readFiles: true });
    const { taskId } = await a.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    const inA = watch(a.clients, taskId);
    await inA.status(TaskStatus.COMPLETED);
    await a.clients.tasks.sendMessage({ taskId, text: "Now change it" });
    await inA.completedAfter(inA.lastSeq());
    const seen = inA.lastSeq();

    const firstTurnEnd = (await a.clients.checkpoints.listCheckpoints({ taskId })).checkpoints.find(
      (c) => c.kind === CheckpointKind.COMPLETION,
    )!;
    await whileFrozen(a, async (other) => {
      await other.clients.checkpoints.restore({ taskId, checkpointId: firstTurnEnd.id, mode: RestoreMode.TASK });
    });

    const rewound = await inA.until((e) => e.event.case === "rewound" && e.seq > seen);
    expect(rewound.event.value).toMatchObject({ afterMessageId: firstTurnEnd.messageId });
    const status = await inA.until((e) => e.event.case === "statusChanged" && e.seq > rewound.seq);
    expect(status.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
    const task = await a.clients.tasks.getTask({ taskId });
    expect(task.messages.some((m) => m.text === "Now change it")).toBe(false);
    expect(readIn(workspace, "notes.txt")).toBe("two\n");
    await inA.stop();
  });
});
