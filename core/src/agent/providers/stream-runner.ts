/**
 * The HTTP half shared by both providers: POST, status -> typed error, SSE bytes -> a wire
 * decoder -> normalised events, with a first-byte and idle timeout, cancellation and retries
 * with backoff. A failure after part of the answer was delivered is retried too: the `retry`
 * event then says `discard`, and the caller drops what it received of the failed attempt.
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
  /** True once the answer is whole: its stop reason (or the format's final event) was seen. */
  readonly complete: boolean;
  /** True when nothing more is needed from the server (no need to wait for the socket to close). */
  readonly finished: boolean;
  readonly usage: TokenUsage | undefined;
  /** The request's cost as the provider reported it (OpenRouter's usage.cost), if it did. */
  readonly reportedCostUsd?: number;
  readonly stop: { reason: StopReason; raw: string | null };
}

export interface WireRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  createDecoder(): WireDecoder;
}

export const defaultIdleTimeoutMs = 60_000;
/** After the answer's stop reason, what is still to come (usage, the final event) gets this long. */
const finishGraceMs = 3_000;
/** While no byte has come, a `waiting` event every so often, so people see the model is awaited. */
export const waitingNoticeMs = 5_000;

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
    // What the failed attempt used is billed all the same.
    if (outcome.usage) yield usageEvent(outcome.usage, outcome.reportedCostUsd, config);
    const retryAfter = error.details.retryAfterMs;
    const canRetry =
      error.retryable &&
      attempt < policy.maxAttempts &&
      (retryAfter === undefined || retryAfter <= policy.maxRetryAfterMs);
    if (!canRetry) {
      yield { type: "error", error };
      return;
    }
    const delayMs = backoffDelayMs(policy, attempt, retryAfter);
    yield {
      type: "retry",
      attempt: attempt + 1,
      maxAttempts: policy.maxAttempts,
      delayMs,
      reason: error.message,
      discard: outcome.sentOutput,
    };
    try {
      await sleep(delayMs, signal);
    } catch {
      yield { type: "error", error: canceledError() };
      return;
    }
  }
}

type AttemptOutcome =
  | { done: true }
  | {
      done: false;
      error: ModelError;
      sentOutput: boolean;
      usage: TokenUsage | undefined;
      reportedCostUsd: number | undefined;
    };

async function* attemptOnce(
  config: ProviderConfig,
  request: WireRequest,
  signal: AbortSignal | undefined,
  errorContext: ErrorContext,
): AsyncGenerator<ModelStreamEvent, AttemptOutcome> {
  if (signal?.aborted)
    return { done: false, error: canceledError(), sentOutput: false, usage: undefined, reportedCostUsd: undefined };
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  const idleMs = config.idleTimeoutMs ?? defaultIdleTimeoutMs;
  let stalled = false;
  let graceOver = false;
  let armed = false;
  let decoder: WireDecoder | undefined;
  // One timer, armed only while we wait for the server (not while the caller handles events).
  // Once the answer is complete, what is left gets a short grace, and then the answer is taken.
  const idleTimer = setTimeout(function onIdle() {
    if (!armed) return;
    if (decoder?.complete) graceOver = true;
    else stalled = true;
    controller.abort();
  }, idleMs);
  idleTimer.unref();
  const arm = () => {
    armed = true;
    idleTimer.refresh();
  };
  let graceTimer: NodeJS.Timeout | undefined;
  const armGrace = () => {
    if (graceTimer) return;
    graceTimer = setTimeout(() => {
      if (armed) {
        graceOver = true;
        controller.abort();
      }
    }, finishGraceMs);
    graceTimer.unref();
  };
  let sentOutput = false;
  let gotResponse = false;
  let gotFirstByte = false;
  const out: ModelStreamEvent[] = [];
  const startedAt = Date.now();
  // Until the first byte, `waiting` notices are yielded while we wait.
  const waitFor = <T>(promise: Promise<T>) => withWaitingNotices(promise, startedAt, idleMs, () => !gotFirstByte);
  try {
    arm();
    const response = yield* waitFor(
      fetch(request.url, { method: "POST", headers: request.headers, body: request.body, signal: controller.signal }),
    );
    armed = false;
    gotResponse = true;
    if (!response.ok) {
      arm();
      const error = await errorFromResponse(response, errorContext);
      armed = false;
      return { done: false, error, sentOutput, usage: undefined, reportedCostUsd: undefined };
    }
    const contentType = response.headers.get("content-type") ?? "";
    if (!contentType.includes("text/event-stream") || !response.body) {
      // Some compatible servers answer an error with status 200 and a JSON body.
      arm();
      const error = contentType.includes("json")
        ? await errorFromResponse(response, errorContext, "malformed_stream")
        : new ModelError(
            "malformed_stream",
            `${errorContext.providerName} answered with "${contentType || "no content type"}" instead of an event stream; check the base URL ${errorContext.baseUrl}.`,
          );
      armed = false;
      await response.body?.cancel().catch(() => undefined);
      return { done: false, error, sentOutput, usage: undefined, reportedCostUsd: undefined };
    }
    decoder = request.createDecoder();
    const parser = new SseParser();
    const reader = response.body.getReader();
    while (!decoder.finished) {
      arm();
      if (decoder.complete) armGrace();
      let chunk: { done: boolean; value?: Uint8Array };
      try {
        chunk = gotFirstByte ? await reader.read() : yield* waitFor(reader.read());
      } catch (err) {
        // The answer was whole and only its tail (usage, the final event) did not come: take it.
        if (graceOver && decoder.complete) break;
        throw err;
      }
      armed = false;
      gotFirstByte = true;
      const { done, value } = chunk;
      if (done) {
        for (const sse of parser.end()) decoder.decode(sse, out);
        break;
      }
      const events = parser.push(value!);
      for (let i = 0; i < events.length && !decoder.finished; i++) decoder.decode(events[i]!, out);
      if (out.length > 0) {
        sentOutput = true;
        for (let i = 0; i < out.length; i++) {
          yield out[i]!;
          // The caller may abort while holding an event: deliver nothing more after that.
          if (signal?.aborted) {
            out.length = 0;
            throw canceledError();
          }
        }
        out.length = 0;
      }
    }
    if (!decoder.finished || graceOver) reader.cancel().catch(() => undefined);
    if (out.length > 0) {
      // events of a last frame the server ended without a blank line
      sentOutput = true;
      for (const event of out) yield event;
      out.length = 0;
    }
    if (!decoder.complete) {
      const error = new ModelError(
        "stream_dropped",
        `${errorContext.providerName}'s stream ended before the answer was complete.`,
      );
      return { done: false, error, sentOutput, usage: decoder.usage, reportedCostUsd: decoder.reportedCostUsd };
    }
    decoder.flush(out);
    for (const event of out) yield event;
    out.length = 0;
    if (decoder.usage) yield usageEvent(decoder.usage, decoder.reportedCostUsd, config);
    yield { type: "stop", reason: decoder.stop.reason, rawReason: decoder.stop.raw };
    return { done: true };
  } catch (err) {
    // Events decoded before a mid-stream error are still delivered (the caller learns from the
    // retry event whether to keep them).
    if (out.length > 0) {
      sentOutput = true;
      for (const event of out) yield event;
    }
    const error = toModelError(err, { stalled, canceled: signal?.aborted === true, gotResponse, idleMs, errorContext });
    return { done: false, error, sentOutput, usage: decoder?.usage, reportedCostUsd: decoder?.reportedCostUsd };
  } finally {
    armed = false;
    clearTimeout(idleTimer);
    if (graceTimer) clearTimeout(graceTimer);
    signal?.removeEventListener("abort", onAbort);
    controller.abort(); // releases the connection if the caller stopped iterating early
  }
}

