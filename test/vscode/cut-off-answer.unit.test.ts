/**
 * An answer the person cut off (Cancel while the model streams, or its sidecar stopping) is
 * marked at its end in the VS Code chat: live, after the task goes on, and when the task is
 * opened again from history, in any window. The core says which answer was cut
 * (`UiMessage.cut_off`, on the live `messageFinalized` and on what GetTask returns); the chat
 * shows that and nothing else: no guess from the run's status, no memory of its own.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  GetTaskResponseSchema,
  MessageRole,
  TaskEventSchema,
  TaskStatus,
  ToolCallStatus,
  type TaskEvent,
} from "../../core/src/gen/dline/v1/task_pb.js";
import { ChatModel } from "../../adapters/vscode/src/chat/chat-model.js";
import type { ChatMessageItem } from "../../adapters/vscode/src/chat/chat-state.js";

let seq = 0n;
const event = (e: TaskEvent["event"]): TaskEvent => create(TaskEventSchema, { seq: ++seq, taskId: "t1", event: e });
const msg = (id: string, role: MessageRole, kind: string, text: string, extra: Record<string, unknown> = {}) => ({
  id,
  role,
  kind,
  text,
  ...extra,
});
const added = (m: ReturnType<typeof msg>) => event({ case: "messageAdded", value: { message: m } as never });
const finalized = (m: ReturnType<typeof msg>) => event({ case: "messageFinalized", value: { message: m } as never });
const delta = (messageId: string, text: string) => event({ case: "messageDelta", value: { messageId, text } as never });
const status = (s: TaskStatus, reason = "") => event({ case: "statusChanged", value: { status: s, reason } as never });

/** The chat's messages as [id, cut off]. */
const cuts = (model: ChatModel) =>
  model.snapshot.items.flatMap((i) => (i.type === "message" ? [[i.id, i.cutOff === true]] : []));

/** A task whose answer "a1" streams and is cancelled midway, as the core sends it. */
function cancelledWhileStreaming(): ChatModel {
  const model = new ChatModel();
  model.reset("t1");
  model.apply(added(msg("u1", MessageRole.USER, "text", "Think slowly")));
  model.apply(status(TaskStatus.RUNNING));
  model.apply(added(msg("a1", MessageRole.ASSISTANT, "text", "Thin", { partial: true })));
  model.apply(delta("a1", "king very"));
  // The core settles the cut answer (its text as shown, no longer streaming, cut off), then says Cancelled.
  model.apply(finalized(msg("a1", MessageRole.ASSISTANT, "text", "Thinking very", { cutOff: true })));
  model.apply(status(TaskStatus.CANCELLED, "cancelled"));
  return model;
}

