/**
 * The HTTP half shared by both providers: POST, status -> typed error, SSE bytes -> a wire
 * decoder -> normalised events, with an idle timeout, cancellation and retries with backoff.
 * A retry happens only while nothing but `retry` events has reached the caller, so the caller
 * never sees half of one answer followed by another.
 */
import { DlineError } from "../../errors.js";
import { computeCostUsd } from "./cost.js";
import { ModelError, redactSecrets } from "./errors.js";
import { errorFromResponse, makeErrorContext, type ErrorContext } from "./http-errors.js";
import { backoffDelayMs, defaultRetryPolicy, sleep } from "./retry.js";
import { SseParser, type SseEvent } from "./sse.js";
import type { ModelStreamEvent, ProviderConfig, StopReason, TokenUsage } from "./types.js";

/** Turns one wire format's SSE events into normalised events. One instance per attempt. */
export interface WireDecoder {
  /** Appends the events `sse` produces to `out`; throws ModelError on a malformed or error event. */
  decode(sse: SseEvent, out: ModelStreamEvent[]): void;
  /** Called once when the stream ended; appends what is still open (e.g. tool calls). */
  flush(out: ModelStreamEvent[]): void;
  /** True once the format's final event (message_stop, [DONE]) or a stop reason was seen. */
  readonly complete: boolean;
  /** True when the server said it will send nothing more (no need to wait for the socket to close). */
  readonly finished: boolean;
  readonly usage: TokenUsage | undefined;
  readonly stop: { reason: StopReason; raw: string | null };
}

export interface WireRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  createDecoder(): WireDecoder;
}

export const defaultIdleTimeoutMs = 60_000;

/** A profile's base URL must be an http(s) URL; anything else is a configuration error, not a retry. */
export function assertHttpBaseUrl(baseUrl: string): void {
  let protocol = "";
  try {
    protocol = new URL(baseUrl).protocol;
  } catch {
    // reported below
  }
  if (protocol !== "http:" && protocol !== "https:") {
    throw new DlineError("invalid_argument", "The profile's base URL is not an http:// or https:// URL.");
  }
}

