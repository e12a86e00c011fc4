/**
 * One task, every editor: several sidecars over the same roots (each editor window starts its
 * own), a task that runs in one of them, followed and answered from the others as if it ran
 * there. Real sidecar processes, the scripted model server.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe as suite, expect, it, vi } from "vitest";
import { AskKind, TaskStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { openWindows, readIn, shape, watch, writeThenComplete } from "./follow-helpers.js";
import { nth, lastOf } from "../helpers/items.js";

const scope = scopedSidecars();

/** Two sidecars over the same roots, and a task (it writes notes.txt) started in the first: the owner. */
async function taskInOwner() {
  const { sidecars, workspace, profileId } = await openWindows(scope, 2, writeThenComplete());
  const [owner, other] = sidecars;
  const { taskId } = await owner.clients.tasks.newTask({
    workspaceRoot: workspace,
    text: "Write notes.txt",
    profileId,
  });
  return { owner, other, workspace, taskId };
}

suite("a task running in one sidecar, followed from another", () => {
  it("streams the owner's events from after_seq 0 with the owner's seqs, takes the approval there, and completes", async () => {
    const { owner, other: follower, workspace, taskId } = await taskInOwner();
    const direct = watch(owner.clients, taskId);
    const followed = watch(follower.clients, taskId);

    const ask = await followed.ask(AskKind.TOOL_APPROVAL);
    expect(ask.tool).toBe("write_to_file");
    await follower.clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });

    await followed.status(TaskStatus.COMPLETED);
    await direct.status(TaskStatus.COMPLETED);
    expect(readIn(workspace, "notes.txt")).toBe("written by dline\n");
    // The same events, with the same seqs, in both windows.
    expect(shape(followed.events)).toEqual(shape(direct.events));
    const approved = followed.events.find((e) => e.event.case === "askResolved");
    expect(approved?.event.value).toMatchObject({ askId: ask.askId, approved: true });
    await Promise.all([direct.stop(), followed.stop()]);
  });

  it("a task done in one sidecar and opened in another (GetTask, then Subscribe after its last seq) shows what the first does next", async () => {
    const { owner, other, taskId } = await taskInOwner();
    const direct = watch(owner.clients, taskId);
    const ask = await direct.ask(AskKind.TOOL_APPROVAL);
    await owner.clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
    await direct.status(TaskStatus.COMPLETED);
    // Nobody holds the task now; the other window reads it from the disk, its seqs from the
    // owner's reservation, and the owner, continuing it, goes on above them.
    const view = await other.clients.tasks.getTask({ taskId });
    const opened = watch(other.clients, taskId, view.lastSeq);
    await owner.clients.tasks.sendMessage({ taskId, text: "And once more" });
    const sent = (e: TaskEvent) => e.event.case === "messageAdded" && e.event.value.message?.text === "And once more";
    const [there, here] = await Promise.all([direct.until(sent), opened.until(sent)]);
    expect(here.seq).toBe(there.seq);
    expect(here.seq).toBeGreaterThan(view.lastSeq);
    await Promise.all([direct.stop(), opened.stop()]);
  });

  it("follows from the middle: GetTask and Subscribe after its last seq there miss nothing and repeat nothing", async () => {
    const { owner, other: follower, taskId } = await taskInOwner();
    const direct = watch(owner.clients, taskId);
    const ask = await direct.ask(AskKind.TOOL_APPROVAL);

    // The follower's view is the owner's: the pending question and the last seq with it.
    const view = await follower.clients.tasks.getTask({ taskId });
    expect(view.task?.status).toBe(TaskStatus.WAITING);
    expect(view.pendingAsk?.askId).toBe(ask.askId);
    expect(view.ownerPid).toBe(owner.process.handshake.pid);
    // Its last seq is one the owner streamed (the owner may stream more meanwhile, such as the
    // checkpoints' progress): the direct subscriber gets an event with exactly that seq.
    const lastBefore = view.lastSeq;
    await direct.until((e) => e.seq === lastBefore);
    expect(direct.events.filter((e) => e.seq === lastBefore)).toHaveLength(1);

    // From a seq in the middle of what the owner streamed: exactly the events after it.
    const middle = nth(direct.events, Math.floor(direct.events.length / 2), "event").seq;
    const fromMiddle = watch(follower.clients, taskId, middle);
    const afterView = watch(follower.clients, taskId, view.lastSeq);
    await fromMiddle.until((e) => e.seq === lastBefore);
    await follower.clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
    await Promise.all([
      fromMiddle.status(TaskStatus.COMPLETED),
      afterView.status(TaskStatus.COMPLETED),
      direct.status(TaskStatus.COMPLETED),
    ]);
    expect(shape(fromMiddle.events)).toEqual(shape(direct.events.filter((e) => e.seq > middle)));
    expect(shape(afterView.events)).toEqual(shape(direct.events.filter((e) => e.seq > view.lastSeq)));
    await Promise.all([direct.stop(), fromMiddle.stop(), afterView.stop()]);
  });

  it("cancels from the follower: the owner stops the run and every window sees it cancelled", async () => {
    const { owner, other: follower, workspace, taskId } = await taskInOwner();
    const direct = watch(owner.clients, taskId);
    const followed = watch(follower.clients, taskId);
    await followed.ask(AskKind.TOOL_APPROVAL);

    await follower.clients.tasks.cancel({ taskId });
    // Once the cancel is answered, the follower reads the task as cancelled, wherever it reads it
    // from: the owner has let the task go only after its stored status said so (a stored
    // "waiting" of an unclaimed task reads as a run whose sidecar died: interrupted).
    expect((await follower.clients.tasks.getTask({ taskId })).task?.status).toBe(TaskStatus.CANCELLED);
    const listed = (await follower.clients.history.listTasks({})).tasks.find((t) => t.id === taskId);
    expect(listed?.status).toBe(TaskStatus.CANCELLED);
    await Promise.all([direct.status(TaskStatus.CANCELLED), followed.status(TaskStatus.CANCELLED)]);
    expect(readIn(workspace, "notes.txt")).toBeUndefined();
    await Promise.all([direct.stop(), followed.stop()]);
  });

  it("when the owner is killed, the follower sees the task interrupted at once and resumes it in its own sidecar", async () => {
    const { owner, other: follower, workspace, taskId } = await taskInOwner();
    const followed = watch(follower.clients, taskId);
    await followed.ask(AskKind.TOOL_APPROVAL);
    const beforeKill = lastOf(followed.events, "event").seq;

    process.kill(owner.process.handshake.pid, "SIGKILL");
    const interrupted = await followed.status(TaskStatus.INTERRUPTED);
    expect(interrupted.seq).toBeGreaterThan(beforeKill);
    // The question the dead owner asked is settled as dropped, on the same stream.
    expect(followed.events.some((e) => e.event.case === "askResolved" && e.event.value.dropped)).toBe(true);

    // Resumed in the follower's sidecar: the same subscription shows the rest of the task. The
    // edit whose approval the dead owner waited on is asked again (it never ran), without a model request.
    await follower.clients.tasks.resume({ taskId });
    const again = await followed.until((e) => e.seq > interrupted.seq && e.event.case === "ask");
    const ask = again.event.case === "ask" ? again.event.value : undefined;
    expect(ask?.tool).toBe("write_to_file");
    await follower.clients.tasks.respond({ taskId, askId: ask!.askId, approve: true, text: "" });
    await followed.status(TaskStatus.COMPLETED);
    expect(fs.readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe("written by dline\n");
    expect(
      followed.events.some(
        (e) =>
          e.seq > interrupted.seq && e.event.case === "statusChanged" && e.event.value.status === TaskStatus.RUNNING,
      ),
    ).toBe(true);
    const seqs = followed.events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(seqs).size).toBe(seqs.length);
    // The claim goes once the history row holds the last status, just after the status event.
    await vi.waitFor(async () => expect((await follower.clients.tasks.getTask({ taskId })).ownerPid).toBe(0), {
      timeout: 15_000,
      interval: 50,
    });
    await followed.stop();
  });

  it("when the owner is killed, a window that only reads the task (GetTask) sees it interrupted, not still waiting", async () => {
    const { owner, other: reader, taskId } = await taskInOwner();
    const direct = watch(owner.clients, taskId);
    await direct.ask(AskKind.TOOL_APPROVAL);
    expect((await reader.clients.tasks.getTask({ taskId })).task?.status).toBe(TaskStatus.WAITING);

    process.kill(owner.process.handshake.pid, "SIGKILL");
    await direct.stop();
    await expect
      .poll(async () => (await reader.clients.tasks.getTask({ taskId })).task?.status, { timeout: 30_000 })
      .toBe(TaskStatus.INTERRUPTED);
    const view = await reader.clients.tasks.getTask({ taskId });
    expect(view.ownerPid).toBe(0);
    expect(view.pendingAsk).toBeUndefined();
  });

  it("when the owner is killed, a window that had loaded the task itself (its checkpoints listed) sees it interrupted, not waiting for good", async () => {
    const { owner, other: reader, taskId } = await taskInOwner();
    const direct = watch(owner.clients, taskId);
    await direct.ask(AskKind.TOOL_APPROVAL);
    // An editor opening the task lists its checkpoints: the reader loads the task's copy then.
    await reader.clients.checkpoints.listCheckpoints({ taskId });
    const followed = watch(reader.clients, taskId);
    await followed.ask(AskKind.TOOL_APPROVAL);

    process.kill(owner.process.handshake.pid, "SIGKILL");
    await owner.process.exited;
    await direct.stop();
    const interrupted = () =>
      followed.events.some((e) => e.event.case === "statusChanged" && e.event.value.status === TaskStatus.INTERRUPTED);
    await expect.poll(interrupted, { timeout: 30_000 }).toBe(true);
    expect(followed.events.some((e) => e.event.case === "askResolved" && e.event.value.dropped)).toBe(true);
    const view = await reader.clients.tasks.getTask({ taskId });
    expect(view.task?.status).toBe(TaskStatus.INTERRUPTED);
    expect(view.pendingAsk).toBeUndefined();
    await followed.stop();
  });

  it("three sidecars: two followers see the same stream; an answer from either reaches the owner", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 3, writeThenComplete());
    const [owner, second, third] = sidecars;
    const { taskId } = await owner.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "Write notes.txt",
      profileId,
    });
    const direct = watch(owner.clients, taskId);
    const fromSecond = watch(second.clients, taskId);
    const fromThird = watch(third.clients, taskId);
    const ask = await fromSecond.ask(AskKind.TOOL_APPROVAL);
    await fromThird.until((e) => e.event.case === "ask" && e.event.value.askId === ask.askId);
    await third.clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
    // The question is answered: a second answer from the other follower is refused, truthfully.
    const late = await second.clients.tasks
      .respond({ taskId, askId: ask.askId, approve: false, text: "" })
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(ConnectError);
    expect([Code.FailedPrecondition, Code.Aborted]).toContain((late as ConnectError).code);
    expect((late as ConnectError).rawMessage).not.toMatch(/another Dline window/);

    await Promise.all([
      direct.status(TaskStatus.COMPLETED),
      fromSecond.status(TaskStatus.COMPLETED),
      fromThird.status(TaskStatus.COMPLETED),
    ]);
    expect(shape(fromSecond.events)).toEqual(shape(direct.events));
    expect(shape(fromThird.events)).toEqual(shape(direct.events));
    expect(readIn(workspace, "notes.txt")).toBe("written by dline\n");
    await Promise.all([direct.stop(), fromSecond.stop(), fromThird.stop()]);
  });

  it("a message sent from a follower continues the task in the owner", async () => {
    const turns = [
      ...writeThenComplete(),
      {
        text: "Second round.",
        toolCalls: [{ name: "attempt_completion", input: { result: "Answered the follow-up." } }],
      },
    ];
    const { sidecars, workspace, profileId } = await openWindows(scope, 2, turns);
    const [owner, follower] = sidecars;
    const { taskId } = await owner.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "Write notes.txt",
      profileId,
    });
    const direct = watch(owner.clients, taskId);
    const ask = await direct.ask(AskKind.TOOL_APPROVAL);
    await owner.clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
    const first = await direct.status(TaskStatus.COMPLETED);

    // Nobody runs the task now; the follower's message starts the next run where it is sent.
    const followed = watch(follower.clients, taskId, first.seq);
    await follower.clients.tasks.sendMessage({ taskId, text: "And one more thing." });
    await followed.status(TaskStatus.COMPLETED);
    // The owner's own subscriber sees that run too, wherever it ran.
    await direct.until(
      (e) => e.seq > first.seq && e.event.case === "statusChanged" && e.event.value.status === TaskStatus.COMPLETED,
    );
    const texts = (await owner.clients.tasks.getTask({ taskId })).messages.map((m) => m.text);
    expect(texts).toContain("And one more thing.");
    await Promise.all([direct.stop(), followed.stop()]);
  });
});
