import type { UiMessage } from "../gen/dline/v1/task_pb.js";

/**
 * GetTask answers with every message of a task, and one message may carry an edit's whole
 * content several times (its detail, its tool call's input, the edit's two sides). A long task
 * over big files then made an answer past the transport's limit (64 MB): the task could not be
 * opened in any editor. Past this many characters, the oldest messages give up their long
 * strings (kept in the task's files; the newest messages, what the person reads first, stay whole).
 */
export const ANSWER_BUDGET_CHARS = 24 * 1024 * 1024;

/** What a long string keeps of itself in a slimmed message. */
const KEPT_CHARS = 4096;

/** Slims the oldest messages (in place) until the whole list fits `budget` characters. */
export function fitMessagesToAnswer(messages: UiMessage[], budget = ANSWER_BUDGET_CHARS): void {
  let total = messages.reduce((n, m) => n + charsOf(m), 0);
  for (const m of messages) {
    if (total <= budget) return;
    const before = charsOf(m);
    slim(m);
    total -= before - charsOf(m);
  }
}

function charsOf(m: UiMessage): number {
  let n = m.text.length + m.detail.length;
  const call = m.toolCall;
  if (call) {
    n += call.input.length + call.output.length;
    for (const e of call.edits) n += e.originalText.length + e.proposedText.length;
  }
  return n;
}

function slim(m: UiMessage): void {
  m.text = cutText(m.text);
  m.detail = cutJson(m.detail);
  const call = m.toolCall;
  if (!call) return;
  call.input = cutJson(call.input);
  if (call.output.length > KEPT_CHARS) {
    call.output = cutText(call.output);
    call.outputTruncated = true;
  }
  for (const e of call.edits) {
    if (e.originalText.length + e.proposedText.length <= KEPT_CHARS) continue;
    // As an edit too large to preview: no sides, marked truncated (clients show it so).
    e.originalText = "";
    e.proposedText = "";
    e.truncated = true;
  }
}

function cutText(text: string): string {
  if (text.length <= KEPT_CHARS) return text;
  return `${text.slice(0, KEPT_CHARS)}\n[Cut to open the task: ${text.length} characters; the task's files keep them.]`;
}

/** A JSON text with its long strings cut (its shape, e.g. a path next to a content, kept). */
function cutJson(json: string): string {
  if (json.length <= KEPT_CHARS) return json;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return cutText(json);
  }
  return JSON.stringify(cutStrings(value));
}

function cutStrings(value: unknown): unknown {
  if (typeof value === "string") return cutText(value);
  if (Array.isArray(value)) return value.map(cutStrings);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutStrings(v)]));
  return value;
}
