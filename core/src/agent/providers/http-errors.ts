import { ModelError, redactSecrets } from "./errors.js";
import { parseRetryAfterMs } from "./retry.js";

/** What both APIs put in an error body: Anthropic `{error:{type,message}}`, OpenAI `{error:{message,type,code}}`. */
export interface WireErrorBody {
  message: string;
  type: string;
  code: string;
}

export function parseWireError(value: unknown): WireErrorBody | undefined {
  if (!value || typeof value !== "object") return undefined;
  const err = (value as { error?: unknown }).error;
  if (typeof err === "string") return { message: err, type: "", code: "" };
  if (!err || typeof err !== "object") return undefined;
  const e = err as Record<string, unknown>;
  return {
    message: typeof e.message === "string" ? e.message : "",
    type: typeof e.type === "string" ? e.type : "",
    code: typeof e.code === "string" ? e.code : typeof e.code === "number" ? String(e.code) : "",
  };
}

const contextOverflowHints = /context[_ ]length|context window|prompt is too long|too many tokens|maximum context/i;

export interface ErrorContext {
  providerName: string;
  model: string;
  /** Safe to show: credentials in the URL and the key are removed (see makeErrorContext). */
  baseUrl: string;
  apiKey: string;
}

export function makeErrorContext(providerName: string, config: { model: string; baseUrl: string; apiKey: string }): ErrorContext {
  let baseUrl = config.baseUrl;
  try {
    const url = new URL(config.baseUrl);
    url.username = "";
    url.password = "";
    url.search = "";
    baseUrl = url.toString().replace(/\/$/, "");
  } catch {
    // not a URL: fetch will say so; show it redacted
  }
  return { providerName, model: config.model, baseUrl: redactSecrets(baseUrl, config.apiKey), apiKey: config.apiKey };
}

/**
 * Turns a non-2xx response (or a 2xx JSON answer where a stream was expected) into a typed
 * ModelError with a sentence a person can act on.
 */
export async function errorFromResponse(response: Response, ctx: ErrorContext, kindWithoutError?: "malformed_stream"): Promise<ModelError> {
  let bodyText = "";
  try {
    bodyText = (await response.text()).slice(0, 4000);
  } catch {
    // the body is only used for the message; a broken body must not hide the status
  }
  let wire: WireErrorBody | undefined;
  try {
    wire = parseWireError(JSON.parse(bodyText));
  } catch {
    wire = undefined;
  }
  if (response.ok && kindWithoutError) {
    if (!wire) {
      return new ModelError("malformed_stream", `${ctx.providerName} answered with JSON instead of an event stream; check that it supports streaming at ${ctx.baseUrl}.`);
    }
    const message = redactSecrets(wire.message.slice(0, 500), ctx.apiKey);
    return classifyError(undefined, wire, message ? ` Server said: ${message}` : "", undefined, ctx);
  }
  const status = response.status;
  const serverSays = redactSecrets((wire?.message || bodyText || response.statusText).trim().slice(0, 500), ctx.apiKey);
  const suffix = serverSays ? ` Server said: ${serverSays}` : "";
  const retryAfterMs = parseRetryAfterMs(response.headers);
  return classifyError(status, wire, suffix, retryAfterMs, ctx);
}

export function classifyError(
  status: number | undefined,
  wire: WireErrorBody | undefined,
  suffix: string,
  retryAfterMs: number | undefined,
  ctx: ErrorContext,
): ModelError {
  const details = { status, retryAfterMs };
  const statusText = status !== undefined ? ` (HTTP ${status})` : "";
  const kindHint = `${wire?.type ?? ""} ${wire?.code ?? ""}`;
  if (status === 401 || status === 403 || /authentication_error|permission_error|invalid_api_key/.test(kindHint)) {
    return new ModelError("auth", `${ctx.providerName} rejected the API key${statusText}; check the key set for this profile.${suffix}`, details);
  }
  if (status === 404 || /model_not_found|not_found_error/.test(kindHint)) {
    return new ModelError("model_not_found", `${ctx.providerName} does not know the model "${ctx.model}" at ${ctx.baseUrl}${statusText}.${suffix}`, details);
  }
  if (status === 429 || /rate_limit/.test(kindHint)) {
    return new ModelError("rate_limited", `${ctx.providerName} is rate limiting requests${statusText}.${suffix}`, details);
  }
  if (contextOverflowHints.test(`${wire?.code ?? ""} ${wire?.message ?? ""}`) && (status === undefined || status === 400 || status === 413)) {
    return new ModelError("context_overflow", `The conversation does not fit the context window of "${ctx.model}"${statusText}.${suffix}`, details);
  }
  if (status === undefined || status >= 500 || status === 408 || status === 409 || /overloaded|api_error|server_error/.test(kindHint)) {
    return new ModelError("server", `${ctx.providerName} failed to answer${statusText}.${suffix}`, details);
  }
  return new ModelError("bad_request", `${ctx.providerName} refused the request${statusText}.${suffix}`, details);
}
