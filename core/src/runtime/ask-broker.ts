import { randomUUID } from "node:crypto";
import { DlineError } from "../errors.js";

export interface AskAnswer {
  approve: boolean;
  /** The person's words (feedback with an approval or a denial, a follow-up's answer). */
  text: string;
  /**
   * Why a client answered without asking the person (a rule they set, e.g. "always reject
   * edits in this session"): the model reads it, the chat does not show it as their words.
   */
  reason?: string;
}

interface PendingAsk {
  askId: string;
  resolve: (answer: AskAnswer) => void;
  reject: (err: Error) => void;
}

/**
 * The one pending question of a task (approval, follow-up, completion, resume). The runtime
 * awaits `ask`; an editor's `Respond` resolves it; a cancel rejects it.
 */
export class AskBroker {
  private pending: PendingAsk | undefined;

  get pendingAskId(): string | undefined {
    return this.pending?.askId;
  }

  /** Opens an ask; `publish` announces it (as an event) before the answer is awaited. */
  ask(publish: (askId: string) => void, signal: AbortSignal, askId: string = randomUUID()): Promise<AskAnswer> {
    if (this.pending) throw new DlineError("failed_precondition", "Another question is already pending.");
    return new Promise<AskAnswer>((resolve, reject) => {
      const onAbort = () => {
        if (this.pending?.askId === askId) this.pending = undefined;
        reject(signal.reason instanceof Error ? signal.reason : new DlineError("canceled", "The task was cancelled."));
      };
      this.pending = {
        askId,
        resolve: (answer) => {
          signal.removeEventListener("abort", onAbort);
          resolve(answer);
        },
        reject,
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      publish(askId);
    });
  }

  respond(askId: string, answer: AskAnswer): void {
    if (!this.pending) throw new DlineError("failed_precondition", "The task is not waiting for an answer.");
    if (this.pending.askId !== askId) {
      // failed_precondition, as for a task no longer waiting: clients take it for an answer given
      // elsewhere (another window's came first) and say so. Without ids: a person reads it.
      throw new DlineError(
        "failed_precondition",
        "That question was already answered (in another window?); the task is asking another one now.",
      );
    }
    const pending = this.pending;
    this.pending = undefined;
    pending.resolve(answer);
  }
}