describe("an answer cut off by Cancel", () => {
  it("is marked at its end when the task is cancelled while it streams", () => {
    const model = cancelledWhileStreaming();
    expect(model.snapshot.status).toBe("cancelled");
    expect(cuts(model)).toEqual([
      ["u1", false],
      ["a1", true],
    ]);
  });

  it("stays marked when the task goes on (Resume), and the next answer is not", () => {
    const model = cancelledWhileStreaming();
    model.apply(status(TaskStatus.RUNNING));
    model.apply(added(msg("a2", MessageRole.ASSISTANT, "text", "Back.", { partial: true })));
    model.apply(finalized(msg("a2", MessageRole.ASSISTANT, "text", "Back.")));
    model.apply(added(msg("c1", MessageRole.ASSISTANT, "completion", "Finished after cancel.")));
    model.apply(status(TaskStatus.COMPLETED, "the model ended its turn"));
    expect(cuts(model)).toEqual([
      ["u1", false],
      ["a1", true],
      ["a2", false],
      ["c1", false],
    ]);
  });

  it("an answer that ended before the cancel is not marked: its tool ran, or the task completed with it", () => {
    const model = new ChatModel();
    model.reset("t1");
    model.apply(added(msg("u1", MessageRole.USER, "text", "Run it")));
    model.apply(added(msg("a1", MessageRole.ASSISTANT, "text", "Running the long job.")));
    model.apply(
      added(
        msg("m1", MessageRole.TOOL, "command", "execute_command sleep 30", {
          tool: "execute_command",
          toolCall: { toolCallId: "c1", tool: "execute_command", status: ToolCallStatus.RUNNING },
        }),
      ),
    );
    model.apply(status(TaskStatus.CANCELLED, "cancelled"));
    expect(cuts(model)).toEqual([
      ["u1", false],
      ["a1", false],
      ["m1", false],
    ]);

    const completed = new ChatModel();
    completed.reset("t2");
    completed.apply(added(msg("a1", MessageRole.ASSISTANT, "text", "All done.")));
    completed.apply(status(TaskStatus.COMPLETED, "the model ended its turn"));
    expect(cuts(completed)).toEqual([["a1", false]]);
    // Cancelled before the model wrote anything (its reasoning only): no answer to mark.
    const thinking = new ChatModel();
    thinking.reset("t3");
    thinking.apply(added(msg("r1", MessageRole.ASSISTANT, "reasoning", "Hmm", { partial: true })));
    thinking.apply(status(TaskStatus.CANCELLED, "cancelled"));
    expect(cuts(thinking)).toEqual([["r1", false]]);
  });

  it("is marked when the cancelled task is opened again from history (GetTask), and after its sidecar stopped", () => {
    const messages = [
      msg("u1", MessageRole.USER, "text", "Think slowly"),
      msg("a1", MessageRole.ASSISTANT, "text", "Thinking very", { cutOff: true }),
    ] as never[];
    for (const [taskStatus, ownerPid] of [
      [TaskStatus.CANCELLED, 0],
      [TaskStatus.INTERRUPTED, 0],
      [TaskStatus.RUNNING, 0], // its sidecar died: it reads as interrupted
    ] as const) {
      const model = new ChatModel();
      model.load(
        create(GetTaskResponseSchema, { task: { id: "t1", title: "T", status: taskStatus }, ownerPid, messages }),
      );
      expect(cuts(model), TaskStatus[taskStatus]).toEqual([
        ["u1", false],
        ["a1", true],
      ]);
    }
  });

  it('a task cut and then continued ("go on") is marked when opened fresh from history: a new window, no memory of the cut', () => {
    // Cut in another window, editor or the CLI; since then the person wrote "go on" and the task completed.
    const model = new ChatModel();
    model.load(
      create(GetTaskResponseSchema, {
        task: { id: "t1", title: "T", status: TaskStatus.COMPLETED },
        messages: [
          msg("u1", MessageRole.USER, "text", "Think slowly"),
          msg("a1", MessageRole.ASSISTANT, "text", "Thinking very", { cutOff: true }),
          msg("u2", MessageRole.USER, "text", "go on"),
          msg("a2", MessageRole.ASSISTANT, "text", "Back."),
          msg("c1", MessageRole.ASSISTANT, "completion", "Finished after cancel."),
        ] as never[],
      }),
    );
    expect(cuts(model)).toEqual([
      ["u1", false],
      ["a1", true],
      ["u2", false],
      ["a2", false],
      ["c1", false],
    ]);
    const a1 = model.snapshot.items[1] as ChatMessageItem;
    expect(a1.text).toBe("Thinking very");
  });

  it("only the core says an answer was cut: a finished answer that ends a cancelled or interrupted task is not marked", () => {
    const messages = [
      msg("u1", MessageRole.USER, "text", "Say hi"),
      msg("a1", MessageRole.ASSISTANT, "text", "Hi."),
    ] as never[];
    for (const taskStatus of [TaskStatus.CANCELLED, TaskStatus.INTERRUPTED, TaskStatus.COMPLETED]) {
      const model = new ChatModel();
      model.load(create(GetTaskResponseSchema, { task: { id: "t1", title: "T", status: taskStatus }, messages }));
      expect(cuts(model), TaskStatus[taskStatus]).toEqual([
        ["u1", false],
        ["a1", false],
      ]);
    }
    // Live: the answer was finalized whole before the Cancel came.
    const model = new ChatModel();
    model.reset("t1");
    model.apply(added(msg("a1", MessageRole.ASSISTANT, "text", "Hi", { partial: true })));
    model.apply(finalized(msg("a1", MessageRole.ASSISTANT, "text", "Hi.")));
    model.apply(status(TaskStatus.CANCELLED, "cancelled"));
    expect(cuts(model)).toEqual([["a1", false]]);
  });
});
