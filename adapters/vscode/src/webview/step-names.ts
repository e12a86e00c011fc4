/**
 * Words that say which step of the chat a control is about, for the names a screen reader
 * speaks: every checkpoint marker has a Compare and a Restore button, and a list of buttons all
 * named "Compare" and "Restore" does not say which checkpoint each one restores. Pure (no DOM):
 * the webview uses it, and unit tests read it.
 */
import type { ChatCheckpoint, ChatMessageItem } from "../chat/chat-state.js";
import { visibleLine } from "../text/visible-text.js";

export const TOOL_LABELS: Record<string, string> = {
  read_file: "Read",
  list_files: "List files",
  search_files: "Search",
  write_to_file: "Write",
  replace_in_file: "Edit",
  execute_command: "Run command",
  new_subagent: "Subagent",
};

/** A tool row's input: a call's arguments, or the `input` of a row's JSON detail; {} when it is not JSON. */
export function parseInput(json: string): Record<string, unknown> {
  try {
    const value = JSON.parse(json) as unknown;
    if (value && typeof value === "object" && !Array.isArray(value)) {
      // A row's detail holds {input, ...}; a call's input is the arguments themselves.
      const record = value as Record<string, unknown>;
      return record.input && typeof record.input === "object" ? (record.input as Record<string, unknown>) : record;
    }
  } catch {
    // not JSON: nothing to show from it
  }
  return {};
}

/** Text on one line, cut to `max` characters, its control characters shown. */
export function excerpt(text: string, max = 40): string {
  const line = visibleLine(text.replace(/\s+/g, " ").trim());
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

/** What a row of the chat is, in a few words: "Edit notes.md", "your message “Add a line”". */
export function stepDescription(item: ChatMessageItem): string {
  if (item.role === "tool" || item.kind === "tool" || item.kind === "command") {
    const call = item.toolCall;
    const input = parseInput(call?.input ?? item.detail);
    const tool = call?.tool || item.tool;
    const label = TOOL_LABELS[tool] ?? tool;
    const command = call?.command?.command ?? (typeof input.command === "string" ? input.command : "");
    if (tool === "execute_command" || command) return `${label} ${excerpt(command || item.text)}`;
    const paths = call?.edits.length
      ? call.edits.map((e) => e.path)
      : typeof input.path === "string"
        ? [input.path]
        : [];
    return `${label} ${paths.length ? excerpt(paths.join(", "), 60) : excerpt(item.text)}`.trim();
  }
  if (item.role === "user") return `your message “${excerpt(item.text)}”`;
  if (item.kind === "completion") return "the task's completion";
  if (item.kind === "followup") return `the question “${excerpt(item.text)}”`;
  if (item.kind === "text" || item.role === "assistant") return `the answer “${excerpt(item.text)}”`;
  return `${item.kind} “${excerpt(item.text)}”`;
}

/** The time of a row, as a clock shows it (two steps with the same words differ by it). */
export function clock(time: number): string {
  return new Date(time).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/**
 * The accessible names of a checkpoint marker's buttons: they start with the visible word
 * ("Compare", "Restore", as speech input expects) and say which checkpoint, by the step it
 * follows (the task's start for the baseline) and that step's time.
 */
export function checkpointButtonNames(
  checkpoint: Pick<ChatCheckpoint, "kind">,
  item: ChatMessageItem,
): { compare: string; restore: string } {
  const which =
    checkpoint.kind === "CHECKPOINT_KIND_BASELINE"
      ? "the checkpoint at the start of the task"
      : `the checkpoint after ${stepDescription(item)}`;
  const at = item.time > 0 ? `, ${clock(item.time)}` : "";
  return { compare: `Compare with ${which}${at}`, restore: `Restore ${which}${at}` };
}