export async function* runModelStream(
  config: ProviderConfig,
  providerName: string,
  request: WireRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<ModelStreamEvent> {
  const policy = { ...defaultRetryPolicy, ...config.retry };
  const errorContext = makeErrorContext(providerName, config);
  for (let attempt = 1; ; attempt++) {
    const outcome = yield* attemptOnce(config, request, signal, errorContext);
    if (outcome.done) return;
    const error = outcome.error;
    const retryAfter = error.details.retryAfterMs;
    const canRetry = !outcome.sentOutput && error.retryable && attempt < policy.maxAttempts && (retryAfter === undefined || retryAfter <= policy.maxRetryAfterMs);
    if (!canRetry) {
      if (outcome.usage) yield usageEvent(outcome.usage, config);
      yield { type: "error", error };
      return;
    }
    const delayMs = backoffDelayMs(policy, attempt, retryAfter);
    yield { type: "retry", attempt, delayMs, reason: error.message };
    try {
      await sleep(delayMs, signal);
    } catch {
      yield { type: "error", error: canceledError() };
      return;
    }
  }
}

type AttemptOutcome = { done: true } | { done: false; error: ModelError; sentOutput: boolean; usage: TokenUsage | undefined };

async function* attemptOnce(
  config: ProviderConfig,
  request: WireRequest,
  signal: AbortSignal | undefined,
  errorContext: ErrorContext,
): AsyncGenerator<ModelStreamEvent, AttemptOutcome> {
  if (signal?.aborted) return { done: false, error: canceledError(), sentOutput: false, usage: undefined };
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  const idleMs = config.idleTimeoutMs ?? defaultIdleTimeoutMs;
  let stalled = false;
  let armed = false;
  // One timer, armed only while we wait for the server (not while the caller handles events).
  const idleTimer = setTimeout(function onIdle() {
    if (armed) {
      stalled = true;
      controller.abort();
    }
  }, idleMs);
  idleTimer.unref();
  const arm = () => {
    armed = true;
    idleTimer.refresh();
  };
  let sentOutput = false;
  let gotResponse = false;
  let decoder: WireDecoder | undefined;
  const out: ModelStreamEvent[] = [];
  try {
    arm();
    const response = await fetch(request.url, { method: "POST", headers: request.headers, body: request.body, signal: controller.signal });
    armed = false;
    gotResponse = true;
    if (!response.ok) {
      arm();
      const error = await errorFromResponse(response, errorContext);
      armed = false;
      return { done: false, error, sentOutput, usage: undefined };
    }
    const contentType = response.headers.get("content-type") ?? "";
    if (!contentType.includes("text/event-stream") || !response.body) {
      // Some compatible servers answer an error with status 200 and a JSON body.
      arm();
      const error = contentType.includes("json")
        ? await errorFromResponse(response, errorContext, "malformed_stream")
        : new ModelError("malformed_stream", `${errorContext.providerName} answered with "${contentType || "no content type"}" instead of an event stream; check the base URL ${errorContext.baseUrl}.`);
      armed = false;
      await response.body?.cancel().catch(() => undefined);
      return { done: false, error, sentOutput, usage: undefined };
    }
    decoder = request.createDecoder();
    const parser = new SseParser();
    const reader = response.body.getReader();
    while (!decoder.finished) {
      arm();
      const { done, value } = await reader.read();
      armed = false;
      if (done) {
        for (const sse of parser.end()) decoder.decode(sse, out);
        break;
      }
      const events = parser.push(value);
      for (let i = 0; i < events.length && !decoder.finished; i++) decoder.decode(events[i], out);
      if (out.length > 0) {
        sentOutput = true;
        for (let i = 0; i < out.length; i++) {
          yield out[i];
          // The caller may abort while holding an event: deliver nothing more after that.
          if (signal?.aborted) {
            out.length = 0;
            throw canceledError();
          }
        }
        out.length = 0;
      }
    }
    if (!decoder.finished) reader.cancel().catch(() => undefined);
    if (out.length > 0) {
      // events of a last frame the server ended without a blank line
      sentOutput = true;
      for (const event of out) yield event;
      out.length = 0;
    }
    if (!decoder.complete) {
      const error = new ModelError("stream_dropped", `The ${errorContext.providerName} stream ended before the answer was complete.`);
      return { done: false, error, sentOutput, usage: decoder.usage };
    }
    decoder.flush(out);
    for (const event of out) yield event;
    out.length = 0;
    if (decoder.usage) yield usageEvent(decoder.usage, config);
    yield { type: "stop", reason: decoder.stop.reason, rawReason: decoder.stop.raw };
    return { done: true };
  } catch (err) {
    // Events decoded before a mid-stream error are still delivered, so no text is lost.
    if (out.length > 0) {
      sentOutput = true;
      for (const event of out) yield event;
    }
    const error = toModelError(err, { stalled, canceled: signal?.aborted === true, gotResponse, idleMs, errorContext });
    return { done: false, error, sentOutput, usage: decoder?.usage };
  } finally {
    armed = false;
    clearTimeout(idleTimer);
    signal?.removeEventListener("abort", onAbort);
    controller.abort(); // releases the connection if the caller stopped iterating early
  }
}

function usageEvent(usage: TokenUsage, config: ProviderConfig): ModelStreamEvent {
  return { type: "usage", usage: { ...usage }, costUsd: computeCostUsd(usage, config.prices) };
}

function canceledError(): ModelError {
  return new ModelError("canceled", "The model request was cancelled.");
}

function toModelError(err: unknown, ctx: { stalled: boolean; canceled: boolean; gotResponse: boolean; idleMs: number; errorContext: ErrorContext }): ModelError {
  if (ctx.canceled) return canceledError();
  if (ctx.stalled) {
    const seconds = (ctx.idleMs / 1000).toFixed(ctx.idleMs % 1000 === 0 ? 0 : 1);
    return new ModelError("stalled", `${ctx.errorContext.providerName} sent nothing for ${seconds} s; the request was abandoned.`);
  }
  if (err instanceof ModelError) return err;
  if (err instanceof SyntaxError) {
    return new ModelError("malformed_stream", `${ctx.errorContext.providerName} sent an event that is not valid JSON.`);
  }
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  const code = typeof cause?.code === "string" ? cause.code : "";
  const text = redactSecrets(err instanceof Error ? err.message : String(err), ctx.errorContext.apiKey);
  if (!ctx.gotResponse) {
    return new ModelError("network", `Cannot reach ${ctx.errorContext.baseUrl}${code ? ` (${code})` : ""}.`);
  }
  return new ModelError("stream_dropped", `The ${ctx.errorContext.providerName} stream broke: ${text}${code ? ` (${code})` : ""}.`);
}
