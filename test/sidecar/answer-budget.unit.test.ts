import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { GetTaskResponseSchema, UiMessageSchema, type UiMessage } from "../../core/src/gen/dline/v1/task_pb.js";
import { fitMessagesToAnswer } from "../../core/src/rpc/answer-budget.js";

/** A write_to_file row as GetTask carries it: the content in its detail, its input and the edit's side. */
function editRow(i: number, content: string): UiMessage {
  const input = JSON.stringify({ path: `docs/f${i}.md`, content });
  return create(UiMessageSchema, {
    id: `m${i}`,
    kind: "tool",
    tool: "write_to_file",
    detail: input,
    toolCall: {
      toolCallId: `c${i}`,
      tool: "write_to_file",
      input,
      edits: [{ path: `docs/f${i}.md`, originalText: "", proposedText: content }],
    },
  });
}

function answerBytes(messages: UiMessage[]): { binary: number; json: number } {
  const answer = create(GetTaskResponseSchema, { messages });
  return {
    binary: toBinary(GetTaskResponseSchema, answer).length,
    json: Buffer.byteLength(toJsonString(GetTaskResponseSchema, answer), "utf8"),
  };
}

const inputOf = (m: UiMessage) => JSON.parse(m.toolCall!.input) as { path: string; content: string };

describe("a GetTask answer within its budget", () => {
  it("counts bytes, not characters: edits of Chinese text fit too", () => {
    // 20 edits of 20,000 characters of Chinese (60,000 bytes in UTF-8), each carried three times.
    const text = "汉字文本".repeat(5_000);
    const messages = Array.from({ length: 20 }, (_, i) => editRow(i, text));
    const budget = 1_500_000;
    // Counted in characters the answer looked within budget (1.2 million); its bytes are three times that.
    expect(answerBytes(messages).binary).toBeGreaterThan(3 * 1_200_000);

    fitMessagesToAnswer(messages, budget);

    const { binary, json } = answerBytes(messages);
    expect(binary).toBeLessThanOrEqual(budget * 1.05);
    expect(json).toBeLessThanOrEqual(budget * 1.1);
    // The newest stay whole, the oldest are cut, every path is kept.
    expect(inputOf(messages.at(-1)!).content).toBe(text);
    expect(messages.at(-1)!.toolCall!.edits[0]!.proposedText).toBe(text);
    expect(inputOf(messages[0]!).content.length).toBeLessThan(text.length);
    expect(messages.map((m) => inputOf(m).path)).toEqual(messages.map((_, i) => `docs/f${i}.md`));
  });

  it("counts the diffs of large edits, and leaves out a diff too long for the cut", () => {
    // 40 edits of files too large to send whole, each with a diff of 100,000 characters.
    const diff = `--- a/big.js\n+++ b/big.js\n@@ -1,1 +1,1 @@\n${"+y\n".repeat(33_330)}`;
    const messages = Array.from({ length: 40 }, (_, i) => {
      const m = editRow(i, "");
      m.toolCall!.edits[0] = { ...m.toolCall!.edits[0]!, truncated: true, diff };
      return m;
    });
    const budget = 1_000_000;
    expect(answerBytes(messages).binary).toBeGreaterThan(4 * budget);

    fitMessagesToAnswer(messages, budget);

    expect(answerBytes(messages).binary).toBeLessThanOrEqual(budget * 1.05);
    // The newest keeps its diff; an older one cut is an edit without a preview (never half a diff).
    expect(messages.at(-1)!.toolCall!.edits[0]!.diff).toBe(diff);
    expect(messages[0]!.toolCall!.edits[0]).toMatchObject({ truncated: true, diff: "" });
  });

  it("cuts further when every message cut once still does not fit (thousands of big edits)", () => {
    // 2,000 edits of 50,000 characters: cut to 4,096 characters each, the answer would still be
    // about 25 MB against a budget of 6 MB.
    const content = "x".repeat(50_000);
    const messages = Array.from({ length: 2_000 }, (_, i) => editRow(i, content));
    const budget = 6_000_000;

    fitMessagesToAnswer(messages, budget);

    expect(answerBytes(messages).binary).toBeLessThanOrEqual(budget * 1.1);
    for (const [i, m] of messages.entries()) {
      const input = inputOf(m);
      expect(input.path).toBe(`docs/f${i}.md`);
      // Cut twice, the note still gives the length the content had.
      expect(input.content).toMatch(/\n\[Cut to open the task: 50000 characters; the task's files keep them\.\]$/);
      expect(m.toolCall!.edits[0]!.truncated).toBe(true);
    }
  });

  it("never splits a character outside the basic plane", () => {
    // Emoji are two UTF-16 units: a cut at an odd unit would leave half of one.
    const text = "a" + "😀".repeat(10_000);
    const messages = [create(UiMessageSchema, { id: "m0", kind: "text", text }), editRow(1, "y".repeat(30_000))];

    fitMessagesToAnswer(messages, 20_000);

    const cut = messages[0]!.text;
    expect(cut.length).toBeLessThan(text.length);
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(cut.startsWith("a😀😀")).toBe(true);
  });

  it("leaves an answer within its budget as it is", () => {
    const messages = Array.from({ length: 5 }, (_, i) => editRow(i, "汉".repeat(1_000)));
    const before = messages.map((m) => toBinary(UiMessageSchema, m));

    fitMessagesToAnswer(messages, 1_000_000);

    expect(messages.map((m) => toBinary(UiMessageSchema, m))).toEqual(before);
  });
});
