/**
 * Fitting a conversation into the context window without asking the model: the task's first
 * message and the latest turns stay; older repeated reads of the same file are left out, large
 * old tool results are shortened to their head and tail, and if that is not enough the oldest
 * turns are dropped (a summary of them, when one could be written, takes their place). What was
 * decided is kept in the journal as the task's context trim, so the next requests send the same
 * prefix (prompt caches stay valid) until the window fills again.
 */
import type { ContentBlock } from "../agent/index.js";

/** One journal step of the conversation, before roles are merged. */
export interface ConversationItem {
  seq: number;
  role: "user" | "assistant";
  blocks: ContentBlock[];
}

/** The journal's record of a trim: the complete state, the latest one holds. */
export interface ContextTrimData {
  /** Items after the first one, up to this seq, are left out (0: none). */
  droppedThroughSeq: number;
  /** What stands for the items left out: a summary of them, or a note that they were left out. */
  summary?: string;
  /** Tool results (by tool_use id) replaced by a note: the same file was read again later. */
  elided: string[];
  /** Tool results (by tool_use id) shortened to their head and tail. */
  shortened: string[];
  /** Estimated tokens before and after, for the records. */
  tokensBefore?: number;
  tokensAfter?: number;
}

export const ELIDED_NOTE =
  "[This earlier result was removed to save context space: the same file was read again later in the conversation. Refer to that later read.]";
const SHORTENED_HEAD = 1500;
const SHORTENED_TAIL = 500;
/** Results longer than this are worth shortening. */
const SHORTEN_ABOVE = SHORTENED_HEAD + SHORTENED_TAIL + 600;

export function droppedNote(count: number): string {
  return `[${count} earlier message${count === 1 ? " was" : "s were"} removed from this conversation to fit the context window. Files may have changed since; read them again when you need them.]`;
}

