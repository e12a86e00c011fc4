import type { UiMessage } from "../gen/dline/v1/task_pb.js";

/**
 * GetTask answers with every message of a task, and one message may carry an edit's whole
 * content several times (its detail, its tool call's input, the edit's two sides). A long task
 * over big files then made an answer past the transport's limit (64 MB): the task could not be
 * opened in any editor. Past this many bytes (UTF-8, as the answer carries them: a character of
 * Chinese text is three), the oldest messages give up their long strings (kept in the task's
 * files; the newest messages, what the person reads first, stay whole).
 */
export const ANSWER_BUDGET_BYTES = 24 * 1024 * 1024;

/**
 * What a long string keeps of itself in a slimmed message, in characters: first 4,096; when
 * every message slimmed so still does not fit (a task of thousands of big edits), 256.
 */
const KEPT_CHARS = [4096, 256];

/** Slims the oldest messages (in place) until the whole list fits `budget` bytes. */
export function fitMessagesToAnswer(messages: UiMessage[], budget = ANSWER_BUDGET_BYTES): void {
  let total = messages.reduce((n, m) => n + bytesOf(m), 0);
  for (const kept of KEPT_CHARS) {
    for (const m of messages) {
      if (total <= budget) return;
      const before = bytesOf(m);
      slim(m, kept);
      total -= before - bytesOf(m);
    }
  }
}

/** A message's size in the answer, near enough: its strings' UTF-8 bytes (what makes an answer big). */
function bytesOf(m: UiMessage): number {
  let n = utf8(m.text) + utf8(m.detail);
  const call = m.toolCall;
  if (call) {
    n += utf8(call.input) + utf8(call.output);
    for (const e of call.edits) n += utf8(e.originalText) + utf8(e.proposedText) + utf8(e.diff);
  }
  return n;
}

function utf8(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

function slim(m: UiMessage, kept: number): void {
  m.text = cutText(m.text, kept);
  m.detail = cutJson(m.detail, kept);
  const call = m.toolCall;
  if (!call) return;
  call.input = cutJson(call.input, kept);
  if (call.output.length > kept) {
    call.output = cutText(call.output, kept);
    call.outputTruncated = true;
  }
  for (const e of call.edits) {
    if (e.diff.length > kept) e.diff = "";
    if (e.originalText.length + e.proposedText.length <= kept) continue;
    // As an edit too large to preview: no sides, marked truncated (clients show it so).
    e.originalText = "";
    e.proposedText = "";
    e.truncated = true;
  }
}

/** The note a cut string ends with; a string cut again keeps the length it had at first. */
const CUT_NOTE = /\n\[Cut to open the task: (\d+) characters; the task's files keep them\.\]$/;

function cutText(text: string, kept: number): string {
  const earlier = CUT_NOTE.exec(text);
  const body = earlier ? text.slice(0, earlier.index) : text;
  if (body.length <= kept) return text;
  const length = earlier ? Number(earlier[1]) : text.length;
  // Not between the two halves of a surrogate pair (a character outside the BMP, an emoji).
  const end = /[\uD800-\uDBFF]/.test(body.charAt(kept - 1)) ? kept - 1 : kept;
  return `${body.slice(0, end)}\n[Cut to open the task: ${length} characters; the task's files keep them.]`;
}

/** A JSON text with its long strings cut (its shape, e.g. a path next to a content, kept). */
function cutJson(json: string, kept: number): string {
  if (json.length <= kept) return json;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return cutText(json, kept);
  }
  return JSON.stringify(cutStrings(value, kept));
}

function cutStrings(value: unknown, kept: number): unknown {
  if (typeof value === "string") return cutText(value, kept);
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, kept));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutStrings(v, kept)]));
  return value;
}
