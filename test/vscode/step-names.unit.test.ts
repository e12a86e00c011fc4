/**
 * The checkpoint markers' Compare and Restore buttons were all named just "Compare" and
 * "Restore": a screen reader's list of buttons did not say which checkpoint each one is about.
 * Each is named by the step its checkpoint follows (and that step's time), starting with the
 * visible word.
 */
import { describe, expect, it } from "vitest";
import type { ChatMessageItem } from "../../adapters/vscode/src/chat/chat-state.js";
import { checkpointButtonNames, stepDescription } from "../../adapters/vscode/src/webview/step-names.js";

const item = (over: Partial<ChatMessageItem>): ChatMessageItem => ({
  type: "message",
  id: "m",
  time: 0,
  role: "assistant",
  kind: "text",
  text: "",
  partial: false,
  tool: "",
  detail: "",
  checkpointId: "",
  ...over,
});

const edit = (path: string, time: number) =>
  item({
    role: "tool",
    kind: "tool",
    tool: "replace_in_file",
    time,
    toolCall: {
      toolCallId: "c",
      tool: "replace_in_file",
      status: "done",
      input: JSON.stringify({ path }),
      output: "",
      outputTruncated: false,
      edits: [{ path, status: "modified" } as never],
      feedback: "",
      reason: "",
    },
  });

describe("the names of a checkpoint's buttons", () => {
  it("say which step the checkpoint follows, starting with the visible word", () => {
    const names = checkpointButtonNames({ kind: "CHECKPOINT_KIND_TURN" }, edit("notes.md", 0));
    expect(names).toEqual({
      compare: "Compare with the checkpoint after Edit notes.md",
      restore: "Restore the checkpoint after Edit notes.md",
    });
  });

  it("name the baseline as the task's start", () => {
    const first = item({ role: "user", text: "Add a line" });
    expect(checkpointButtonNames({ kind: "CHECKPOINT_KIND_BASELINE" }, first).restore).toBe(
      "Restore the checkpoint at the start of the task",
    );
  });

  it("differ for two steps with the same words, by their time", () => {
    const a = checkpointButtonNames({ kind: "CHECKPOINT_KIND_TURN" }, edit("a.txt", Date.UTC(2026, 0, 1, 10, 0, 0)));
    const b = checkpointButtonNames({ kind: "CHECKPOINT_KIND_TURN" }, edit("a.txt", Date.UTC(2026, 0, 1, 10, 0, 7)));
    expect(a.restore).toMatch(/^Restore the checkpoint after Edit a\.txt, /);
    expect(a.restore).not.toBe(b.restore);
  });

  it("describe messages, commands and answers in a few words, control characters shown", () => {
    expect(stepDescription(item({ role: "user", text: "Please   tidy\nthe build folder and the caches too" }))).toBe(
      "your message “Please tidy the build folder and the ca…”",
    );
    expect(
      stepDescription(
        item({
          role: "tool",
          kind: "command",
          tool: "execute_command",
          detail: '{"input":{"command":"npm test\\u001b[2K"}}',
        }),
      ),
    ).toBe("Run command npm test\\e[2K");
    expect(stepDescription(item({ kind: "completion", text: "done" }))).toBe("the task's completion");
    expect(stepDescription(item({ text: "I will **update** it" }))).toBe("the answer “I will **update** it”");
  });
});
