import { DlineError, type DlineErrorCode } from "../../errors.js";

/**
 * Why a model request failed. `retryable` kinds are retried by the provider (before any output
 * reached the caller); the rest become a task error with a sentence a person can act on.
 */
export type ModelErrorKind =
  | "auth" // 401/403: bad or missing key
  | "model_not_found" // 404 / model_not_found
  | "bad_request" // other 4xx
  | "context_overflow" // the prompt does not fit the model's context window
  | "tools_unsupported" // the server refuses native tool calling for this model
  | "rate_limited" // 429
  | "server" // 5xx, overloaded
  | "network" // connection refused/reset, DNS
  | "stream_dropped" // the stream ended before its final event
  | "malformed_stream" // bytes that are not the wire format
  | "stalled" // no bytes for idleTimeoutMs
  | "canceled"; // the caller's AbortSignal

const retryableKinds: ReadonlySet<ModelErrorKind> = new Set([
  "rate_limited",
  "server",
  "network",
  "stream_dropped",
  "stalled",
]);

const dlineCodes: Record<ModelErrorKind, DlineErrorCode> = {
  auth: "permission_denied",
  model_not_found: "not_found",
  bad_request: "invalid_argument",
  context_overflow: "resource_exhausted",
  tools_unsupported: "failed_precondition",
  rate_limited: "resource_exhausted",
  server: "unavailable",
  network: "unavailable",
  stream_dropped: "unavailable",
  malformed_stream: "internal",
  stalled: "deadline_exceeded",
  canceled: "canceled",
};

export class ModelError extends DlineError {
  readonly retryable: boolean;

  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly details: {
      status?: number;
      retryAfterMs?: number;
      /** context_overflow: the prompt's size and the window, when the server said them. */
      promptTokens?: number;
      contextLimit?: number;
    } = {},
  ) {
    super(dlineCodes[kind], message);
    this.name = "ModelError";
    this.retryable = retryableKinds.has(kind);
  }
}

/**
 * Removes the API key (and anything shaped like a provider key) from text that may end up in
 * an error message: servers sometimes echo the key they rejected.
 */
export function redactSecrets(text: string, apiKey: string): string {
  let out = text;
  // A short key would garble any text it is cut out of: withhold the whole text instead.
  if (apiKey && apiKey.length < 8 && text.includes(apiKey)) return "[withheld: it may contain the API key]";
  if (apiKey) {
    out = out.split(apiKey).join("[redacted]");
    // A server may echo a shortened key ("sk-abc...wxyz"): drop any 8+ char run of it too.
    if (apiKey.length >= 12) {
      for (let len = Math.min(apiKey.length - 1, 24); len >= 8; len -= 4) {
        out = out.split(apiKey.slice(0, len)).join("[redacted]");
        out = out.split(apiKey.slice(-len)).join("[redacted]");
      }
    }
  }
  return out.replace(/\b(sk-[A-Za-z0-9_-]{2})[A-Za-z0-9_*.-]{6,}/g, "$1[redacted]");
}
