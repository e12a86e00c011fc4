/**
 * The provider-neutral shapes the turn loop speaks: a request (system prompt, conversation,
 * tools) and the normalised events a streaming model answer turns into, whatever the wire
 * format (Anthropic Messages or OpenAI-compatible Chat Completions).
 */
import type { ModelError } from "./errors.js";

export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; toolUseId: string; content: string; isError?: boolean };

export interface ModelMessage {
  role: "user" | "assistant";
  content: string | ContentBlock[];
}

/** A tool offered to the model for native tool calling. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of the tool's input object. */
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  systemPrompt: string;
  messages: ModelMessage[];
  tools?: ToolSpec[];
  /** Upper bound of output tokens; Anthropic requires one, so it defaults to 8192 there. */
  maxTokens?: number;
  temperature?: number;
}

/**
 * Token counts of one request. `inputTokens` counts uncached input only (Anthropic reports it
 * so; for OpenAI we subtract `prompt_tokens_details.cached_tokens`), so that the four counts
 * never overlap and cost is a plain weighted sum.
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** Prices in US dollars per million tokens, from the profile. Missing prices count as 0. */
export interface ModelPrices {
  inputPerMTok?: number;
  outputPerMTok?: number;
  cacheReadPerMTok?: number;
  cacheWritePerMTok?: number;
}

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "other";

/**
 * Normalised stream events. Every stream ends with exactly one `stop` or `error` event; a
 * `usage` event (the request's totals, once) comes just before it when the server reported
 * usage. Tool calls arrive as start, argument deltas, end (with the parsed input).
 */
export type ModelStreamEvent =
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  | { type: "tool_call_start"; id: string; name: string }
  | { type: "tool_call_delta"; id: string; argumentsDelta: string }
  | {
      type: "tool_call_end";
      id: string;
      name: string;
      /** The raw JSON text of the arguments, as streamed. */
      arguments: string;
      /** The parsed arguments, or undefined when they are not a JSON object (see parseError). */
      input: Record<string, unknown> | undefined;
      parseError?: string;
    }
  | { type: "usage"; usage: TokenUsage; costUsd: number }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  | { type: "stop"; reason: StopReason; rawReason: string | null }
  | { type: "error"; error: ModelError };

export interface ModelProvider {
  readonly id: "anthropic" | "openai";
  readonly model: string;
  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent>;
}

/** Retry policy for 429, 5xx, network failures and streams that drop before any output. */
export interface RetryPolicy {
  /** Total attempts including the first. Default 4. */
  maxAttempts: number;
  /** First backoff delay; doubles each attempt, with full jitter. Default 1000 ms. */
  baseDelayMs: number;
  /** Cap of a computed backoff delay. Default 30 s. */
  maxDelayMs: number;
  /** A server's retry-after longer than this is not waited for: the error is returned. Default 60 s. */
  maxRetryAfterMs: number;
}

export interface ProviderConfig {
  /** e.g. https://api.anthropic.com or https://api.openai.com/v1 (no trailing path). */
  baseUrl: string;
  model: string;
  /** Passed in from the secrets store; never logged, never part of an error message. */
  apiKey: string;
  prices?: ModelPrices;
  retry?: Partial<RetryPolicy>;
  /** No bytes for this long (waiting for headers or between chunks) = stalled stream. Default 60 s. */
  idleTimeoutMs?: number;
  /** Extra headers (e.g. OpenRouter's HTTP-Referer). Never put secrets other than the key here. */
  headers?: Record<string, string>;
}
