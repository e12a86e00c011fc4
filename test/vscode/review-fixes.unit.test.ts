/**
 * Pure parts of the VS Code chat that the explorer's report (D4, D8, D12) asked for: a reject's
 * feedback drawn once, the confirmation before a file restore, and the task reopened after a
 * window reload.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { MessageRole, TaskEventSchema, ToolCallStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import { ChatModel } from "../../adapters/vscode/src/chat/chat-model.js";
import { OPEN_TASK_KEY, OpenTaskMemory, type TaskMemento } from "../../adapters/vscode/src/chat/open-task-memory.js";
import { restoreConfirmation } from "../../adapters/vscode/src/checkpoints/restore-options.js";
import { feedbackShownOnCall } from "../../adapters/vscode/src/webview/feedback.js";

let seq = 0n;
const added = (message: Record<string, unknown>): TaskEvent =>
  create(TaskEventSchema, { seq: ++seq, taskId: "t1", event: { case: "messageAdded", value: { message } as never } });
const commandRow = (id: string, status: ToolCallStatus, feedback: string) => ({
  id,
  role: MessageRole.TOOL,
  kind: "command",
  text: "execute_command echo hi",
  tool: "execute_command",
  toolCall: { toolCallId: `c-${id}`, tool: "execute_command", status, command: { command: "echo hi" }, feedback },
});
const feedback = (id: string, text: string) => ({ id, role: MessageRole.USER, kind: "denied", text });

describe("a reject's feedback (D12)", () => {
  const shownOnce = (events: TaskEvent[]) => {
    const model = new ChatModel();
    model.reset("t1");
    for (const e of events) model.apply(e);
    const items = model.snapshot.items;
    return items.flatMap((item, index) =>
      item.type === "message" && item.kind === "denied" ? [[item.id, feedbackShownOnCall(items, index)]] : [],
    );
  };

  it("is drawn on the denied row only, when that row already reads it", () => {
    expect(
      shownOnce([added(commandRow("m1", ToolCallStatus.DENIED, "not now")), added(feedback("f1", "not now"))]),
    ).toEqual([["f1", true]]);
  });

  it("keeps its own card when no row shows it: a rejected question, other words, or a call not denied", () => {
    expect(
      shownOnce([
        added({ id: "q1", role: MessageRole.ASSISTANT, kind: "followup", text: "Which folder?" }),
        added(feedback("f1", "neither")),
        added(commandRow("m2", ToolCallStatus.DENIED, "something else")),
        added(feedback("f2", "not now")),
        added(commandRow("m3", ToolCallStatus.DONE, "")),
        added(feedback("f3", "later")),
      ]),
    ).toEqual([
      ["f1", false],
      ["f2", false],
      ["f3", false],
    ]);
  });
});

describe("the confirmation before a file restore (D8)", () => {
  it("names the files the restore changes, says they are put back (recreated if deleted), the person's edits in them too, others untouched, and that Undo exists", () => {
    const text = restoreConfirmation(["src/a.ts", "notes.md"]);
    expect(text).toContain("2 files changed since this checkpoint (src/a.ts, notes.md)");
    expect(text).toContain("will be put back as the checkpoint has them");
    expect(text).toContain("brought back if deleted");
    expect(text).toContain("changes you made to them yourself");
    expect(text).toContain("Other files stay as they are.");
    expect(text).toContain("Undo");
    expect(restoreConfirmation(["NOTES.md"])).toContain(
      "1 file changed since this checkpoint (NOTES.md) will be put back as the checkpoint has it",
    );
    // One file: "it", not "them", to the end.
    expect(restoreConfirmation(["NOTES.md"])).toContain("Undo on the notice afterwards puts it back as it is now.");
    expect(text).toContain("Undo on the notice afterwards puts them back as they are now.");
  });

  it("lists five names at most, makes control characters visible, and still warns when Compare could not be read", () => {
    const many = restoreConfirmation(["a", "b", "c", "d", "e", "f", "g\u001b[2K"]);
    expect(many).toContain("(a, b, c, d, e and 2 more)");
    expect(restoreConfirmation(["x\u001b[2K.txt"])).toContain("x\\e[2K.txt");
    expect(restoreConfirmation(undefined)).toContain("by Dline or by you, will be overwritten");
    expect(restoreConfirmation([])).toContain("nothing will be overwritten");
  });
});

describe("the task open in the window (D4)", () => {
  const memento = (initial?: string): TaskMemento & { values: Map<string, unknown> } => {
    const values = new Map<string, unknown>(initial === undefined ? [] : [[OPEN_TASK_KEY, initial]]);
    return {
      values,
      get: <T>(key: string) => values.get(key) as T | undefined,
      update: (key: string, value: unknown) => {
        values.set(key, value);
        return Promise.resolve();
      },
    };
  };

  it("is reopened once after a reload; the empty chat of the starting window does not forget it first", () => {
    const store = memento("task-1");
    const memory = new OpenTaskMemory(store);
    memory.remember(undefined); // the new window's chat, before the core started
    expect(memory.toReopen()).toBe("task-1");
    expect(memory.toReopen()).toBeUndefined();
  });

  it("follows the chat: another task, then the start screen (a new chat, a deleted task)", () => {
    const store = memento();
    const memory = new OpenTaskMemory(store);
    expect(memory.toReopen()).toBeUndefined();
    memory.remember("task-2");
    expect(store.values.get(OPEN_TASK_KEY)).toBe("task-2");
    memory.remember(undefined);
    expect(store.values.get(OPEN_TASK_KEY)).toBe("");
    expect(new OpenTaskMemory(store).toReopen()).toBeUndefined();
  });
});
