/**
 * An answer the person cut off (Cancel while the model streams) is marked at its end in the
 * VS Code chat: live, after the task goes on, and when the task is opened again from history.
 * The core keeps the text as shown and journals it for the model with an interruption note; a
 * run that ends cancelled or interrupted with the answer as its last row is that answer.
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
  // The core settles the cut answer (its text as shown, no longer streaming), then says Cancelled.
  model.apply(finalized(msg("a1", MessageRole.ASSISTANT, "text", "Thinking very")));
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
    model.apply(added(msg("a2", MessageRole.ASSISTANT, "text", "Back.")));
    // A second finalization of the cut answer (a core restart's settling) keeps the mark.
    model.apply(finalized(msg("a1", MessageRole.ASSISTANT, "text", "Thinking very")));
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
      msg("a1", MessageRole.ASSISTANT, "text", "Thinking very"),
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
    const completed = new ChatModel();
    completed.load(
      create(GetTaskResponseSchema, { task: { id: "t1", title: "T", status: TaskStatus.COMPLETED }, messages }),
    );
    expect(cuts(completed)).toEqual([
      ["u1", false],
      ["a1", false],
    ]);
  });

  it("a task that went on after the cut is marked again when opened, from the answers this editor saw cut", async () => {
    const { CutOffMemory } = await import("../../adapters/vscode/src/chat/cut-off-memory.js");
    const values = new Map<string, unknown>();
    const store = {
      get: <T>(key: string) => values.get(key) as T | undefined,
      update: (key: string, value: unknown) => {
        values.set(key, value);
        return Promise.resolve();
      },
    };
    const memory = new CutOffMemory(store);
    memory.remember("t1", cancelledWhileStreaming().snapshot.items);
    expect([...memory.ids("t1")]).toEqual(["a1"]);
    expect([...memory.ids("other")]).toEqual([]);

    // Reopened (another window, or after a restart): GetTask says nothing of the cut, the task completed since.
    const model = new ChatModel();
    model.load(
      create(GetTaskResponseSchema, {
        task: { id: "t1", title: "T", status: TaskStatus.COMPLETED },
        messages: [
          msg("u1", MessageRole.USER, "text", "Think slowly"),
          msg("a1", MessageRole.ASSISTANT, "text", "Thinking very"),
          msg("a2", MessageRole.ASSISTANT, "text", "Back."),
        ] as never[],
      }),
    );
    model.markCutOff(new CutOffMemory(store).ids("t1"));
    expect(cuts(model)).toEqual([
      ["u1", false],
      ["a1", true],
      ["a2", false],
    ]);
    const a1 = model.snapshot.items[1] as ChatMessageItem;
    expect(a1.text).toBe("Thinking very");
  });
});