/**
 * Awaits `promise`, yielding a `waiting` event every waitingNoticeMs while `stillWaiting()`
 * holds (no byte of the answer yet), so that a slow first byte is visible to people.
 */
async function* withWaitingNotices<T>(
  promise: Promise<T>,
  startedAt: number,
  timeoutMs: number,
  stillWaiting: () => boolean,
): AsyncGenerator<ModelStreamEvent, T> {
  let settled = false;
  const tracked = promise.finally(() => {
    settled = true;
  });
  tracked.catch(() => undefined);
  for (;;) {
    const waited = Date.now() - startedAt;
    const nextNotice = (Math.floor(waited / waitingNoticeMs) + 1) * waitingNoticeMs;
    let timer: NodeJS.Timeout | undefined;
    const tick = new Promise<"tick">((resolve) => {
      timer = setTimeout(() => resolve("tick"), nextNotice - waited);
      timer.unref();
    });
    const winner = await Promise.race([
      tracked.then(
        () => "done" as const,
        () => "done" as const,
      ),
      tick,
    ]);
    clearTimeout(timer);
    if (winner === "done" || settled) return await promise;
    if (stillWaiting()) yield { type: "waiting", waitedMs: nextNotice, timeoutMs };
  }
}

function usageEvent(usage: TokenUsage, reportedCostUsd: number | undefined, config: ProviderConfig): ModelStreamEvent {
  const costUsd = reportedCostUsd ?? (config.prices ? computeCostUsd(usage, config.prices) : undefined);
  return { type: "usage", usage: { ...usage }, costUsd };
}

function canceledError(): ModelError {
  return new ModelError("canceled", "The model request was cancelled.");
}

function toModelError(
  err: unknown,
  ctx: { stalled: boolean; canceled: boolean; gotResponse: boolean; idleMs: number; errorContext: ErrorContext },
): ModelError {
  if (ctx.canceled) return canceledError();
  if (ctx.stalled) {
    const seconds = (ctx.idleMs / 1000).toFixed(ctx.idleMs % 1000 === 0 ? 0 : 1);
    return new ModelError(
      "stalled",
      `${ctx.errorContext.providerName} sent nothing for ${seconds} s; the request was abandoned.`,
    );
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
  return new ModelError(
    "stream_dropped",
    `${ctx.errorContext.providerName}'s stream broke: ${text}${code ? ` (${code})` : ""}.`,
  );
}
