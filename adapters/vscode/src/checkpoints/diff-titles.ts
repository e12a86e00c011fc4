import type { ChatCheckpoint } from "../chat/chat-state.js";
import { clock } from "../webview/step-names.js";

/** What a checkpoint is, in a diff tab's title. */
const KIND_WORDS: Record<string, string> = {
  CHECKPOINT_KIND_BASELINE: "task start",
  CHECKPOINT_KIND_TURN: "turn",
  CHECKPOINT_KIND_COMPLETION: "completion",
  CHECKPOINT_KIND_COMPACTION: "compaction",
  CHECKPOINT_KIND_BEFORE_RESTORE: "before restore",
};

/**
 * Which checkpoint a Compare or View Changes tab shows, for its title ("Changes since snapshot
 * (task start, 07:58:48)"): the tabs of two of them, left open side by side, read apart. By its
 * kind and time as the chat lists it; by its short id when the chat does not list it.
 */
export function checkpointTabDetail(
  checkpointId: string,
  checkpoint: Pick<ChatCheckpoint, "kind" | "createdAt"> | undefined,
): string {
  const short = checkpointId.slice(0, 8);
  const word = checkpoint ? KIND_WORDS[checkpoint.kind] : undefined;
  if (!word) return `checkpoint ${short}`;
  if (!checkpoint?.createdAt) return `${word} ${short}`;
  return `${word}, ${clock(checkpoint.createdAt)}`;
}
