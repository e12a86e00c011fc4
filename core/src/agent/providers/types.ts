/**
 * The provider-neutral shapes the turn loop speaks: a request (system prompt, conversation,
 * tools) and the normalised events a streaming model answer turns into, whatever the wire
 * format (Anthropic Messages or OpenAI-compatible Chat Completions).
 */
import type { ModelError } from "./errors.js";

/**
 * A model's reasoning, kept with its answer because some APIs want it back: Anthropic's
 * thinking blocks (with the signature that proves them unmodified, or redacted as opaque data)
 * and DeepSeek's `reasoning_content`.
 */
export interface ThinkingBlock {
  type: "thinking";
  text: string;
  /** Anthropic: the block's signature; sent back with it. */
  signature?: string;
  /** Anthropic: a redacted_thinking block's opaque data (text is empty then). */
  redactedData?: string;
  /** How the API sent it, hence how it goes back: Anthropic blocks or an OpenAI-style reasoning_content field. */
  wire: "anthropic" | "reasoning_content" | "other";
}

export type ContentBlock =
  | { type: "text"; text: string }
  | ThinkingBlock
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

/** Prices in US dollars per million tokens (see pricing.ts for where they come from). */
export interface ModelPrices {
  inputPerMTok?: number;
  outputPerMTok?: number;
  cacheReadPerMTok?: number;
  cacheWritePerMTok?: number;
}

/** `context_window_exceeded`: the answer stopped because it filled what was left of the context window. */
export type StopReason =
  "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "context_window_exceeded" | "other";

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
  /** A reasoning block is complete (after its reasoning_delta events): what goes back to the API. */
  | { type: "reasoning_end"; block: ThinkingBlock }
  /** Cost in US dollars: the provider's reported cost, else from the prices; undefined when no price is known. */
  | { type: "usage"; usage: TokenUsage; costUsd: number | undefined }
  /**
   * The request failed and is sent again after `delayMs`. `attempt` is the attempt about to be
   * made. With `discard`, the failed attempt had already delivered events: the caller drops
   * them (text, reasoning, tool calls), as the next attempt answers from the start.
   */
  | { type: "retry"; attempt: number; maxAttempts: number; delayMs: number; reason: string; discard: boolean }
  /** No first byte yet: sent every few seconds while waiting, up to `timeoutMs`. */
  | { type: "waiting"; waitedMs: number; timeoutMs: number }
  | { type: "stop"; reason: StopReason; rawReason: string | null }
  | { type: "error"; error: ModelError };

export interface ModelProvider {
  readonly id: "anthropic" | "openai";
  readonly model: string;
  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent>;
}

/** Retry policy for 429, 5xx, network failures and streams that drop before any output. */
export interface RetryPolicy {
  /** Total attempts including the first. Default 6 (about a minute of backoff). */
  maxAttempts: number;
  /** First backoff delay; doubles each attempt, with jitter. Default 2000 ms. */
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
  /** Undefined: no price is known, the cost of a request is unknown unless the provider reports it. */
  prices?: ModelPrices;
  retry?: Partial<RetryPolicy>;
  /** No bytes for this long (waiting for headers or between chunks) = stalled stream. Default 60 s. */
  idleTimeoutMs?: number;
  /** OpenAI-style `reasoning_effort` ("low", "medium", "high", ...); undefined sends none. */
  reasoningEffort?: string;
  /** Anthropic extended thinking budget in tokens; undefined or 0 = off. */
  thinkingBudgetTokens?: number;
  /** Extra headers (e.g. OpenRouter's HTTP-Referer). Never put secrets other than the key here. */
  headers?: Record<string, string>;
}
