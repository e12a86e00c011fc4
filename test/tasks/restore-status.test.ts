/**
 * After Restore Task Only, the task stands where its conversation now ends: completed only when
 * that is its completion; earlier, it stopped part-way and Resume goes on from there. Real
 * sidecar process, scripted model server.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { CheckpointKind, EditMessageMode, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, readIn, watch } from "./follow-helpers.js";

const scope = scopedSidecars();
const complete = (result: string) => ({ toolCalls: [{ name: "attempt_completion", input: { result } }] });

describe("the task's status after Restore Task Only", () => {
  it("is completed at its completion, interrupted before it, and Resume goes on from the restored point", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 1, [
      { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "one\n" } }] },
      complete("Wrote notes.txt."),
      complete("Went on from the restored point."),
    ]);
    const [editor] = sidecars;
    await setAutoApproval(editor.clients, { editFiles: true, readFiles: true });
    const { taskId } = await editor.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    const events = watch(editor.clients, taskId);
    await events.status(TaskStatus.COMPLETED);
    const status = async () => (await editor.clients.tasks.getTask({ taskId })).task?.status;

    const { checkpoints } = await editor.clients.checkpoints.listCheckpoints({ taskId });
    const of = (kind: CheckpointKind) => checkpoints.find((c) => c.kind === kind)!;
    const restoreTask = (checkpointId: string) =>
      editor.clients.checkpoints.restore({ taskId, checkpointId, mode: RestoreMode.TASK });
    const kinds = async () => (await editor.clients.tasks.getTask({ taskId })).messages.map((m) => m.kind);

    // At the completion: done.
    expect(await restoreTask(of(CheckpointKind.COMPLETION).id)).toMatchObject({
      conversationRestored: true,
      filesRestored: false,
    });
    expect((await kinds()).at(-1)).toBe("completion");
    expect(await status()).toBe(TaskStatus.COMPLETED);
    // After the write's turn, before the completion: stopped part-way.
    await restoreTask(of(CheckpointKind.TURN).id);
    expect(await kinds()).toEqual(["text", "tool"]);
    expect(await status()).toBe(TaskStatus.INTERRUPTED);
    // The completion's checkpoint went with its message: no longer listed, nor restored or compared.
    const listed = async () =>
      (await editor.clients.checkpoints.listCheckpoints({ taskId })).checkpoints.map((c) => c.kind);
    expect(await listed()).toEqual([CheckpointKind.BASELINE, CheckpointKind.TURN]);
    const gone = of(CheckpointKind.COMPLETION).id;
    // One call at a time: a call made before the loop reached it could fail unhandled meanwhile.
    for (const attempt of [
      () => restoreTask(gone),
      () => editor.clients.checkpoints.restore({ taskId, checkpointId: gone, mode: RestoreMode.FILES }),
      () => editor.clients.checkpoints.compare({ taskId, checkpointId: gone }),
    ]) {
      const err = await attempt().then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(err?.code).toBe(Code.NotFound);
      expect(err?.rawMessage).toContain("a restore of the task removed its messages");
    }
    await restoreTask(of(CheckpointKind.BASELINE).id);
    expect((await editor.clients.tasks.getTask({ taskId })).messages.map((m) => m.text)).toEqual(["Write notes"]);
    expect(await status()).toBe(TaskStatus.INTERRUPTED);
    expect(readIn(workspace, "notes.txt")).toBe("one\n"); // task only: the files stay
    expect(await listed()).toEqual([CheckpointKind.BASELINE]);

    await editor.clients.tasks.resume({ taskId });
    await events.until(
      (e) =>
        e.event.case === "statusChanged" &&
        e.event.value.status === TaskStatus.COMPLETED &&
        e.seq > events.events.findLast((x) => x.event.case === "rewound")!.seq,
    );
    const resumed = await editor.clients.tasks.getTask({ taskId });
    expect(resumed.messages.at(-1)?.text).toBe("Went on from the restored point.");
    await events.stop();
  });

  it("a task waiting for an approval, restored (files and task) from another window: interrupted, as stored and as streamed, not cancelled", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 3, [
      { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "one\n" } }] },
      complete("Wrote notes.txt."),
    ]);
    const [owner, other, fresh] = sidecars;
    const { taskId } = await owner.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    const events = watch(owner.clients, taskId);
    await events.status(TaskStatus.WAITING);
    const { checkpoints } = await other.clients.checkpoints.listCheckpoints({ taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    // Made by the sidecar running the task (it stops the run, then rewinds the conversation).
    await other.clients.checkpoints.restore({ taskId, checkpointId: baseline.id, mode: RestoreMode.FILES_AND_TASK });
    await events.until((e) => e.event.case === "statusChanged" && e.event.value.status === TaskStatus.INTERRUPTED);
    // Before: the run's end released the task, the rewind's status was not stored, and the
    // task read "cancelled" (a follower behind was sent that stored status last).
    expect((await owner.clients.tasks.getTask({ taskId })).task?.status).toBe(TaskStatus.INTERRUPTED);
    expect((await fresh.clients.tasks.getTask({ taskId })).task?.status).toBe(TaskStatus.INTERRUPTED);
    // The window that asked for it had the task loaded while it waited: it answers what is so
    // now (before: "waiting", and the messages the restore removed).
    const seen = await other.clients.tasks.getTask({ taskId });
    expect(seen.task?.status).toBe(TaskStatus.INTERRUPTED);
    expect(seen.messages.map((m) => m.text)).toEqual(
      (await owner.clients.tasks.getTask({ taskId })).messages.map((m) => m.text),
    );
    // A subscriber from the start: the events the restoring sidecar left, then the status.
    const { lastSeq } = await fresh.clients.tasks.getTask({ taskId });
    const late = watch(fresh.clients, taskId);
    await late.until((e) => e.seq >= lastSeq);
    const statuses = late.events.flatMap((e) => (e.event.case === "statusChanged" ? [e.event.value.status] : []));
    expect(statuses.at(-1)).toBe(TaskStatus.INTERRUPTED);
    await late.stop();
    await events.stop();
  });

  it("rewound to before its first message (Restore All of it), Resume is refused: a message starts it again, and names it", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 1, [
      complete("First answer."),
      complete("Answer to the new message."),
    ]);
    const [editor] = sidecars;
    const { taskId } = await editor.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    const events = watch(editor.clients, taskId);
    await events.status(TaskStatus.COMPLETED);
    const first = (await editor.clients.tasks.getTask({ taskId })).messages[0]!;
    await editor.clients.checkpoints.editMessage({
      taskId,
      messageId: first.id,
      text: "Write other notes",
      mode: EditMessageMode.RESTORE_ALL,
    });
    expect((await editor.clients.tasks.getTask({ taskId })).messages).toEqual([]);
    const titles = async () => [
      (await editor.clients.tasks.getTask({ taskId })).task?.title,
      (await editor.clients.history.listTasks({})).tasks.find((t) => t.id === taskId)?.title,
    ];
    // Emptied, the task has no first message to be named by (before, it kept the old one's).
    expect(await titles()).toEqual(["", ""]);
    expect((await editor.clients.history.listTasks({ query: "notes" })).tasks.map((t) => t.id)).toEqual([]);

    // Before, Resume sent the model a request without any message (every API refuses one).
    const refused = await editor.clients.tasks.resume({ taskId }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(refused?.code).toBe(Code.FailedPrecondition);
    expect(refused?.rawMessage).toContain("has no message to go on from");

    await editor.clients.tasks.sendMessage({ taskId, text: "Write other notes" });
    await events.until(
      (e) =>
        e.event.case === "statusChanged" &&
        e.event.value.status === TaskStatus.COMPLETED &&
        e.seq > events.events.findLast((x) => x.event.case === "rewound")!.seq,
    );
    const texts = (await editor.clients.tasks.getTask({ taskId })).messages.map((m) => m.text);
    expect(texts).toEqual(["Write other notes", "Answer to the new message."]);
    // Its new first message names it, in the History too (before, it stayed "Write notes").
    expect(await titles()).toEqual(["Write other notes", "Write other notes"]);
    expect((await editor.clients.history.listTasks({ query: "other" })).tasks.map((t) => t.id)).toEqual([taskId]);
    await events.stop();
  });
});
