import { DlineError } from "../errors.js";
import type { LiveTask } from "./live-task.js";

/**
 * Cuts a task's conversation at one of its messages (checkpoint restores, edited messages): UI
 * messages after it go (with `before`, the message itself too), and the journal is cut at the
 * step that produced it, so the model sees the same history as the person. A `messageId` of ""
 * (a baseline of an older task, without an anchor) stands for the task's start. Returns the id
 * of the last message kept ("" when none is).
 */
export function cutConversation(task: LiveTask, messageId: string, before: boolean): string {
  const messages = task.messages.list();
  const index = messageId ? messages.findIndex((m) => m.id === messageId) : messages.length > 0 ? 0 : -1;
  const anchor = messages[index];
  if (!anchor) throw new DlineError("not_found", `Message ${messageId} is not part of task ${task.id}.`);
  // Undefined when the cut is before the first message: nothing is kept.
  const lastKept = messages[before ? index - 1 : index];
  if (lastKept) task.messages.truncateAfter(lastKept.id);
  else task.messages.clear();
  const entries = task.journal.entries();
  const entryIndex = entries.findIndex((e) => {
    const ids = (JSON.parse(e.data) as { messageIds?: string[] }).messageIds;
    return ids?.includes(anchor.id) ?? false;
  });
  if (entryIndex >= 0) task.journal.truncateAfter(entries[before ? entryIndex - 1 : entryIndex]?.seq ?? 0);
  return lastKept?.id ?? "";
}
