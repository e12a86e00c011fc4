import { afterEach, describe, expect, it } from "vitest";
import { startModelServer, type ModelServer } from "../model-server/server.js";
import type { ModelServerScript } from "../model-server/script.js";
import { ModelError } from "../../core/src/agent/providers/errors.js";
import { collect, formats, last, makeProvider, simpleRequest, testKey, textOf } from "./provider-helpers.js";
import { nth } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(script: ModelServerScript): Promise<ModelServer> {
  server = await startModelServer(script);
  return server;
}

function errorOf(events: { type: string }[]): ModelError {
  const end = events[events.length - 1] as { type: string; error?: ModelError };
  expect(end.type).toBe("error");
  expect(end.error).toBeInstanceOf(ModelError);
  return end.error!;
}

describe.each(formats)("%s provider against the scripted model server", (format) => {
  it("streams text, a tool call split across chunks, usage with cost, and the stop reason", async () => {
    const s = await serve({
      apiKey: testKey,
      turns: [
        {
          text: "Reading the file — ünïcödé 🚀 ok.",
          toolCalls: [
            { name: "read_file", input: { path: "src/ä/main.ts" } },
            { name: "list_files", input: { path: ".", recursive: true } },
          ],
          usage: { input: 1200, output: 345, cacheRead: 1000, cacheWrite: format === "anthropic" ? 50 : 0 },
          textChunkChars: 3,
          argumentChunkChars: 4,
          writeChunkBytes: 5,
        },
      ],
    });
    const provider = makeProvider(format, s.url, {
      prices: { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 },
    });
    const events = await collect(provider.stream(simpleRequest));

    expect(textOf(events)).toBe("Reading the file — ünïcödé 🚀 ok.");
    expect(events.filter((e) => e.type === "text_delta").length).toBeGreaterThan(5);
    const starts = events.filter((e) => e.type === "tool_call_start");
    expect(starts.map((e) => e.type === "tool_call_start" && e.name)).toEqual(["read_file", "list_files"]);
    const deltas = events.filter((e) => e.type === "tool_call_delta");
    expect(deltas.length).toBeGreaterThan(4);
    const ends = events.filter((e) => e.type === "tool_call_end");
    expect(ends).toHaveLength(2);
    expect(nth(ends, 0, "tool call end").type === "tool_call_end" && nth(ends, 0, "tool call end").input).toEqual({
      path: "src/ä/main.ts",
    });
    expect(nth(ends, 1, "tool call end").type === "tool_call_end" && nth(ends, 1, "tool call end").input).toEqual({
      path: ".",
      recursive: true,
    });
    // ids pair starts with ends
    expect(ends.map((e) => e.type === "tool_call_end" && e.id)).toEqual(
      starts.map((e) => e.type === "tool_call_start" && e.id),
    );

    const usage = events.find((e) => e.type === "usage");
    const cacheWrite = format === "anthropic" ? 50 : 0;
    expect(usage).toEqual({
      type: "usage",
      usage: { inputTokens: 1200, outputTokens: 345, cacheReadTokens: 1000, cacheWriteTokens: cacheWrite },
      costUsd: expect.closeTo((1200 * 3 + 345 * 15 + 1000 * 0.3 + cacheWrite * 3.75) / 1e6, 12),
    });
    expect(last(events)).toEqual({
      type: "stop",
      reason: "tool_use",
      rawReason: format === "anthropic" ? "tool_use" : "tool_calls",
    });
    expect(nth(events, events.length - 2, "event").type).toBe("usage");
  });

  it("sends the conversation, tools and headers in the wire format", async () => {
    const s = await serve({ turns: [{ text: "ok" }] });
    await collect(
      makeProvider(format, s.url).stream({
        ...simpleRequest,
        messages: [
          { role: "user", content: "read a.txt" },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Sure." },
              { type: "tool_use", id: "t1", name: "read_file", input: { path: "a.txt" } },
            ],
          },
          { role: "user", content: [{ type: "tool_result", toolUseId: "t1", content: "hello world" }] },
        ],
      }),
    );
    expect(s.requests).toHaveLength(1);
    const req = recorded(s.requests, 0);
    expect(req.body.stream).toBe(true);
    expect(req.body.model).toBe("test-model");
    if (format === "anthropic") {
      expect(req.path).toBe("/v1/messages");
      expect(req.headers["x-api-key"]).toBe(testKey);
      expect(req.headers["anthropic-version"]).toBe("2023-06-01");
      expect(req.body.system[0].text).toBe("You are a test.");
      expect(req.body.tools[0]).toMatchObject({ name: "read_file", input_schema: { type: "object" } });
      expect(req.body.messages[1].content[1]).toEqual({
        type: "tool_use",
        id: "t1",
        name: "read_file",
        input: { path: "a.txt" },
      });
      // The last two user messages carry prompt-cache breakpoints.
      expect(req.body.messages[2].content[0]).toEqual({
        type: "tool_result",
        tool_use_id: "t1",
        content: "hello world",
        cache_control: { type: "ephemeral" },
      });
      expect(req.body.messages[0].content).toEqual([
        { type: "text", text: "read a.txt", cache_control: { type: "ephemeral" } },
      ]);
      expect(req.body.messages[1].content[0]).toEqual({ type: "text", text: "Sure." });
    } else {
      expect(req.path).toBe("/chat/completions");
      expect(req.headers.authorization).toBe(`Bearer ${testKey}`);
      expect(req.body.stream_options).toEqual({ include_usage: true });
      expect(req.body.messages[0]).toEqual({ role: "system", content: "You are a test." });
      expect(req.body.tools[0]).toMatchObject({
        type: "function",
        function: { name: "read_file", parameters: { type: "object" } },
      });
      expect(req.body.messages[2]).toEqual({
        role: "assistant",
        content: "Sure.",
        tool_calls: [{ id: "t1", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } }],
      });
      expect(req.body.messages[3]).toEqual({ role: "tool", tool_call_id: "t1", content: "hello world" });
    }
  });

  it("retries 429 (honouring retry-after) and 500, then succeeds", async () => {
    const s = await serve({ turns: [{ status: 429, retryAfter: "0.2" }, { status: 500 }, { text: "finally" }] });
    const events = await collect(makeProvider(format, s.url).stream(simpleRequest));
    expect(s.requests).toHaveLength(3);
    const retries = events.filter((e) => e.type === "retry");
    expect(retries).toHaveLength(2);
    expect(nth(retries, 0, "retry").type === "retry" && nth(retries, 0, "retry").delayMs).toBeGreaterThanOrEqual(200);
    expect(textOf(events)).toBe("finally");
    expect(last(events).type).toBe("stop");
  });

  it("gives up after the bounded number of attempts with a server error", async () => {
    const s = await serve({
      turns: [{ status: 503 }, { status: 502 }, { status: 500 }, { status: 500 }, { text: "never" }],
    });
    const events = await collect(
      makeProvider(format, s.url, { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } }).stream(simpleRequest),
    );
    expect(s.requests).toHaveLength(3);
    const error = errorOf(events);
    expect(error.kind).toBe("server");
    expect(error.details.status).toBe(500);
  });

  it("retries a stream that drops before any output", async () => {
    const s = await serve({
      turns: [{ text: "lost", interrupt: { afterFrames: 1, mode: "drop" } }, { text: "second try" }],
    });
    const events = await collect(makeProvider(format, s.url).stream(simpleRequest));
    expect(s.requests).toHaveLength(2);
    expect(textOf(events)).toBe("second try");
    expect(last(events).type).toBe("stop");
  });

  it("retries a stream that drops after output, and tells the caller to discard the partial answer", async () => {
    const s = await serve({
      turns: [
        { text: "partial answer here", interrupt: { afterFrames: 5, mode: "drop" } },
        { text: "the whole answer" },
      ],
    });
    const events = await collect(makeProvider(format, s.url).stream(simpleRequest));
    expect(s.requests).toHaveLength(2);
    const retryAt = events.findIndex((e) => e.type === "retry");
    expect(textOf(events.slice(0, retryAt)).length).toBeGreaterThan(0);
    expect(events[retryAt]).toMatchObject({ type: "retry", attempt: 2, discard: true });
    expect(textOf(events.slice(retryAt))).toBe("the whole answer");
    expect(last(events).type).toBe("stop");
  });

  it("retries an overload error event that comes mid-stream, discarding the partial answer", async () => {
    const s = await serve({
      turns: [
        { text: "some words before the failure", interrupt: { afterFrames: 5, mode: "error" } },
        { text: "recovered answer" },
      ],
    });
    const events = await collect(makeProvider(format, s.url).stream(simpleRequest));
    expect(s.requests).toHaveLength(2);
    const retry = events.find((e) => e.type === "retry");
    expect(retry).toMatchObject({ discard: true, maxAttempts: 4 });
    expect(retry?.type === "retry" && retry.reason).toContain("Overloaded");
    expect(textOf(events.slice(events.indexOf(retry!)))).toBe("recovered answer");
  });

  it("gives up mid-stream after the last attempt with the typed error", async () => {
    const s = await serve({
      turns: [{ text: "some words before the failure", interrupt: { afterFrames: 5, mode: "error" } }],
    });
    const events = await collect(makeProvider(format, s.url, { retry: { maxAttempts: 1 } }).stream(simpleRequest));
    expect(s.requests).toHaveLength(1);
    const error = errorOf(events);
    expect(error.kind).toBe("server");
    expect(error.message).toContain("Overloaded");
  });

  it("retries an error event that comes before any output", async () => {
    const s = await serve({
      turns: [{ text: "x", interrupt: { afterFrames: 1, mode: "error" } }, { text: "recovered" }],
    });
    const events = await collect(makeProvider(format, s.url).stream(simpleRequest));
    expect(s.requests).toHaveLength(2);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
    expect(textOf(events)).toBe("recovered");
  });

  it("reports 401 as an auth error whose message never contains the key", async () => {
    const s = await serve({ apiKey: "the-right-key", turns: [{ text: "unreachable" }] });
    const events = await collect(makeProvider(format, s.url).stream(simpleRequest));
    expect(s.requests).toHaveLength(1); // not retried
    const error = errorOf(events);
    expect(error.kind).toBe("auth");
    expect(error.code).toBe("permission_denied");
    expect(error.details.status).toBe(401);
    // The server echoed the key it rejected; we must not repeat it.
    expect(error.message).not.toContain(testKey);
    expect(error.message).not.toContain(testKey.slice(0, 12));
    expect(JSON.stringify(events)).not.toContain(testKey);
  });

  it("reports an unknown model as model_not_found", async () => {
    const s = await serve({ models: ["real-model"], turns: [{ text: "unreachable" }] });
    const error = errorOf(await collect(makeProvider(format, s.url).stream(simpleRequest)));
    expect(error.kind).toBe("model_not_found");
    expect(error.code).toBe("not_found");
    expect(error.message).toContain("test-model");
    expect(s.requests).toHaveLength(1);
  });

  it("reports a malformed stream without retrying once output was sent", async () => {
    const s = await serve({ turns: [{ text: "hello there", interrupt: { afterFrames: 4, mode: "malformed" } }] });
    const events = await collect(makeProvider(format, s.url).stream(simpleRequest));
    expect(errorOf(events).kind).toBe("malformed_stream");
    expect(s.requests).toHaveLength(1);
  });

  it("abandons a stalled stream after the idle timeout", async () => {
    const s = await serve({
      turns: [{ text: "then silence falls on the stream", interrupt: { afterFrames: 4, mode: "stall" } }],
    });
    const events = await collect(
      makeProvider(format, s.url, { idleTimeoutMs: 1000, retry: { maxAttempts: 1 } }).stream(simpleRequest),
    );
    expect(textOf(events).length).toBeGreaterThan(0);
    const error = errorOf(events);
    expect(error.kind).toBe("stalled");
    expect(error.code).toBe("deadline_exceeded");
  });

  it("retries a stream that stalls before any output", async () => {
    const s = await serve({ turns: [{ text: "x", interrupt: { afterFrames: 0, mode: "stall" } }, { text: "awake" }] });
    const events = await collect(makeProvider(format, s.url, { idleTimeoutMs: 1000 }).stream(simpleRequest));
    expect(s.requests).toHaveLength(2);
    expect(textOf(events)).toBe("awake");
  });

  it("gives up on a server that never sends its headers", async () => {
    const s = await serve({ turns: [{ holdHeaders: true }, { holdHeaders: true }] });
    const events = await collect(
      makeProvider(format, s.url, { idleTimeoutMs: 200, retry: { maxAttempts: 2, baseDelayMs: 1 } }).stream(
        simpleRequest,
      ),
    );
    expect(s.requests).toHaveLength(2);
    expect(errorOf(events).kind).toBe("stalled");
  });

  it("reads an error sent as a 200 JSON body instead of a stream", async () => {
    const s = await serve({
      turns: [
        {
          jsonBody: {
            error: { message: "model 'llama9' not found", type: "invalid_request_error", code: "model_not_found" },
          },
        },
        { jsonBody: { id: "x", choices: [] } },
      ],
    });
    const first = errorOf(await collect(makeProvider(format, s.url).stream(simpleRequest)));
    expect(first.kind).toBe("model_not_found");
    expect(first.message).toContain("llama9");
    const second = errorOf(await collect(makeProvider(format, s.url).stream(simpleRequest)));
    expect(second.kind).toBe("malformed_stream");
    expect(second.message).toMatch(/JSON instead of an event stream/);
  });

  it("cancels mid-stream through the AbortSignal", async () => {
    const s = await serve({
      turns: [{ text: "a long answer that keeps coming", textChunkChars: 2, writeDelayMs: 20, writeChunkBytes: 40 }],
    });
    const controller = new AbortController();
    const events = [];
    for await (const event of makeProvider(format, s.url).stream(simpleRequest, controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    expect(errorOf(events).kind).toBe("canceled");
    // Nothing is delivered after the abort, and the server sees the connection go.
    expect(events.filter((e) => e.type === "text_delta")).toHaveLength(1);
    for (let i = 0; i < 200 && s.disconnects === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(s.disconnects).toBe(1);
  });

  it("cancels while waiting to retry, and before starting", async () => {
    const s = await serve({ turns: [{ status: 503 }, { text: "never" }] });
    const controller = new AbortController();
    const events = [];
    for await (const event of makeProvider(format, s.url, {
      retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 },
    }).stream(simpleRequest, controller.signal)) {
      events.push(event);
      if (event.type === "retry") controller.abort();
    }
    expect(events.map((e) => e.type)).toEqual(["retry", "error"]);
    expect(errorOf(events).kind).toBe("canceled");
    expect(s.requests).toHaveLength(1);

    const already = await collect(makeProvider(format, s.url).stream(simpleRequest, AbortSignal.abort()));
    expect(already.map((e) => e.type)).toEqual(["error"]);
    expect(errorOf(already).kind).toBe("canceled");
    expect(s.requests).toHaveLength(1);
  });

  it("handles CRLF line endings split at every byte", async () => {
    const s = await serve({
      turns: [
        { text: "crlf ✓ text", toolCalls: [{ name: "x", input: { a: "é" } }], lineEnding: "\r\n", writeChunkBytes: 1 },
      ],
    });
    const events = await collect(makeProvider(format, s.url).stream(simpleRequest));
    expect(textOf(events)).toBe("crlf ✓ text");
    const end = events.find((e) => e.type === "tool_call_end");
    expect(end?.type === "tool_call_end" && end.input).toEqual({ a: "é" });
  });

  it("returns a network error when nothing listens", async () => {
    const s = await serve({ turns: [] });
    const url = s.url;
    await s.close();
    server = undefined;
    const events = await collect(
      makeProvider(format, url, { retry: { maxAttempts: 2, baseDelayMs: 1 } }).stream(simpleRequest),
    );
    expect(errorOf(events).kind).toBe("network");
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
  });

  it("reports invalid tool-argument JSON on the tool_call_end event", async () => {
    const s = await serve({ turns: [{ toolCalls: [{ name: "read_file", rawArguments: '{"path": "a' }] }] });
    const events = await collect(makeProvider(format, s.url).stream(simpleRequest));
    const end = events.find((e) => e.type === "tool_call_end");
    expect(end?.type === "tool_call_end" && end.input).toBeUndefined();
    expect(end?.type === "tool_call_end" && end.parseError).toMatch(/not valid JSON/);
    expect(last(events).type).toBe("stop");
  });
});

