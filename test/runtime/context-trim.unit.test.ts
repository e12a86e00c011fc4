import { describe, expect, it } from "vitest";
import {
  applyContextTrim,
  capToolResults,
  conversationChars,
  ELIDED_NOTE,
  planTrim,
  type ConversationItem,
} from "../../core/src/runtime/context-trim.js";
import { mergeRoles } from "../../core/src/runtime/conversation.js";
import { parseTextToolCalls, TextToolStreamFilter } from "../../core/src/agent/text-tool-calls.js";
import { builtinTools } from "../../core/src/agent/tools/registry.js";
import { nth } from "../helpers/items.js";

/** A conversation: the task, then one read per path (an assistant call and its result). */
function conversation(reads: { path: string; chars: number }[]): ConversationItem[] {
  const items: ConversationItem[] = [{ seq: 1, role: "user", blocks: [{ type: "text", text: "THE TASK" }] }];
  let seq = 2;
  reads.forEach((r, i) => {
    items.push({
      seq: seq++,
      role: "assistant",
      blocks: [{ type: "tool_use", id: `t${i}`, name: "read_file", input: { path: r.path } }],
    });
    items.push({
      seq: seq++,
      role: "user",
      blocks: [{ type: "tool_result", toolUseId: `t${i}`, content: `${r.path}:`.padEnd(r.chars, "x") }],
    });
  });
  return items;
}

const resultOf = (items: ConversationItem[], id: string) => {
  for (const item of items)
    for (const b of item.blocks) if (b.type === "tool_result" && b.toolUseId === id) return b.content;
  return undefined;
};

