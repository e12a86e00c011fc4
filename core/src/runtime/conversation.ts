import type { ContentBlock, ModelMessage } from "../agent/index.js";
import type { ModelToolCall } from "./assistant-stream.js";
import { LEGACY_CONVERSATION_KIND } from "../tasks/index.js";
import { applyContextTrim, type ContextTrimData, type ConversationItem } from "./context-trim.js";

/** Journal entry kinds written by the runtime; the model conversation is rebuilt from them. */
export const JOURNAL_KIND = {
  user: "user_message",
  assistant: "assistant_message",
  toolResults: "tool_results",
  /** An earlier version's summary that replaced everything before `upToSeq` (still read). */
  compaction: "compaction",
  /** What the context manager left out or shortened to fit the window (context-trim.ts); the latest one holds. */
  contextTrim: "context_trim",
  /** The task switched how tools are offered (native or Cline's XML in text); the latest one holds. */
  toolFormat: "tool_format",
} as const;

export interface UserMessageData {
  text: string;
  /** Environment details the model reads with the message (workspace files, the editor's open files). */
  environment?: string;
}
export interface AssistantMessageData {
  content: ContentBlock[];
}
export interface ToolResultsData {
  results: { toolUseId: string; content: string; isError?: boolean }[];
  /** Words the user added with an answer (feedback on an approval, a follow-up answer). */
  feedback?: string;
}
export interface CompactionData {
  summary: string;
  /** Journal seq up to which the summary replaces the conversation. */
  upToSeq: number;
}

export interface JournalEntryLike {
  seq: number;
  kind: string;
  data: string;
}

/**
 * Rebuilds the conversation sent to the model from the journal: user and assistant messages in
 * order, tool results as user content, consecutive user contents merged (both APIs want the
 * roles to alternate), an earlier version's compaction summary replacing everything before it,
 * and the latest context trim applied (what was left out or shortened to fit the window).
 */
export function rebuildConversation(entries: JournalEntryLike[]): ModelMessage[] {
  return mergeRoles(applyContextTrim(conversationItems(entries), latestContextTrim(entries)));
}

/** The journal's conversation as items (one per journal step, with its seq), before any trim. */
export function conversationItems(entries: JournalEntryLike[]): ConversationItem[] {
  let start = 0;
  let summary: string | undefined;
  let summarySeq = 0;
  const compaction = entries.findLast((e) => e.kind === JOURNAL_KIND.compaction);
  if (compaction) {
    const data = JSON.parse(compaction.data) as CompactionData;
    summary = data.summary;
    summarySeq = compaction.seq;
    start = entries.findIndex((e) => e.seq > data.upToSeq && e.kind !== JOURNAL_KIND.compaction);
    if (start < 0) start = entries.length;
  }
  const items: ConversationItem[] = [];
  if (summary !== undefined) {
    items.push({
      seq: summarySeq,
      role: "user",
      blocks: [{ type: "text", text: `Summary of the conversation so far:\n${summary}` }],
    });
  }
  for (const entry of entries.slice(start)) {
    const push = (role: "user" | "assistant", blocks: ContentBlock[]) => items.push({ seq: entry.seq, role, blocks });
    switch (entry.kind) {
      case JOURNAL_KIND.user: {
        const data = JSON.parse(entry.data) as UserMessageData;
        push("user", [{ type: "text", text: data.environment ? `${data.text}\n\n${data.environment}` : data.text }]);
        break;
      }
      case JOURNAL_KIND.assistant: {
        const data = JSON.parse(entry.data) as AssistantMessageData;
        if (data.content.length > 0) push("assistant", data.content);
        break;
      }
      case JOURNAL_KIND.toolResults: {
        const data = JSON.parse(entry.data) as ToolResultsData;
        const blocks: ContentBlock[] = data.results.map((r) => ({
          type: "tool_result" as const,
          toolUseId: r.toolUseId,
          content: r.content,
          isError: r.isError,
        }));
        if (data.feedback) blocks.push({ type: "text", text: data.feedback });
        push("user", blocks);
        break;
      }
      case LEGACY_CONVERSATION_KIND: {
        const legacy = JSON.parse(entry.data) as { role: "user" | "assistant"; content: unknown };
        const blocks = legacyBlocks(legacy.content);
        if (blocks.length > 0) push(legacy.role, blocks);
        break;
      }
      default:
        // Other kinds (markers) carry no conversation.
        break;
    }
  }
  return items;
}

