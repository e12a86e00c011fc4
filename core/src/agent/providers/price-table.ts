/**
 * List prices of well-known models, in US dollars per million tokens, so that a profile that
 * names one of them costs what the provider bills without the person typing prices in (and the
 * most output tokens each allows, so a cut answer's limit is raised only as far as it goes). A
 * profile's own prices override these; a provider's reported cost (OpenRouter's usage.cost)
 * overrides both. Checked against the providers' pricing pages, 2025-11; the long-context
 * surcharges (e.g. Sonnet over 200k input tokens) are not modelled.
 */
import type { ModelPrices } from "./types.js";

type Row = readonly [input: number, output: number, cacheRead: number, cacheWrite: number, maxOutputTokens: number];

// Anthropic: cache writes are the 5-minute ones (what the providers' cache_control sends).
const anthropic: Record<string, Row> = {
  "claude-opus-4-5": [5, 25, 0.5, 6.25, 64000],
  "claude-opus-4-1": [15, 75, 1.5, 18.75, 32000],
  "claude-opus-4": [15, 75, 1.5, 18.75, 32000],
  "claude-opus-4-0": [15, 75, 1.5, 18.75, 32000],
  "claude-sonnet-4-5": [3, 15, 0.3, 3.75, 64000],
  "claude-sonnet-4": [3, 15, 0.3, 3.75, 64000],
  "claude-sonnet-4-0": [3, 15, 0.3, 3.75, 64000],
  "claude-3-7-sonnet": [3, 15, 0.3, 3.75, 64000],
  "claude-3-5-sonnet": [3, 15, 0.3, 3.75, 8192],
  "claude-haiku-4-5": [1, 5, 0.1, 1.25, 64000],
  "claude-3-5-haiku": [0.8, 4, 0.08, 1, 8192],
  "claude-3-haiku": [0.25, 1.25, 0.03, 0.3, 4096],
  "claude-3-opus": [15, 75, 1.5, 18.75, 4096],
};

// OpenAI: cached input is the cache read price; there is no separate write price.
const openai: Record<string, Row> = {
  "gpt-5-1": [1.25, 10, 0.125, 0, 128000],
  "gpt-5": [1.25, 10, 0.125, 0, 128000],
  "gpt-5-codex": [1.25, 10, 0.125, 0, 128000],
  "gpt-5-1-codex": [1.25, 10, 0.125, 0, 128000],
  "gpt-5-mini": [0.25, 2, 0.025, 0, 128000],
  "gpt-5-nano": [0.05, 0.4, 0.005, 0, 128000],
  "gpt-4-1": [2, 8, 0.5, 0, 32768],
  "gpt-4-1-mini": [0.4, 1.6, 0.1, 0, 32768],
  "gpt-4-1-nano": [0.1, 0.4, 0.025, 0, 32768],
  "gpt-4o": [2.5, 10, 1.25, 0, 16384],
  "gpt-4o-mini": [0.15, 0.6, 0.075, 0, 16384],
  o1: [15, 60, 7.5, 0, 100000],
  o3: [2, 8, 0.5, 0, 100000],
  "o3-mini": [1.1, 4.4, 0.55, 0, 100000],
  "o4-mini": [1.1, 4.4, 0.275, 0, 100000],
};

// DeepSeek (V3.2 prices): cache hits are reported as prompt_cache_hit_tokens.
const deepseek: Record<string, Row> = {
  "deepseek-chat": [0.28, 0.42, 0.028, 0, 8192],
  "deepseek-reasoner": [0.28, 0.42, 0.028, 0, 65536],
};

// Google (through its OpenAI-compatible endpoint), prompts up to 200k tokens.
const google: Record<string, Row> = {
  "gemini-2-5-pro": [1.25, 10, 0.125, 0, 65536],
  "gemini-2-5-flash": [0.3, 2.5, 0.03, 0, 65536],
  "gemini-2-5-flash-lite": [0.1, 0.4, 0.01, 0, 65536],
};

const table: ReadonlyMap<string, Row> = new Map(Object.entries({ ...anthropic, ...openai, ...deepseek, ...google }));

/**
 * The table's key for a model id as profiles and routers spell it: without a router's provider
 * prefix ("anthropic/claude-sonnet-4.5"), dots as dashes, and without a date or "latest" suffix
 * ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06", "claude-3-5-sonnet-latest").
 */
export function priceTableKey(model: string): string {
  let key = model.trim().toLowerCase();
  key = key.slice(key.lastIndexOf("/") + 1);
  key = key.replace(/:.*$/, "").replace(/\./g, "-");
  key = key.replace(/-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, "");
  return key;
}

/** The most output tokens a well-known model allows in one answer (undefined: not known). */
export function knownMaxOutputTokens(model: string): number | undefined {
  return table.get(priceTableKey(model))?.[4];
}

/** The list prices of a well-known model, or undefined when the table does not know it. */
export function listPrices(model: string): (ModelPrices & { key: string }) | undefined {
  const key = priceTableKey(model);
  const row = table.get(key);
  if (!row) return undefined;
  return { key, inputPerMTok: row[0], outputPerMTok: row[1], cacheReadPerMTok: row[2], cacheWritePerMTok: row[3] };
}
