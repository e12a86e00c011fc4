import type { ChatItem } from "../chat/chat-state.js";

/**
 * Whether the feedback message at `index` (a user message of kind "denied": what the person
 * wrote when rejecting) is already shown on the row of the call it answers: the tool or command
 * row just before it reads "Denied with feedback" and the words. Then the chat shows it once,
 * on that row; a feedback without such a row (a rejected question or plan) keeps its own card.
 */
export function feedbackShownOnCall(items: readonly ChatItem[], index: number): boolean {
  const item = items[index];
  if (item?.type !== "message" || item.role !== "user" || item.kind !== "denied") return false;
  for (let i = index - 1; i >= 0; i--) {
    const before = items[i];
    if (before?.type !== "message") continue;
    const call = before.toolCall;
    if (!call) continue;
    return call.status === "denied" && call.feedback === item.text;
  }
  return false;
}