describe("wire quirks of compatible servers", () => {
  const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
  const chunk = (delta: unknown, finish: string | null = null) =>
    data({ choices: [{ index: 0, delta, finish_reason: finish }] });

  it("OpenAI-compatible: a name in pieces, no id, no index, arguments as an object, reasoning, no [DONE]", async () => {
    const s = await serve({
      turns: [
        {
          rawFrames: [
            chunk({ role: "assistant", reasoning: "think" }),
            chunk({ tool_calls: [{ index: 0, function: { name: "read_" } }] }),
            chunk({ tool_calls: [{ index: 0, function: { name: "file" } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '"a.ts"}' } }] }),
            chunk({ tool_calls: [{ function: { name: "list_files", arguments: { path: "." } } }] }),
            chunk({}, "tool_calls"),
            data({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3 } }),
          ],
        },
      ],
    });
    const events = await collect(makeProvider("openai", s.url).stream(simpleRequest));
    const types = events.map((e) => e.type);
    expect(types).toEqual([
      "reasoning_delta",
      "tool_call_start",
      "tool_call_delta",
      "tool_call_delta",
      "tool_call_start",
      "tool_call_delta",
      "reasoning_end",
      "tool_call_end",
      "tool_call_end",
      "usage",
      "stop",
    ]);
    const ends = events.filter((e) => e.type === "tool_call_end");
    expect(ends.map((e) => e.type === "tool_call_end" && [e.name, e.input])).toEqual([
      ["read_file", { path: "a.ts" }],
      ["list_files", { path: "." }],
    ]);
    const ids = ends.map((e) => (e.type === "tool_call_end" ? e.id : ""));
    expect(new Set(ids).size).toBe(2);
    expect(ids.every((id) => /^call_\d_[0-9a-f]{12}$/.test(id))).toBe(true);
    expect(events.find((e) => e.type === "usage")).toMatchObject({ usage: { inputTokens: 7, outputTokens: 3 } });
  });

  it("OpenAI-compatible: a stream that ends without a finish reason or [DONE] is a dropped stream", async () => {
    const s = await serve({ turns: [{ rawFrames: [chunk({ content: "half" })] }] });
    const events = await collect(makeProvider("openai", s.url, { retry: { maxAttempts: 1 } }).stream(simpleRequest));
    expect(textOf(events)).toBe("half");
    expect(errorOf(events).kind).toBe("stream_dropped");
  });

  it("OpenAI-compatible: a chunk or a tool call that is not a JSON object is skipped, not a failed stream", async () => {
    const s = await serve({
      turns: [
        {
          rawFrames: [
            chunk({ role: "assistant", content: "Hel" }),
            "data: null\n\n",
            "data: 42\n\n",
            data({ choices: [null, "x"] }),
            chunk({
              content: "lo",
              tool_calls: [null, 7, { index: 0, function: { name: "read_file", arguments: "{}" } }],
            }),
            chunk({}, "tool_calls"),
          ],
        },
      ],
    });
    const events = await collect(makeProvider("openai", s.url, { retry: { maxAttempts: 1 } }).stream(simpleRequest));
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    expect(textOf(events)).toBe("Hello");
    const ends = events.filter((e) => e.type === "tool_call_end");
    expect(ends.map((e) => e.type === "tool_call_end" && [e.name, e.input])).toEqual([["read_file", {}]]);
    expect(last(events)).toMatchObject({ type: "stop", reason: "tool_use" });
  });

  it("Anthropic: unknown event types and an unterminated last frame are tolerated", async () => {
    const ev = (name: string, value: unknown) => `event: ${name}\ndata: ${JSON.stringify(value)}\n\n`;
    const s = await serve({
      turns: [
        {
          rawFrames: [
            ev("message_start", { type: "message_start", message: { usage: { input_tokens: 5, output_tokens: 1 } } }),
            ev("some_future_event", { type: "some_future_event", x: 1 }),
            ev("content_block_start", {
              type: "content_block_start",
              index: 0,
              content_block: { type: "text", text: "Hi" },
            }),
            ev("content_block_delta", {
              type: "content_block_delta",
              index: 0,
              delta: { type: "text_delta", text: " there" },
            }),
            ev("content_block_stop", { type: "content_block_stop", index: 0 }),
            ev("message_delta", {
              type: "message_delta",
              delta: { stop_reason: "max_tokens" },
              usage: { output_tokens: 9 },
            }),
            `event: message_stop\ndata: {"type":"message_stop"}`,
          ],
        },
      ],
    });
    const events = await collect(makeProvider("anthropic", s.url).stream(simpleRequest));
    expect(textOf(events)).toBe("Hi there");
    expect(events.find((e) => e.type === "usage")).toMatchObject({ usage: { inputTokens: 5, outputTokens: 9 } });
    expect(last(events)).toEqual({ type: "stop", reason: "max_tokens", rawReason: "max_tokens" });
  });
});