describe("trimming a conversation without a model call", () => {
  it("leaves nothing out while it fits", () => {
    const items = conversation([{ path: "a", chars: 1000 }]);
    const plan = planTrim(items, undefined, 10_000, 20_000);
    expect(plan.trim).toEqual({ droppedThroughSeq: 0, summary: undefined, elided: [], shortened: [] });
  });

  it("first leaves out earlier reads of a file read again later", () => {
    const items = conversation([
      { path: "a", chars: 20_000 },
      { path: "b", chars: 1000 },
      { path: "a", chars: 20_000 },
    ]);
    const plan = planTrim(items, undefined, 25_000, 40_000);
    expect(plan.trim.elided).toEqual(["t0"]);
    expect(plan.trim.shortened).toEqual([]);
    const kept = applyContextTrim(items, plan.trim);
    expect(resultOf(kept, "t0")).toBe(ELIDED_NOTE);
    expect(resultOf(kept, "t2")?.length).toBe(20_000);
  });

  it("then shortens old long results to head and tail; the latest turns stay whole", () => {
    const items = conversation([
      { path: "a", chars: 20_000 },
      { path: "b", chars: 20_000 },
      { path: "c", chars: 20_000 },
      { path: "d", chars: 20_000 },
    ]);
    const plan = planTrim(items, undefined, 50_000, 60_000);
    expect(plan.trim.shortened).toEqual(["t0", "t1"]);
    expect(plan.trim.droppedThroughSeq).toBe(0);
    const kept = applyContextTrim(items, plan.trim);
    expect(resultOf(kept, "t0")).toMatch(
      /^a:x+\n\[\.\.\. \d+ characters cut here to fit the context window; repeat the call/,
    );
    expect(resultOf(kept, "t3")?.length).toBe(20_000);
  });

  it("drops whole old turns only when shortening does not fit the limit, keeping the task first and every result with its call", () => {
    const items = conversation(Array.from({ length: 8 }, (_, i) => ({ path: `f${i}`, chars: 12_000 })));
    const plan = planTrim(items, undefined, 20_000, 30_000);
    expect(plan.trim.droppedThroughSeq).toBeGreaterThan(1);
    expect(plan.newlyDropped.length).toBeGreaterThan(0);
    expect(plan.chars).toBeLessThanOrEqual(20_000);
    const messages = mergeRoles(applyContextTrim(items, plan.trim));
    expect(nth(messages, 0, "message").role).toBe("user");
    const first = JSON.stringify(nth(messages, 0, "message").content);
    expect(first).toContain("THE TASK");
    expect(first).toMatch(/earlier messages? were removed/);
    // Roles alternate and every tool result answers a call that is still there.
    messages.forEach((m, i) => i > 0 && expect(m.role).not.toBe(nth(messages, i - 1, "message").role));
    const calls = new Set(
      messages.flatMap((m) =>
        (Array.isArray(m.content) ? m.content : []).flatMap((b) => (b.type === "tool_use" ? [b.id] : [])),
      ),
    );
    for (const m of messages)
      for (const b of Array.isArray(m.content) ? m.content : [])
        if (b.type === "tool_result") expect(calls.has(b.toolUseId)).toBe(true);
    // A summary, when there is one, takes the dropped turns' place.
    const summarized = mergeRoles(applyContextTrim(items, { ...plan.trim, summary: "SUMMARY-77" }));
    expect(JSON.stringify(nth(summarized, 0, "message").content)).toContain(
      "Summary of the earlier part of this conversation:\\nSUMMARY-77",
    );
  });

  it("builds on the previous trim, so earlier requests' prefix stays the same", () => {
    const items = conversation([
      { path: "a", chars: 20_000 },
      { path: "b", chars: 20_000 },
      { path: "c", chars: 20_000 },
    ]);
    const first = planTrim(items, undefined, 45_000, 50_000);
    const more = [
      ...items,
      ...conversation([{ path: "d", chars: 20_000 }])
        .slice(1)
        .map((i) => ({
          ...i,
          seq: i.seq + 10,
          blocks: i.blocks.map((b) =>
            b.type === "tool_use" ? { ...b, id: "t9" } : b.type === "tool_result" ? { ...b, toolUseId: "t9" } : b,
          ),
        })),
    ];
    const second = planTrim(more, first.trim, 45_000, 60_000);
    expect(second.trim.shortened.slice(0, first.trim.shortened.length)).toEqual(first.trim.shortened);
  });

  it("caps each result at request time with a note on how to read the rest", () => {
    const items = conversation([{ path: "huge", chars: 2_000_000 }]);
    const capped = capToolResults(items, 40_000);
    const content = resultOf(capped, "t0")!;
    expect(content.length).toBeLessThan(41_000);
    expect(content).toContain("read the rest with read_file and start_line/end_line");
    expect(conversationChars(capped)).toBeLessThan(42_000);
  });
});

describe("tool calls in text (Cline's XML format)", () => {
  it("parses calls and keeps the text around them for people", () => {
    const parsed = parseTextToolCalls(
      "Let me look.\n\n<read_file>\n<path>src/a.ts</path>\n<start_line>10</start_line>\n</read_file>\n\n<write_to_file>\n<path>b.txt</path>\n<content>\nline </content> inside\n</content>\n</write_to_file>",
      builtinTools,
    );
    expect(parsed.text).toBe("Let me look.");
    expect(parsed.calls).toEqual([
      { name: "read_file", input: { path: "src/a.ts", start_line: "10" } },
      { name: "write_to_file", input: { path: "b.txt", content: "line </content> inside" } },
    ]);
  });

  it("says what is missing in a call cut short, and accepts one whose closing tag alone is missing", () => {
    const cut = parseTextToolCalls("<write_to_file>\n<path>a.txt</path>\n<content>\nhalf of it", builtinTools);
    expect(nth(cut.calls, 0, "tool call").problem).toBe("the parameter <content> is not closed");
    const unclosed = parseTextToolCalls("<attempt_completion>\n<result>done</result>\n", builtinTools);
    expect(unclosed.calls).toEqual([{ name: "attempt_completion", input: { result: "done" } }]);
  });

  it("keeps the XML out of what streams to people, even when a tag is split across chunks", () => {
    const filter = new TextToolStreamFilter(builtinTools);
    const shown =
      ["I will ", "read it.\n<rea", "d_file>\n<path>a</path>", "\n</read_file>"].map((c) => filter.push(c)).join("") +
      filter.end();
    expect(shown).toBe("I will read it.\n");
    const other = new TextToolStreamFilter(builtinTools);
    expect(["a < b and <b>bold</b>"].map((c) => other.push(c)).join("") + other.end()).toBe("a < b and <b>bold</b>");
  });
});
