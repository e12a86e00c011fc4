import { afterEach, describe, expect, it } from "vitest";
import { backoffDelayMs, defaultRetryPolicy, parseRetryAfterMs } from "../../core/src/agent/providers/retry.js";
import { redactSecrets } from "../../core/src/agent/providers/errors.js";
import { classifyError, makeErrorContext } from "../../core/src/agent/providers/http-errors.js";
import { computeCostUsd } from "../../core/src/agent/providers/cost.js";
import { createModelProvider } from "../../core/src/agent/providers/create-provider.js";
import { startModelServer, type ModelServer } from "../model-server/server.js";
import { collect, makeProvider, simpleRequest } from "./provider-helpers.js";
import { lastOf } from "../helpers/items.js";

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("backoff", () => {
  const policy = { ...defaultRetryPolicy, baseDelayMs: 1000, maxDelayMs: 8000 };
  it("doubles per attempt within [half, full] of the ceiling, capped", () => {
    expect(backoffDelayMs(policy, 1, undefined, () => 0)).toBe(500);
    expect(backoffDelayMs(policy, 1, undefined, () => 1)).toBe(1000);
    expect(backoffDelayMs(policy, 3, undefined, () => 0)).toBe(2000);
    expect(backoffDelayMs(policy, 10, undefined, () => 1)).toBe(8000);
  });
  it("waits what retry-after asks, as the official SDKs do", () => {
    expect(backoffDelayMs(policy, 1, 5000, () => 0)).toBe(5000);
    expect(backoffDelayMs(policy, 4, 10, () => 1)).toBe(10);
  });
  it("spends about a minute on its default attempts", () => {
    const waits = [1, 2, 3, 4, 5].map((attempt) => backoffDelayMs(defaultRetryPolicy, attempt, undefined, () => 1));
    expect(defaultRetryPolicy.maxAttempts).toBe(6);
    expect(waits.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(55_000);
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(65_000);
  });
  it("parses retry-after-ms, seconds and HTTP dates", () => {
    expect(parseRetryAfterMs(new Headers({ "retry-after-ms": "250" }))).toBe(250);
    expect(parseRetryAfterMs(new Headers({ "retry-after": "3" }))).toBe(3000);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:10 GMT" }), now)).toBe(10_000);
    expect(parseRetryAfterMs(new Headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(parseRetryAfterMs(new Headers())).toBeUndefined();
  });
});

describe("retry-after beyond the policy", () => {
  it("returns the rate-limit error instead of waiting minutes", async () => {
    server = await startModelServer({ turns: [{ status: 429, retryAfter: "3600" }, { text: "never" }] });
    const events = await collect(makeProvider("openai", server.url).stream(simpleRequest));
    const end = lastOf(events, "event");
    expect(end.type === "error" && end.error.kind).toBe("rate_limited");
    expect(end.type === "error" && end.error.details.retryAfterMs).toBe(3_600_000);
    expect(server.requests).toHaveLength(1);
  });
});

describe("redactSecrets", () => {
  const key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
  it("removes the key, shortened echoes of it and key-shaped strings", () => {
    expect(redactSecrets(`bad key ${key}!`, key)).toBe("bad key [redacted]!");
    expect(redactSecrets(`Incorrect API key provided: ${key.slice(0, 10)}****${key.slice(-4)}`, key)).not.toContain(
      key.slice(0, 10),
    );
    expect(redactSecrets("other key sk-proj-zzzzzzzzzzzzzzzz", key)).toBe("other key sk-pr[redacted]");
  });
  it("withholds a text that holds a very short key rather than garbling it", () => {
    expect(redactSecrets("the key abc was refused", "abc")).toBe("[withheld: it may contain the API key]");
    expect(redactSecrets("nothing here", "abc")).toBe("nothing here");
  });
});

describe("cost and provider choice", () => {
  it("prices each kind of token per million", () => {
    expect(
      computeCostUsd(
        { inputTokens: 1_000_000, outputTokens: 2_000_000, cacheReadTokens: 500_000, cacheWriteTokens: 100_000 },
        { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 },
      ),
    ).toBeCloseTo(3 + 30 + 0.15 + 0.375, 10);
  });
  it("builds the provider a profile names and refuses others", () => {
    const config = { baseUrl: "http://127.0.0.1:1", model: "m", apiKey: "" };
    expect(createModelProvider("anthropic", config).id).toBe("anthropic");
    expect(createModelProvider("openai", config).id).toBe("openai");
    expect(() => createModelProvider("gemini", config)).toThrow(/Unknown model provider/);
    expect(() => createModelProvider("openai", { ...config, baseUrl: "localhost:11434/v1" })).toThrow(/not an http/);
    expect(() => createModelProvider("anthropic", { ...config, baseUrl: "file:///etc" })).toThrow(/not an http/);
  });
});

describe("a caller that stops early", () => {
  it("releases the connection so the server sees the client go away", async () => {
    server = await startModelServer({
      turns: [{ text: "x".repeat(4000), textChunkChars: 1, writeDelayMs: 5, writeChunkBytes: 200 }, { text: "next" }],
    });
    const provider = makeProvider("anthropic", server.url);
    for await (const event of provider.stream(simpleRequest)) if (event.type === "text_delta") break;
    for (let i = 0; i < 200 && server.disconnects === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(server.disconnects).toBe(1);
    // The same provider keeps working afterwards.
    const events = await collect(provider.stream(simpleRequest));
    expect(lastOf(events, "event").type).toBe("stop");
  });
});

describe("classifyError", () => {
  const ctx = { providerName: "P", model: "m1", baseUrl: "http://x", apiKey: "k".repeat(20) };
  const wire = (type: string, code: string, message = "") => ({ type, code, message });
  it.each([
    [401, undefined, "auth"],
    [403, wire("permission_error", ""), "auth"],
    [404, wire("not_found_error", ""), "model_not_found"],
    [400, wire("invalid_request_error", "model_not_found", "m1 is not a valid model"), "model_not_found"],
    [
      400,
      wire("invalid_request_error", "context_length_exceeded", "maximum context length is 8192 tokens"),
      "context_overflow",
    ],
    [400, wire("invalid_request_error", "", "prompt is too long: 210000 tokens > 200000 maximum"), "context_overflow"],
    [400, wire("invalid_request_error", "", "bad field"), "bad_request"],
    [429, undefined, "rate_limited"],
    [529, wire("overloaded_error", ""), "server"],
    [undefined, wire("overloaded_error", ""), "server"],
    [undefined, wire("rate_limit_error", ""), "rate_limited"],
  ] as const)("HTTP %s %j -> %s", (status, w, kind) => {
    expect(classifyError(status, w, "", undefined, ctx).kind).toBe(kind);
  });
});

describe("makeErrorContext", () => {
  it("shows the base URL without credentials, query or the key", () => {
    const ctx = makeErrorContext("P", {
      model: "m",
      baseUrl: "https://user:hunter2hunter2@proxy.example.com/v1?key=abc",
      apiKey: "sk-abcdefghijklmnop",
    });
    expect(ctx.baseUrl).toBe("https://proxy.example.com/v1");
  });
});

describe("a provider object", () => {
  it("never shows its key when serialised or inspected", async () => {
    const { inspect } = await import("node:util");
    for (const kind of ["anthropic", "openai"]) {
      const provider = createModelProvider(kind, {
        baseUrl: "http://127.0.0.1:1/v1",
        model: "m",
        apiKey: "sk-secret-value-1234567890",
      });
      expect(JSON.stringify({ provider })).not.toContain("secret-value");
      expect(inspect(provider, { depth: 5 })).not.toContain("secret-value");
      expect(JSON.parse(JSON.stringify(provider))).toEqual({ id: kind, model: "m", baseUrl: "http://127.0.0.1:1/v1" });
    }
  });
});
