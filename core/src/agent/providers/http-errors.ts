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

const contextOverflowHints =
  /context[_ ]length|context window|context limit|prompt is too long|input is too long|too many tokens|maximum context|exceeds? the (?:model'?s? )?(?:max(?:imum)? )?(?:context|input)/i;
/** A server that does not offer native tool calling for this model (Ollama, llama.cpp, some routers). */
const toolsUnsupportedHints =
  /does not support tools|tools? (?:are |is )?not supported|(?:function|tool)[ _-]?calling is not (?:supported|enabled)|does not support (?:function|tool)[ _-]?calling|no endpoints found that support tool use/i;

/**
 * Token counts an overflow error states ("prompt is too long: 210000 tokens > 200000 maximum",
 * "maximum context length is 32768 tokens. However, your messages resulted in 40000 tokens",
 * "... 195000 + 8192 > 200000"): how large the prompt was and what the window is.
 */
export function overflowFigures(message: string): { promptTokens?: number; contextLimit?: number } {
  const num = (s: string | undefined) => (s === undefined ? undefined : Number(s.replace(/[,_]/g, "")));
  let m = /(\d[\d,]*) tokens? > (\d[\d,]*)/.exec(message);
  if (m) return { promptTokens: num(m[1]), contextLimit: num(m[2]) };
  m = /(\d[\d,]*) \+ (\d[\d,]*) > (\d[\d,]*)/.exec(message);
  if (m) return { promptTokens: num(m[1]), contextLimit: num(m[3]) };
  const limit = /maximum context length is (\d[\d,]*)/i.exec(message);
  const prompt = /\((\d[\d,]*) in the messages|messages resulted in (\d[\d,]*)/i.exec(message);
  return { contextLimit: num(limit?.[1]), promptTokens: num(prompt?.[1] ?? prompt?.[2]) };
}

/** "45 s", "2 min", "1 h 5 min": a wait as people read it. */
export function describeWait(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 90) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 90 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export interface ErrorContext {
  providerName: string;
  model: string;
  /** Safe to show: credentials in the URL and the key are removed (see makeErrorContext). */
  baseUrl: string;
  apiKey: string;
}

export function makeErrorContext(
  providerName: string,
  config: { model: string; baseUrl: string; apiKey: string },
): ErrorContext {
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
export async function errorFromResponse(
  response: Response,
  ctx: ErrorContext,
  kindWithoutError?: "malformed_stream",
): Promise<ModelError> {
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
      return new ModelError(
        "malformed_stream",
        `${ctx.providerName} answered with JSON instead of an event stream; check that it supports streaming at ${ctx.baseUrl}.`,
      );
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
  const details: ModelError["details"] = { status, retryAfterMs };
  const statusText = status !== undefined ? ` (HTTP ${status})` : "";
  const kindHint = `${wire?.type ?? ""} ${wire?.code ?? ""}`;
  if (status === 401 || status === 403 || /authentication_error|permission_error|invalid_api_key/.test(kindHint)) {
    return new ModelError(
      "auth",
      `${ctx.providerName} rejected the API key${statusText}; check the key set for this profile.${suffix}`,
      details,
    );
  }
  if (status === 404 || /model_not_found|not_found_error/.test(kindHint)) {
    return new ModelError(
      "model_not_found",
      `${ctx.providerName} does not know the model "${ctx.model}" at ${ctx.baseUrl}${statusText}.${suffix}`,
      details,
    );
  }
  if (status === 429 || /rate_limit/.test(kindHint)) {
    const wait =
      retryAfterMs !== undefined ? `; it asks to wait ${describeWait(retryAfterMs)} before the next request` : "";
    return new ModelError(
      "rate_limited",
      `${ctx.providerName} is rate limiting requests${statusText}${wait}.${suffix}`,
      details,
    );
  }
  const said = `${wire?.code ?? ""} ${wire?.message ?? ""}`;
  if (contextOverflowHints.test(said) && (status === undefined || status === 400 || status === 413)) {
    return new ModelError(
      "context_overflow",
      `The conversation does not fit the context window of "${ctx.model}"${statusText}.${suffix}`,
      { ...details, ...overflowFigures(wire?.message ?? "") },
    );
  }
  if (toolsUnsupportedHints.test(said) && (status === undefined || (status >= 400 && status < 500))) {
    return new ModelError(
      "tools_unsupported",
      `${ctx.providerName} does not offer native tool calling for "${ctx.model}"${statusText}.${suffix}`,
      details,
    );
  }
  if (
    status === undefined ||
    status >= 500 ||
    status === 408 ||
    status === 409 ||
    /overloaded|api_error|server_error/.test(kindHint)
  ) {
    return new ModelError("server", `${ctx.providerName} failed to answer${statusText}.${suffix}`, details);
  }
  return new ModelError("bad_request", `${ctx.providerName} refused the request${statusText}.${suffix}`, details);
}
