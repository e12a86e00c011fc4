/**
 * The rows of the "which checkpoint?" quick pick (Compare / Restore from the command palette):
 * each says when the checkpoint was saved, what it is (the start of the task, after which turn
 * and step, before a restore, the completion) and how many files the task edited there, with its
 * id beside. A list of bare ids and kinds ("turn" five times) did not say which is which. Pure.
 */
import type { ChatCheckpoint, ChatMessageItem } from "../chat/chat-state.js";
import { stepDescription } from "../webview/step-names.js";
import { visibleLine } from "../text/visible-text.js";

export interface CheckpointPickItem {
  label: string;
  description: string;
  detail?: string;
  id: string;
}

/** A time as the chat markers' names say it (local, "02:19:32 PM"); the date too when not `today`'s. */
export function checkpointTime(time: number, now = Date.now()): string {
  const at = new Date(time);
  const clock = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return at.toDateString() === new Date(now).toDateString()
    ? clock
    : `${at.toLocaleDateString([], { year: "numeric", month: "short", day: "numeric" })} ${clock}`;
}

/** What the checkpoint is, in words: "Start of the task", "After turn 2: Edit notes.md", ... */
function whatItIs(checkpoint: ChatCheckpoint, turn: number, step: ChatMessageItem | undefined): string {
  switch (checkpoint.kind) {
    case "CHECKPOINT_KIND_BASELINE":
      return "Start of the task";
    case "CHECKPOINT_KIND_COMPLETION":
      return "Completion of the task";
    case "CHECKPOINT_KIND_BEFORE_RESTORE":
      return checkpoint.undoAvailable ? "Before the restore (its Undo)" : "Before a restore";
    case "CHECKPOINT_KIND_COMPACTION":
      return "After the conversation was summarized";
    case "CHECKPOINT_KIND_TURN":
      return step ? `After turn ${turn}: ${stepDescription(step)}` : `After turn ${turn}`;
    default:
      return step ? `After ${stepDescription(step)}` : "Checkpoint";
  }
}

/** "1 file edited", "3 files the restore changed"; "" when not known (a command's changes are not counted). */
function filesChanged(checkpoint: ChatCheckpoint): string {
  const n = checkpoint.editedPaths?.length ?? 0;
  if (n === 0) return "";
  const files = `${n} file${n === 1 ? "" : "s"}`;
  return checkpoint.kind === "CHECKPOINT_KIND_BEFORE_RESTORE" ? `${files} the restore changed` : `${files} edited`;
}

/**
 * The quick pick's rows, newest first: `checkpoints` in the order they were saved (the chat
 * state's), `items` the chat's rows (for the step each checkpoint follows).
 */
export function checkpointPickItems(
  checkpoints: readonly ChatCheckpoint[],
  items: readonly { type: string }[],
  now = Date.now(),
): CheckpointPickItem[] {
  const messages = new Map(
    items.filter((i): i is ChatMessageItem => i.type === "message").map((m) => [m.id, m] as const),
  );
  let turns = 0;
  const rows = checkpoints.map((c) => {
    const turn = c.kind === "CHECKPOINT_KIND_TURN" ? ++turns : 0;
    // A "before restore" checkpoint names the message of the checkpoint restored to: not a step it follows.
    const step = c.kind === "CHECKPOINT_KIND_BEFORE_RESTORE" ? undefined : messages.get(c.messageId);
    const time = c.createdAt || step?.time || 0;
    const what = whatItIs(c, turn, step);
    const flags = [c.restored ? "files restored to it" : "", c.hasFiles ? "" : "no file snapshot"].filter(Boolean);
    const edited = filesChanged(c);
    const paths = c.editedPaths ?? [];
    return {
      label: `${time ? `${checkpointTime(time, now)} · ` : ""}${what}`,
      description: [edited, ...flags, c.id.slice(0, 12)].filter(Boolean).join(" · "),
      ...(paths.length
        ? {
            detail: `${paths.slice(0, 3).map(visibleLine).join(", ")}${paths.length > 3 ? ` and ${paths.length - 3} more` : ""}`,
          }
        : {}),
      id: c.id,
    };
  });
  return rows.reverse();
}
