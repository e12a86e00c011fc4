import type { CheckpointInfo } from "./checkpoint-record.js";

/**
 * What a run stopped for a restore was stopped for, as a person reads it in the task's status
 * and in its interrupted call ("The task was stopped for a restore to the checkpoint of
 * 19:31:06 before this call finished."): the checkpoint as the chat shows it, by what it is and
 * when it was saved (local time), never by its id, which no chat marker shows.
 */
export function restorePurpose(target: Pick<CheckpointInfo, "kind" | "createdAt">): string {
  switch (target.kind) {
    case "baseline":
      return "for a restore to the task's start";
    case "before_restore":
      return "for an undo of a restore";
    case "completion":
      return `for a restore to the checkpoint of the completion at ${clockTime(target.createdAt)}`;
    default:
      return `for a restore to the checkpoint of ${clockTime(target.createdAt)}`;
  }
}

/** The checkpoint a restore went to, as a sentence names it ("the checkpoint of 19:31:06"). */
export function restoreTargetName(target: Pick<CheckpointInfo, "kind" | "createdAt">): string {
  switch (target.kind) {
    case "baseline":
      return "the task's start";
    case "before_restore":
      return `the files as they were before a restore (an undo, checkpoint of ${clockTime(target.createdAt)})`;
    default:
      return `the checkpoint of ${clockTime(target.createdAt)}`;
  }
}

/** "19:31:06": the local time of day. */
function clockTime(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}
