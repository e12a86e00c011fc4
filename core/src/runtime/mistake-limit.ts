import type { StoredUiMessage } from "../tasks/index.js";
import { JOURNAL_KIND } from "./conversation.js";
import { ask } from "./tool-turn.js";
import type { TurnLoopDeps } from "./turn-deps.js";

/** Answers in a row whose tool calls could not be run before the person is asked (Cline's mistake limit). */
export const MAX_CONSECUTIVE_MISTAKES = 3;
export const MISTAKE_OPTIONS = ["Keep trying", "Stop the task"] as const;

export interface MistakeHost {
  deps: TurnLoopDeps;
  addMessage(init: Partial<StoredUiMessage>): StoredUiMessage;
  journal(kind: string, data: object): void;
}

/**
 * After several answers in a row whose tool calls could not be run (cut, not valid, unknown
 * tools), the person decides: keep going (their words, if any, go to the model) or stop.
 * True: go on.
 */
export async function askAfterMistakes(
  host: MistakeHost,
  mistakes: number,
  problem: string | undefined,
  signal: AbortSignal,
): Promise<boolean> {
  const { deps } = host;
  const question =
    `The model's last ${mistakes} answers held tool calls that could not be run${problem ? ` (the last: ${problem.slice(0, 300)})` : ""}. ` +
    "Should it keep trying? You can also tell it what to do differently.";
  host.addMessage({
    role: "assistant",
    kind: "followup",
    text: question,
    detail: JSON.stringify({ options: MISTAKE_OPTIONS }),
  });
  const answer = await ask(
    deps,
    { kind: "followup", tool: "", summary: question, detail: "", options: [...MISTAKE_OPTIONS] },
    signal,
  );
  const text = answer.text.trim();
  if (!answer.approve || text.toLowerCase() === MISTAKE_OPTIONS[1].toLowerCase()) return false;
  const advice =
    text && text.toLowerCase() !== MISTAKE_OPTIONS[0].toLowerCase()
      ? text
      : "Keep trying, and write smaller tool calls.";
  host.addMessage({ role: "user", kind: "text", text: advice });
  host.journal(JOURNAL_KIND.user, { text: advice });
  return true;
}
