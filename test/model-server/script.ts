/**
 * The script a scripted model server plays: one turn per request received, in order, whatever
 * the wire format of the request. A script is plain JSON so that a separate process can play it.
 */

export interface ScriptToolCall {
  /** Defaults to toolu_<n> (Anthropic) / call_<n> (OpenAI). */
  id?: string;
  name: string;
  /** The arguments object; or `rawArguments` to send text that may not be valid JSON. */
  input?: Record<string, unknown>;
  rawArguments?: string;
}

export interface ScriptUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
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
  stopReason?: "end_turn" | "tool_use" | "max_tokens" | "refusal";
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
}

export interface ModelServerScript {
  turns: ScriptTurn[];
  /** When set, requests with another key get 401 (the message echoes the key, as real APIs do). */
  apiKey?: string;
  /** When set, requests for another model get 404 model_not_found. */
  models?: string[];
  /** Play the turns again from the start when they run out (benchmarks). Default false: 500. */
  loop?: boolean;
}

export type WireFormat = "anthropic" | "openai";

export interface RecordedRequest {
  format: WireFormat;
  path: string;
  headers: Record<string, string>;
  body: any;
}
