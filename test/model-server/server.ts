/**
 * A scripted model server: real node:http on 127.0.0.1, real SSE, speaking the Anthropic
 * Messages (POST /v1/messages) and OpenAI Chat Completions (POST /chat/completions, also
 * /v1/chat/completions) wire formats. It plays one script turn per request and records every
 * request. GET /__requests returns the recorded requests as JSON (for a server in another process).
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { errorBody, errorFrame, renderFrames } from "./frames.js";
import type { ModelServerScript, RecordedRequest, ScriptTurn, WireFormat } from "./script.js";
import { countRequestTokens, countTextTokens, cutAtTokens } from "./tokens.js";
import { refuseInvalid, refuseOverflow, type Refusal } from "./validation.js";
import { nth } from "../helpers/items.js";

export interface ModelServer {
  /** Base URL: use it as Anthropic's base_url, and as the OpenAI base_url (with or without /v1). */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** How many turns of the script were played. */
  readonly turnsPlayed: number;
  /** How many streams the client closed before the server finished them. */
  readonly disconnects: number;
  close(): Promise<void>;
}

export async function startModelServer(script: ModelServerScript): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  let next = 0;
  let played = 0;
  let disconnects = 0;
  /** Reasoning texts streamed so far (DeepSeek's thinking mode wants them back). */
  const reasoningSent = new Set<string>();
  const server = http.createServer((req, res) => {
    void handle(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`model server failure: ${(err as Error).message}`);
    });
  });
  server.on("connection", (socket) => socket.setNoDelay(true));

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method === "GET" && url.pathname === "/__requests") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(requests));
      return;
    }
    const format: WireFormat | undefined =
      url.pathname === "/v1/messages"
        ? "anthropic"
        : url.pathname === "/chat/completions" || url.pathname === "/v1/chat/completions"
          ? "openai"
          : undefined;
    const raw = await readBody(req);
    if (req.method !== "POST" || !format) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${url.pathname}` } }));
      return;
    }
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendError(res, format, 400, "the request body is not JSON");
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
    const promptTokens = countRequestTokens(body);
    const recorded: RecordedRequest = { format, path: url.pathname, headers, body, promptTokens, status: 200 };
    requests.push(recorded);
    const refuse = (refusal: Refusal) => {
      recorded.status = refusal.status;
      sendJson(res, refusal.status, refusal.body);
    };

    if (script.apiKey !== undefined) {
      const sent = format === "anthropic" ? headers["x-api-key"] : headers.authorization?.replace(/^Bearer /, "");
      if (sent !== script.apiKey)
        return refuse({
          status: 401,
          body: errorBody(format, 401, `Incorrect API key provided: ${sent ?? "(none)"}.`),
        });
    }
    if (script.models && !script.models.includes(body.model)) {
      return refuse({
        status: 404,
        body: errorBody(format, 404, `The model \`${body.model}\` does not exist or you do not have access to it.`),
      });
    }
    const invalid = refuseInvalid(format, body, script, reasoningSent);
    if (invalid) return refuse(invalid);
    const maxTokens =
      typeof body.max_tokens === "number"
        ? body.max_tokens
        : typeof body.max_completion_tokens === "number"
          ? body.max_completion_tokens
          : undefined;
    const overflow =
      script.contextWindow !== undefined
        ? refuseOverflow(format, script.contextWindow, promptTokens, maxTokens)
        : undefined;
    if (overflow) return refuse(overflow);
    const system =
      typeof body.system === "string" ? body.system : JSON.stringify(body.system ?? body.messages?.[0]?.content ?? "");
    const responder = script.responders?.find((r) => system.includes(r.systemIncludes));
    let turn: ScriptTurn;
    if (responder) turn = responder.turn;
    else {
      if (next >= script.turns.length) {
        if (!script.loop || script.turns.length === 0)
          return refuse({ status: 500, body: errorBody(format, 500, "the model server script has no turn left") });
        next = 0;
      }
      turn = nth(script.turns, next++, "turn of the script");
    }
    const turnNumber = ++played;
    if (turn.firstByteDelayMs) await new Promise((r) => setTimeout(r, turn.firstByteDelayMs));
    if (turn.status !== undefined) {
      recorded.status = turn.status;
      return sendError(
        res,
        format,
        turn.status,
        turn.errorMessage ?? `scripted HTTP ${turn.status}`,
        turn.retryAfter,
        turn.retryAfterMs,
      );
    }
    turn = effectiveTurn(turn, script, promptTokens, turn.honorMaxTokens ? maxTokens : undefined);
    if (turn.reasoning) reasoningSent.add(turn.reasoning);
    if (turn.holdHeaders) return; // the client's idle timeout or the server's close ends it
    if (turn.jsonBody !== undefined) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(turn.jsonBody));
      return;
    }
    res.on("close", () => {
      if (!res.writableFinished) disconnects++;
    });
    await playStream(res, format, turn, String(body.model ?? "model"), turnNumber);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get turnsPlayed() {
      return played;
    },
    get disconnects() {
      return disconnects;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections(); // stalled streams would otherwise keep close() waiting
        server.close(() => resolve());
      }),
  };
}