/** The latest context trim of the journal (after the latest compaction, if any). */
export function latestContextTrim(entries: JournalEntryLike[]): ContextTrimData | undefined {
  const latest = entries.findLast((e) => e.kind === JOURNAL_KIND.contextTrim || e.kind === JOURNAL_KIND.compaction);
  return latest?.kind === JOURNAL_KIND.contextTrim ? (JSON.parse(latest.data) as ContextTrimData) : undefined;
}

/** The tool format the task uses now: "xml" once it switched (or was set so), else native. */
export function latestToolFormat(entries: JournalEntryLike[]): "native" | "xml" | undefined {
  const latest = entries.findLast((e) => e.kind === JOURNAL_KIND.toolFormat);
  return latest && (JSON.parse(latest.data) as { format: "native" | "xml" }).format;
}

/** Items to messages: consecutive items of one role merge (both APIs want the roles to alternate). */
export function mergeRoles(items: readonly ConversationItem[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const item of items) {
    if (item.blocks.length === 0) continue;
    const last = messages[messages.length - 1];
    if (last && last.role === item.role && Array.isArray(last.content)) last.content.push(...item.blocks);
    else messages.push({ role: item.role, content: [...item.blocks] });
  }
  return messages;
}

/**
 * Content of a message of an earlier version's api_conversation_history.jsonl (Anthropic
 * message shape, see docs/cline-import.md): text, tool_use and tool_result blocks are carried;
 * images and other block types become a short text note so the model knows something was there.
 */
function legacyBlocks(content: unknown): ContentBlock[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.flatMap((raw): ContentBlock[] => {
    const b = raw as Record<string, unknown>;
    switch (b.type) {
      case "text":
        return typeof b.text === "string" && b.text ? [{ type: "text", text: b.text }] : [];
      case "tool_use":
        return [{ type: "tool_use", id: String(b.id ?? ""), name: String(b.name ?? ""), input: b.input ?? {} }];
      case "tool_result": {
        const inner = Array.isArray(b.content)
          ? (b.content as Record<string, unknown>[])
              .map((c) => (c.type === "text" ? String(c.text ?? "") : `[${String(c.type)}]`))
              .join("\n")
          : String(b.content ?? "");
        return [
          { type: "tool_result", toolUseId: String(b.tool_use_id ?? ""), content: inner, isError: b.is_error === true },
        ];
      }
      default:
        return [{ type: "text", text: `[${String(b.type)} omitted]` }];
    }
  });
}

/**
 * Tool calls of the last assistant message that have no result yet: after a crash mid-turn,
 * these get an "interrupted" result so that the conversation stays valid for the model.
 */
export function unansweredToolCalls(entries: JournalEntryLike[]): ModelToolCall[] {
  const entry = latestMessage(entries);
  const calls = (blocks: ContentBlock[]): ModelToolCall[] =>
    blocks.flatMap((b) =>
      b.type === "tool_use" ? [{ id: b.id, name: b.name, input: objectOrUndefined(b.input) }] : [],
    );
  if (entry?.kind === JOURNAL_KIND.assistant) return calls((JSON.parse(entry.data) as AssistantMessageData).content);
  if (entry?.kind === LEGACY_CONVERSATION_KIND) {
    const legacy = JSON.parse(entry.data) as { role: string; content: unknown };
    return legacy.role === "user" ? [] : calls(legacyBlocks(legacy.content));
  }
  return [];
}

function objectOrUndefined(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The latest message of the conversation (markers carry none). */
function latestMessage(entries: JournalEntryLike[]): JournalEntryLike | undefined {
  return entries.findLast(
    (e) =>
      e.kind === JOURNAL_KIND.toolResults ||
      e.kind === JOURNAL_KIND.user ||
      e.kind === JOURNAL_KIND.assistant ||
      e.kind === LEGACY_CONVERSATION_KIND,
  );
}

/**
 * Whether the conversation ends with an answer of the model that called no tool (one that was
 * stopped midway, or plain text): a request must not end there (the model would take it as the
 * start of its next answer), so a resume adds a note of the person's side first.
 */
export function endsWithAnswer(entries: JournalEntryLike[]): boolean {
  const entry = latestMessage(entries);
  if (entry?.kind !== JOURNAL_KIND.assistant) return false;
  return !(JSON.parse(entry.data) as AssistantMessageData).content.some((b) => b.type === "tool_use");
}
