import * as path from "node:path";
import { MalformedClineFile } from "./import-types.js";
import { isObject, readJsonArrayFile, readJsonFile } from "./read-only-files.js";

/**
 * The conversation of a legacy task as Cline would send it to the model next:
 * api_conversation_history.json holds every message ever sent, and Cline keeps the first
 * user-assistant pair, drops its recorded deleted range (inclusive indexes), takes the tool
 * results out of the first message after the cut (their tool calls were dropped), and applies
 * the text edits of context_history.json (duplicate file reads replaced by a notice, the notice
 * that older messages were removed). Journaling exactly that lets a long task continue: the
 * whole file can be far larger than any context window.
 */
export interface LegacyConversation {
  /** `{role, content}` JSON, one line per message. */
  lines: string[];
  models: Set<string>;
  images: number;
  /** Messages of the file that Cline no longer sent (its truncation). */
  dropped: number;
  /** The file was cut short: only its complete messages were read. */
  cutShort: boolean;
  /** Every message in the file (whole or read up to the cut). */
  total: number;
  notes: string[];
}

/** context_history.json: [messageIndex, [editType, [[blockIndex, [[ts, updateType, [text], meta], ...]], ...]]] */
type TextEdits = Map<number, Map<number, string>>;

function readTextEdits(file: string, name: string, notes: string[]): TextEdits {
  const edits: TextEdits = new Map();
  let value: unknown;
  try {
    value = readJsonFile(file, name);
  } catch (err) {
    notes.push(`${name}: ${(err as Error).message}; its edits of the conversation were not applied`);
    return edits;
  }
  if (value === undefined) return edits;
  if (!Array.isArray(value)) {
    notes.push(`${name} does not hold a JSON array; its edits of the conversation were not applied`);
    return edits;
  }
  for (const entry of value) {
    if (!Array.isArray(entry) || !Number.isInteger(entry[0]) || !Array.isArray(entry[1]) || !Array.isArray(entry[1][1]))
      continue;
    const blocks = new Map<number, string>();
    for (const blockEntry of entry[1][1] as unknown[]) {
      if (!Array.isArray(blockEntry) || !Number.isInteger(blockEntry[0]) || !Array.isArray(blockEntry[1])) continue;
      // The latest edit of a block is the one that applies.
      const latest = (blockEntry[1] as unknown[])[(blockEntry[1] as unknown[]).length - 1];
      if (
        Array.isArray(latest) &&
        latest[1] === "text" &&
        Array.isArray(latest[2]) &&
        typeof latest[2][0] === "string"
      ) {
        blocks.set(blockEntry[0] as number, latest[2][0]);
      }
    }
    if (blocks.size > 0) edits.set(entry[0] as number, blocks);
  }
  return edits;
}

/** Sets a block's text: a text block, or the first text inside a tool result. */
function withText(block: unknown, text: string): unknown {
  if (!isObject(block)) return block;
  if (block.type === "text") return { ...block, text };
  if (
    block.type === "tool_result" &&
    Array.isArray(block.content) &&
    isObject(block.content[0]) &&
    block.content[0].type === "text"
  ) {
    const [first, ...rest] = block.content as unknown[];
    return { ...block, content: [{ ...(first as Record<string, unknown>), text }, ...rest] };
  }
  return block;
}

function modelOf(message: Record<string, unknown>): string | undefined {
  const info = message.modelInfo;
  if (isObject(info)) {
    const id = typeof info.modelId === "string" ? info.modelId : typeof info.id === "string" ? info.id : "";
    if (id) return id;
  }
  return typeof message.model === "string" && message.model ? message.model : undefined;
}

export function legacyConversation(
  dir: string,
  deletedRange: [number, number] | undefined,
): LegacyConversation | undefined {
  const rel = (name: string) => path.join(path.basename(dir), name);
  const name = rel("api_conversation_history.json");
  const read = readJsonArrayFile(path.join(dir, "api_conversation_history.json"), name);
  if (!read) return undefined;
  const notes: string[] = [];
  const history = read.values;
  history.forEach((entry, i) => {
    if (!isObject(entry) || (entry.role !== "user" && entry.role !== "assistant")) {
      throw new MalformedClineFile(name, `message ${i + 1} has no user/assistant role`);
    }
    if (typeof entry.content !== "string" && !Array.isArray(entry.content)) {
      throw new MalformedClineFile(name, `message ${i + 1} has content that is neither text nor blocks`);
    }
  });
  if (read.cutShort)
    notes.push(`${name} was cut short: the model sees its first ${history.length} message(s), the rest is missing`);

  // Cline's own bounds: a range that does not leave a message after it is not applied.
  const end = deletedRange?.[1];
  const cutAfter = end !== undefined && end >= 2 && end < history.length - 1 ? end : undefined;
  const kept =
    cutAfter === undefined
      ? history.map((_, i) => i)
      : [0, 1, ...history.slice(cutAfter + 1).map((_, k) => cutAfter + 1 + k)];
  const edits = readTextEdits(path.join(dir, "context_history.json"), rel("context_history.json"), notes);

  const models = new Set<string>();
  let images = 0;
  const lines = kept.map((index, position) => {
    const message = history[index] as Record<string, unknown>;
    let content = message.content;
    const blockEdits = edits.get(index);
    if (Array.isArray(content)) {
      if (cutAfter !== undefined && position === 2 && message.role === "user") {
        content = content.filter((b) => !(isObject(b) && b.type === "tool_result"));
      }
      if (blockEdits)
        content = (content as unknown[]).map((b, k) => (blockEdits.has(k) ? withText(b, blockEdits.get(k)!) : b));
      images += (content as unknown[]).filter((b) => isObject(b) && b.type === "image").length;
    }
    return JSON.stringify({ role: message.role, content });
  });
  // Dropped messages' models are still models of the task.
  for (const message of history as Record<string, unknown>[]) {
    const model = message.role === "assistant" ? modelOf(message) : undefined;
    if (model) models.add(model);
  }
  const dropped = history.length - kept.length;
  if (dropped > 0) {
    notes.push(
      `${dropped} earlier message(s) Cline had already removed from the model's context: shown, not sent to the model (as in Cline)`,
    );
  }
  return { lines, models, images, dropped, cutShort: read.cutShort, total: history.length, notes };
}
