import { anthropicMaxTokens } from "../agent/index.js";
import type { RunnerModel } from "./ports.js";

/**
 * The max_tokens a task's requests carry: the profile's (none: the API's default), raised after
 * an answer was cut at the limit inside a tool call, as far as the model allows and half the
 * context window.
 */
export class OutputLimit {
  private raised: number | undefined;

  constructor(private readonly model: RunnerModel) {}

  /** What the next request sends; undefined leaves it to the API. */
  get current(): number | undefined {
    return this.raised ?? (this.model.maxOutputTokens || undefined);
  }

  /** Output tokens kept free in the context window for the answer of a request sending `maxTokens`. */
  reserve(maxTokens: number | undefined, contextWindow: number): number {
    if (this.model.provider.id === "anthropic") return anthropicMaxTokens(maxTokens, this.model.thinkingBudgetTokens);
    return maxTokens ?? Math.min(8192, Math.floor(contextWindow / 4));
  }

  /** An answer was cut at `limit`: allow twice as much (at least 8192) next time, if the model allows it. */
  raise(limit: number, contextWindow: number): void {
    const known = this.model.modelMaxOutputTokens ?? (this.model.provider.id === "anthropic" ? 32_000 : 16_384);
    const ceiling = Math.min(known, Math.floor(contextWindow / 2));
    const raised = Math.min(ceiling, Math.max(limit * 2, 8192));
    if (raised > limit) this.raised = raised;
  }
}