/** The head and tail of a long text with a note of what was cut and how to see it again. */
export function shortenText(
  text: string,
  head = SHORTENED_HEAD,
  tail = SHORTENED_TAIL,
  hint = "repeat the call (e.g. read_file with start_line and end_line) to see it again",
): string {
  if (text.length <= head + tail + 200) return text;
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}\n[... ${cut} characters cut here to fit the context window; ${hint} ...]\n${text.slice(text.length - tail)}`;
}

/** The conversation items as the trim leaves them. */
export function applyContextTrim(
  items: readonly ConversationItem[],
  trim: ContextTrimData | undefined,
): ConversationItem[] {
  const [first, ...rest] = items;
  if (!trim || !first) return items.map((i) => ({ ...i, blocks: [...i.blocks] }));
  const elided = new Set(trim.elided);
  const shortened = new Set(trim.shortened);
  const kept = rest.filter((i) => i.seq > trim.droppedThroughSeq);
  const out: ConversationItem[] = [{ ...first, blocks: [...first.blocks] }];
  if (kept.length < rest.length) {
    out.push({
      seq: first.seq,
      role: "user",
      blocks: [
        {
          type: "text",
          text: trim.summary
            ? `Summary of the earlier part of this conversation:\n${trim.summary}`
            : droppedNote(rest.length - kept.length),
        },
      ],
    });
  }
  // A tool result whose call was left out would be refused by the APIs: keep only answered pairs.
  const calls = new Set<string>();
  for (const item of [first, ...kept]) for (const b of item.blocks) if (b.type === "tool_use") calls.add(b.id);
  for (const item of kept) {
    const blocks = item.blocks
      .filter((b) => b.type !== "tool_result" || calls.has(b.toolUseId))
      .map((b): ContentBlock => {
        if (b.type !== "tool_result") return b;
        if (elided.has(b.toolUseId)) return { ...b, content: ELIDED_NOTE };
        if (shortened.has(b.toolUseId)) return { ...b, content: shortenText(b.content) };
        return b;
      });
    out.push({ ...item, blocks });
  }
  return out;
}

/** Characters a conversation puts in a request (the measure the token estimate is made from). */
export function conversationChars(items: readonly ConversationItem[]): number {
  let chars = 0;
  for (const item of items) {
    chars += 16; // role and framing
    for (const b of item.blocks) chars += blockChars(b);
  }
  return chars;
}

export function blockChars(b: ContentBlock): number {
  switch (b.type) {
    case "text":
      return b.text.length;
    case "thinking":
      return b.text.length + (b.redactedData?.length ?? 0);
    case "tool_use":
      return b.name.length + JSON.stringify(b.input ?? {}).length + 32;
    case "tool_result":
      return b.content.length + 32;
  }
}

export interface TrimPlan {
  trim: ContextTrimData;
  /** Items newly left out by this plan (to be summarized). */
  newlyDropped: ConversationItem[];
  /** Characters of the conversation as the plan leaves it. */
  chars: number;
}

/**
 * A trim, building on the current one, that brings the conversation under `limitChars`: repeated
 * reads are left out and old long results shortened, aiming at `targetChars` (below the limit,
 * so that the next turns fit too); turns are dropped only when that is not enough to fit the
 * limit, and then down to the target. The task's first message and the last `keepGroups` turns
 * (an assistant message and the tool results that answer it) are shortened only if nothing
 * else is left to trim.
 */
export function planTrim(
  items: readonly ConversationItem[],
  current: ContextTrimData | undefined,
  targetChars: number,
  limitChars: number,
  keepGroups = 2,
  /** What is measured: the items as they will be sent (e.g. with results capped). */
  view: (items: readonly ConversationItem[]) => readonly ConversationItem[] = (i) => i,
): TrimPlan {
  const trim: ContextTrimData = {
    droppedThroughSeq: current?.droppedThroughSeq ?? 0,
    summary: current?.summary,
    elided: [...(current?.elided ?? [])],
    shortened: [...(current?.shortened ?? [])],
  };
  const measure = () => conversationChars(view(applyContextTrim(items, trim)));
  const result = (droppedFrom: number) => ({
    trim,
    newlyDropped: items.slice(1).filter((i) => i.seq > droppedFrom && i.seq <= trim.droppedThroughSeq),
    chars: measure(),
  });
  const droppedBefore = trim.droppedThroughSeq;
  if (items.length === 0 || measure() <= targetChars) return result(droppedBefore);

  // Where the protected tail starts: the start of the last `keepGroups` assistant turns.
  const assistantIndexes = items.map((item, index) => (item.role === "assistant" ? index : -1)).filter((i) => i > 0);
  // With fewer assistant turns than that, the tail starts after the first message.
  const tailStart = assistantIndexes[assistantIndexes.length - keepGroups] ?? 1;
  const tailSeq = items[Math.max(1, tailStart)]?.seq ?? Number.POSITIVE_INFINITY;
  const uses = toolUses(items);
  const inTail = (resultSeq: number) => resultSeq >= tailSeq;
  const results = items.flatMap((item) =>
    item.blocks.flatMap((b) =>
      b.type === "tool_result" && item.seq > trim.droppedThroughSeq
        ? [{ seq: item.seq, id: b.toolUseId, length: b.content.length }]
        : [],
    ),
  );

  // 1. Older reads of a file read again later (same path and range) are left out.
  const lastReadOf = new Map<string, string>();
  for (const r of results) {
    const key = readKey(uses.get(r.id));
    if (key) lastReadOf.set(key, r.id);
  }
  for (const r of results) {
    const key = readKey(uses.get(r.id));
    if (key && lastReadOf.get(key) !== r.id && !trim.elided.includes(r.id)) trim.elided.push(r.id);
  }
  if (measure() <= targetChars) return result(droppedBefore);

  // 2. Large results before the protected tail are shortened, oldest first.
  for (const r of results) {
    if (inTail(r.seq) || r.length <= SHORTEN_ABOVE || trim.elided.includes(r.id) || trim.shortened.includes(r.id))
      continue;
    trim.shortened.push(r.id);
    if (measure() <= targetChars) return result(droppedBefore);
  }
  // Under the limit without leaving anything out: the turns stay.
  if (measure() <= limitChars) return result(droppedBefore);

  // 3. The oldest turns go, a whole turn at a time (a tool call with its results).
  for (const [i, item] of items.entries()) {
    if (i === 0) continue; // the task's first message stays
    if (i >= tailStart) break;
    const next = items[i + 1];
    if (next && next.role !== "assistant") continue; // cut only before an assistant turn
    if (item.seq <= trim.droppedThroughSeq) continue;
    trim.droppedThroughSeq = item.seq;
    if (measure() <= targetChars) return result(droppedBefore);
  }

  // 4. Nothing older is left: the latest results are shortened too, oldest first.
  for (const r of results) {
    if (
      r.length <= SHORTEN_ABOVE ||
      trim.elided.includes(r.id) ||
      trim.shortened.includes(r.id) ||
      r.seq <= trim.droppedThroughSeq
    )
      continue;
    trim.shortened.push(r.id);
    if (measure() <= targetChars) break;
  }
  return result(droppedBefore);
}

type ToolUseBlock = Extract<ContentBlock, { type: "tool_use" }>;

function toolUses(items: readonly ConversationItem[]): Map<string, ToolUseBlock> {
  const map = new Map<string, ToolUseBlock>();
  for (const item of items) for (const b of item.blocks) if (b.type === "tool_use") map.set(b.id, b);
  return map;
}

/** What makes two read_file calls read the same thing: the path and the line range. */
function readKey(use: ToolUseBlock | undefined): string | undefined {
  if (!use || use.name !== "read_file" || !use.input || typeof use.input !== "object") return undefined;
  const input = use.input as Record<string, unknown>;
  if (typeof input.path !== "string") return undefined;
  return JSON.stringify([input.path.replace(/^\.\//, ""), input.start_line ?? null, input.end_line ?? null]);
}

/**
 * Caps each tool result to `maxChars` at request time (the journal keeps them whole), with a
 * note telling the model how to see the rest; results of earlier versions (a 2 MB read) and
 * tools without their own bound fit the window this way.
 */
export function capToolResults(items: readonly ConversationItem[], maxChars: number): ConversationItem[] {
  const uses = toolUses(items);
  return items.map((item) => {
    if (!item.blocks.some((b) => b.type === "tool_result" && b.content.length > maxChars)) return item;
    return {
      ...item,
      blocks: item.blocks.map((b): ContentBlock => {
        if (b.type !== "tool_result" || b.content.length <= maxChars) return b;
        const head = Math.floor(maxChars * 0.75);
        const tail = Math.max(0, maxChars - head - 400);
        return { ...b, content: shortenText(b.content, head, tail, readMoreHint(uses.get(b.toolUseId)?.name)) };
      }),
    };
  });
}

export function readMoreHint(tool: string | undefined): string {
  switch (tool) {
    case "read_file":
      return "read the rest with read_file and start_line/end_line";
    case "execute_command":
      return "run the command again with its output filtered (grep, head, tail) to see the part you need";
    case "search_files":
      return "narrow the search (a more specific regex, path or file_pattern) to see the rest";
    default:
      return "ask for a smaller part to see the rest";
  }
}
