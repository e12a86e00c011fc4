/**
 * The script a scripted model server plays: one turn per request received, in order, whatever
 * the wire format of the request. A script is plain JSON so that a separate process can play it.
 */
import { nth } from "../helpers/items.js";

export interface ScriptToolCall {
  /** Defaults to toolu_<n> (Anthropic) / call_<n> (OpenAI). */
  id?: string;
  name: string;
  /** The arguments object; or `rawArguments` to send text that may not be valid JSON. */
  input?: Record<string, unknown>;
  rawArguments?: string;
}

export interface ScriptUsage {
  /** Default: 0, or the server's count of the prompt when the script has a contextWindow. */
  input?: number;
  /** Default: 0, or the server's count of the answer when the script has a contextWindow. */
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** OpenAI format: the request's cost in US dollars, as OpenRouter reports it (usage.cost). */
  cost?: number;
}

export type InterruptMode =
  | "stall" // keep the connection open and send nothing more
  | "drop" // destroy the socket
  | "error" // send the format's error event (overloaded / server_error), then end
  | "malformed"; // send a data line that is not JSON, then end

export interface ScriptTurn {
  text?: string;
  reasoning?: string;
  toolCalls?: ScriptToolCall[];
  usage?: ScriptUsage;
  /** Neutral stop reason; default tool_use when there are tool calls, else end_turn. */
  stopReason?: "end_turn" | "tool_use" | "max_tokens" | "refusal" | "context_window_exceeded";
  /** OpenAI only: the answer's `refusal` field (streamed as delta.refusal), ending with finish_reason "stop". */
  refusal?: string;
  /** Characters per text/reasoning delta (default 8) and per tool-argument delta (default 7). */
  textChunkChars?: number;
  argumentChunkChars?: number;
  /** Answer with this HTTP status and an error body in the format's shape instead of a stream. */
  status?: number;
  errorMessage?: string;
  /** Value of a retry-after header sent with `status`. */
  retryAfter?: string;
  /** Value of a retry-after-ms header sent with `status` (as OpenAI sends it). */
  retryAfterMs?: string;
  /** Send exactly these SSE frames (each a complete "data: ...\n\n" text) instead of rendering the turn. */
  rawFrames?: string[];
  /** Answer 200 with this JSON body (not a stream), as some compatible servers do for errors. */
  jsonBody?: unknown;
  /** Never send the response headers (a server that accepts and then hangs). */
  holdHeaders?: boolean;
  /** Cut the stream after this many SSE frames and do `interrupt.mode`. */
  interrupt?: { afterFrames: number; mode: InterruptMode };
  /** Write the SSE bytes in pieces of this many bytes (exercises chunk boundaries). */
  writeChunkBytes?: number;
  /** Line ending of the SSE frames (default "\n"). */
  lineEnding?: "\n" | "\r\n";
  /** Wait this long before each write (lets a test cancel mid-stream). */
  writeDelayMs?: number;
  /** Wait this long before sending the response headers (a model loading, a slow first byte). */
  firstByteDelayMs?: number;
  /**
   * Send the answer with its stop reason and usage, then keep the connection open without the
   * format's last event (OpenAI's [DONE], Anthropic's message_stop), as some proxies do.
   */
  holdAfterFinish?: boolean;
  /**
   * Stop the answer where it reaches the request's max_tokens (the server's token count of the
   * text and the tool arguments, see tokens.ts), with stop reason max_tokens: a tool call cut
   * there has arguments that are not valid JSON, as with a real model.
   */
  honorMaxTokens?: boolean;
  /** Anthropic format: a redacted_thinking block (its opaque data) before the text. */
  redactedThinking?: string;
}

/** A turn played for every request whose system prompt contains `systemIncludes`, outside the sequence. */
export interface ScriptResponder {
  systemIncludes: string;
  turn: ScriptTurn;
}

export interface ModelServerScript {
  turns: ScriptTurn[];
  /** When set, requests with another key get 401 (the message echoes the key, as real APIs do). */
  apiKey?: string;
  /** When set, requests for another model get 404 model_not_found. */
  models?: string[];
  /** Play the turns again from the start when they run out (benchmarks). Default false: 500. */
  loop?: boolean;
  /**
   * The model's context window, in the server's own token count (tokens.ts). A request whose
   * prompt does not fit, or whose prompt plus max_tokens does not, is refused with the format's
   * context-length error (HTTP 400), and turns without scripted usage report the counted tokens.
   */
  contextWindow?: number;
  /** Turns for requests recognised by their system prompt (e.g. summary requests), as often as they come. */
  responders?: ScriptResponder[];
  /**
   * DeepSeek's thinking mode (OpenAI format): a request with an assistant message that lacks
   * the reasoning_content the server streamed for it is refused with DeepSeek's 400.
   */
  deepseekThinking?: boolean;
  /** Like Ollama with a model that has no tool support: a request with `tools` is refused (400). */
  rejectTools?: boolean;
}

export type WireFormat = "anthropic" | "openai";

export interface RecordedRequest {
  format: WireFormat;
  path: string;
  headers: Record<string, string>;
  body: any;
  /** The server's token count of the request's prompt (tokens.ts). */
  promptTokens: number;
  /** The HTTP status the request was answered with (200 for streams). */
  status: number;
}

/** The request the model server recorded at `index`, or a failure: "expected a 2nd recorded request, got 1". */
export function recorded(requests: readonly RecordedRequest[], index: number): RecordedRequest {
  return nth(requests, index, "recorded request");
}