function sendError(
  res: http.ServerResponse,
  format: WireFormat,
  status: number,
  message: string,
  retryAfter?: string,
  retryAfterMs?: string,
): void {
  const headers: Record<string, string> = {};
  if (retryAfter !== undefined) headers["retry-after"] = retryAfter;
  if (retryAfterMs !== undefined) headers["retry-after-ms"] = retryAfterMs;
  sendJson(res, status, errorBody(format, status, message), headers);
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/**
 * The turn as played: usage the script leaves out is the server's count when it models a
 * context window, and with `maxTokens` the answer is cut where it reaches that many tokens.
 */
function effectiveTurn(
  turn: ScriptTurn,
  script: ModelServerScript,
  promptTokens: number,
  maxTokens: number | undefined,
): ScriptTurn {
  let out: ScriptTurn = turn;
  let outputTokens = countTextTokens(turn.reasoning ?? "") + countTextTokens(turn.text ?? "");
  for (const call of turn.toolCalls ?? [])
    outputTokens += countTextTokens(call.rawArguments ?? JSON.stringify(call.input ?? {}));
  if (maxTokens !== undefined && outputTokens > maxTokens) {
    let left = maxTokens;
    const take = (text: string | undefined) => {
      if (text === undefined) return undefined;
      const cut = cutAtTokens(text, left);
      left -= cut.tokens;
      return cut.text;
    };
    const reasoning = take(turn.reasoning);
    const text = take(turn.text);
    const toolCalls = [];
    for (const call of turn.toolCalls ?? []) {
      if (left <= 0) break;
      toolCalls.push({
        id: call.id,
        name: call.name,
        rawArguments: take(call.rawArguments ?? JSON.stringify(call.input ?? {})),
      });
    }
    out = { ...turn, reasoning, text, toolCalls, stopReason: "max_tokens" };
    outputTokens = maxTokens;
  }
  if (script.contextWindow !== undefined) {
    const u = out.usage ?? {};
    out = {
      ...out,
      usage: {
        ...u,
        input: u.input ?? Math.max(0, promptTokens - (u.cacheRead ?? 0) - (u.cacheWrite ?? 0)),
        output: u.output ?? outputTokens,
      },
    };
  }
  return out;
}

async function playStream(
  res: http.ServerResponse,
  format: WireFormat,
  turn: ScriptTurn,
  model: string,
  turnNumber: number,
): Promise<void> {
  let frames = turn.rawFrames ?? renderFrames(format, turn, model, turnNumber);
  const interrupt = turn.interrupt;
  if (interrupt) {
    frames = frames.slice(0, interrupt.afterFrames);
    if (interrupt.mode === "error") frames.push(errorFrame(format, "Overloaded"));
    if (interrupt.mode === "malformed") frames.push("data: {this is not json\n\n");
  }
  let text = frames.join("");
  if (turn.lineEnding === "\r\n") text = text.replace(/\n/g, "\r\n");
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.flushHeaders();
  const bytes = Buffer.from(text, "utf8");
  const step = turn.writeChunkBytes ?? 16 * 1024;
  for (let i = 0; i < bytes.length; i += step) {
    if (res.destroyed) return;
    if (turn.writeDelayMs) await new Promise((r) => setTimeout(r, turn.writeDelayMs));
    else if (turn.writeChunkBytes) await new Promise((r) => setImmediate(r));
    if (!res.write(bytes.subarray(i, i + step))) await new Promise((r) => res.once("drain", r));
  }
  // Left open until the client gives up or the server closes.
  if (interrupt?.mode === "stall" || turn.holdAfterFinish) return;
  if (interrupt?.mode === "drop") {
    await new Promise((r) => setTimeout(r, 10)); // let the written bytes leave first
    res.socket?.destroy();
    return;
  }
  res.end();
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
