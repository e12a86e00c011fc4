import type { ModelPrices, TokenUsage } from "./types.js";

export function emptyUsage(): TokenUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/** Cost in US dollars of one request's usage at the given prices per million tokens (see pricing.ts). */
export function computeCostUsd(usage: TokenUsage, prices: ModelPrices): number {
  const perToken = (price: number | undefined) => (price ?? 0) / 1_000_000;
  return (
    usage.inputTokens * perToken(prices.inputPerMTok) +
    usage.outputTokens * perToken(prices.outputPerMTok) +
    usage.cacheReadTokens * perToken(prices.cacheReadPerMTok) +
    usage.cacheWriteTokens * perToken(prices.cacheWritePerMTok)
  );
}
