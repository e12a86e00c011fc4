/**
 * A checkpoint restore asked of a sidecar that does not run the task is made by the one that
 * does: it stops the run, restores the files and rewinds the conversation it holds, and every
 * window's stream shows it.
 */
import { describe, expect, it } from "vitest";
import { CheckpointKind, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { AskKind, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, readIn, watch } from "./follow-helpers.js";

const scope = scopedSidecars();

describe("a checkpoint restore from a sidecar that does not run the task", () => {
  it("reaches the owner, which restores the files and the conversation while the task waits there", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 2, [
      { text: "Writing.", toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "draft\n" } }] },
      { toolCalls: [{ name: "ask_followup_question", input: { question: "Keep the draft?" } }] },
    ]);
    const [owner, follower] = sidecars;
    await setAutoApproval(owner.clients, { editFiles: true, readFiles: true });
    const { taskId } = await owner.clients.tasks.newTask({ workspaceRoot: workspace, text: "Draft notes", profileId });
    const direct = watch(owner.clients, taskId);
    const followed = watch(follower.clients, taskId);
    await followed.ask(AskKind.FOLLOWUP);
    expect(readIn(workspace, "notes.txt")).toBe("draft\n");

    const { checkpoints } = await follower.clients.checkpoints.listCheckpoints({ taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE);
    expect(baseline).toBeDefined();
    const outcome = await follower.clients.checkpoints.restore({
      taskId,
      checkpointId: baseline!.id,
      mode: RestoreMode.FILES_AND_TASK,
    });
    expect(outcome).toMatchObject({ filesRestored: true, fileError: "", conversationRestored: true });
    expect(readIn(workspace, "notes.txt")).toBeUndefined();

    // The owner stopped the run and rewound: both windows see it on the task's one stream.
    await Promise.all([
      direct.until((e) => e.event.case === "rewound"),
      followed.until((e) => e.event.case === "rewound"),
    ]);
    // Back at its first message, the task is not done: it stopped there, and Resume goes on.
    await followed.status(TaskStatus.INTERRUPTED);
    const view = await follower.clients.tasks.getTask({ taskId });
    expect(view.pendingAsk).toBeUndefined();
    expect(view.messages.map((m) => m.text)).toEqual(["Draft notes"]);
    await Promise.all([direct.stop(), followed.stop()]);
  });
});
