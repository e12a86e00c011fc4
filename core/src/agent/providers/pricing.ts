/**
 * Which prices a profile's requests are charged at: the profile's own prices (0 = not set),
 * else the price table's list prices for its model, else none (the cost is unknown, never
 * shown as $0) unless the profile says the model costs nothing. A provider that reports the
 * cost of each request (OpenRouter's usage.cost) is believed over all of these.
 */
import { listPrices } from "./price-table.js";
import type { ModelPrices } from "./types.js";

export interface ProfilePricing {
  model: string;
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok: number;
  cacheWritePerMTok: number;
  /** The model costs nothing (a local server): $0, not unknown, when no price is set. */
  zeroCost: boolean;
}

export interface ResolvedPrices {
  /** Undefined: nothing is known, the cost of a request is unknown. */
  prices: ModelPrices | undefined;
  /** Where they come from, for people: "profile", "price table (gpt-4o)", "zero cost", "unknown". */
  source: string;
}

export function resolvePrices(p: ProfilePricing): ResolvedPrices {
  const listed = listPrices(p.model);
  const own = [p.inputPerMTok, p.outputPerMTok, p.cacheReadPerMTok, p.cacheWritePerMTok].some((v) => v > 0);
  if (own) {
    // Cache prices the profile leaves out come from the table, else the input price (an upper
    // bound for cache reads, near enough for writes): never a silent $0.
    const fill = (value: number, fromTable: number | undefined) => (value > 0 ? value : (fromTable ?? p.inputPerMTok));
    const prices: ModelPrices = {
      inputPerMTok: p.inputPerMTok,
      outputPerMTok: p.outputPerMTok,
      cacheReadPerMTok: fill(p.cacheReadPerMTok, listed?.cacheReadPerMTok),
      cacheWritePerMTok: fill(p.cacheWritePerMTok, listed?.cacheWritePerMTok),
    };
    const filled = listed && (p.cacheReadPerMTok <= 0 || p.cacheWritePerMTok <= 0);
    return { prices, source: filled ? `profile (cache prices from the price table: ${listed.key})` : "profile" };
  }
  if (listed) {
    const { key, ...prices } = listed;
    return { prices, source: `price table (${key})` };
  }
  if (p.zeroCost)
    return {
      prices: { inputPerMTok: 0, outputPerMTok: 0, cacheReadPerMTok: 0, cacheWritePerMTok: 0 },
      source: "zero cost",
    };
  return { prices: undefined, source: "unknown" };
}
