/**
 * What real models and their servers do that a first long task meets: answers that stay open
 * after they finished, slow first bytes, reasoning that must go back (Anthropic's signed
 * thinking blocks, DeepSeek's reasoning_content), reported costs, unknown prices, error
 * sentences, and the limits the real APIs enforce (the scripted server enforces them too).
 */
import { afterEach, describe, expect, it } from "vitest";
import { type ModelError } from "../../core/src/agent/providers/errors.js";
import { classifyError, makeErrorContext } from "../../core/src/agent/providers/http-errors.js";
import type { ModelRequest, ModelStreamEvent, ThinkingBlock } from "../../core/src/agent/providers/types.js";
import { startModelServer, type ModelServer } from "../model-server/server.js";
import type { ModelServerScript } from "../model-server/script.js";
import { collect, formats, last, makeProvider, simpleRequest, textOf } from "./provider-helpers.js";
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

function errorOf(events: ModelStreamEvent[]): ModelError {
  const end = last(events);
  expect(end.type).toBe("error");
  return (end as { error: ModelError }).error;
}

describe.each(formats)("%s: answers and waits", (format) => {
  it("takes a finished answer whose connection stays open, without waiting for the idle timeout", async () => {
    const s = await serve({ turns: [{ text: "all done", usage: { input: 10, output: 3 }, holdAfterFinish: true }] });
    // 20 s idle timeout: before, the answer was thrown away as stalled when it ran out.
    const events = await collect(
      makeProvider(format, s.url, { idleTimeoutMs: 20_000, retry: { maxAttempts: 1 } }).stream(simpleRequest),
    );
    expect(textOf(events)).toBe("all done");
    expect(events.find((e) => e.type === "usage")).toMatchObject({ usage: { inputTokens: 10, outputTokens: 3 } });
    expect(last(events)).toMatchObject({ type: "stop", reason: "end_turn" });
  });

  it("shows the wait for a slow first byte, then streams the answer", async () => {
    const s = await serve({ turns: [{ text: "slow but sure", firstByteDelayMs: 5_600 }] });
    const events = await collect(makeProvider(format, s.url, { idleTimeoutMs: 30_000 }).stream(simpleRequest));
    const waits = events.filter((e) => e.type === "waiting");
    expect(waits.length).toBeGreaterThanOrEqual(1);
    expect(waits[0]).toEqual({ type: "waiting", waitedMs: 5_000, timeoutMs: 30_000 });
    expect(textOf(events)).toBe("slow but sure");
    expect(events.findIndex((e) => e.type === "waiting")).toBeLessThan(
      events.findIndex((e) => e.type === "text_delta"),
    );
  });

  it("says how long a rate limit asks to wait, with no doubled words in any error", async () => {
    const s = await serve({ turns: [{ status: 429, retryAfter: "120" }] });
    const error = errorOf(await collect(makeProvider(format, s.url).stream(simpleRequest)));
    expect(error.kind).toBe("rate_limited");
    expect(error.message).toContain("wait 2 min");
    const dropped = await serve({ turns: [{ rawFrames: [] }] });
    const broken = errorOf(
      await collect(makeProvider(format, dropped.url, { retry: { maxAttempts: 1 } }).stream(simpleRequest)),
    );
    for (const message of [error.message, broken.message]) expect(message).not.toMatch(/\b(\w+) \1\b/i);
  });

  it("reports the cost as unknown when no price is known, and uses a provider's reported cost", async () => {
    const s = await serve({
      turns: [
        { text: "a", usage: { input: 1000, output: 10 } },
        { text: "b", usage: { input: 1000, output: 10, cost: 0.0123 } },
      ],
    });
    const unknown = await collect(makeProvider(format, s.url).stream(simpleRequest));
    expect(unknown.find((e) => e.type === "usage")).toMatchObject({ costUsd: undefined });
    const reported = await collect(
      makeProvider(format, s.url, { prices: { inputPerMTok: 3, outputPerMTok: 15 } }).stream(simpleRequest),
    );
    // OpenRouter's usage.cost is what is billed; Anthropic's format has none, so prices apply there.
    const expected = format === "openai" ? 0.0123 : (1000 * 3 + 10 * 15) / 1e6;
    expect(reported.find((e) => e.type === "usage")).toMatchObject({ costUsd: expect.closeTo(expected, 10) });
  });
});

describe("answers cut at the output limit", () => {
  it.each(formats)(
    "%s: a tool call cut at max_tokens has arguments that are not JSON and stop reason max_tokens",
    async (format) => {
      const content = "line of text\n".repeat(400);
      const s = await serve({
        turns: [{ toolCalls: [{ name: "write_to_file", input: { path: "big.txt", content } }], honorMaxTokens: true }],
      });
      const events = await collect(makeProvider(format, s.url).stream({ ...simpleRequest, maxTokens: 200 }));
      const end = events.find((e) => e.type === "tool_call_end");
      expect(end?.type === "tool_call_end" && end.input).toBeUndefined();
      expect(last(events)).toMatchObject({ type: "stop", reason: "max_tokens" });
      const sent = recorded(s.requests, 0).body;
      expect(format === "anthropic" ? sent.max_tokens : sent.max_tokens).toBe(200);
    },
  );
});

describe("an answer that filled the context window", () => {
  it("is Anthropic's model_context_window_exceeded stop reason", async () => {
    const s = await serve({ turns: [{ text: "cut short", stopReason: "context_window_exceeded" }] });
    const events = await collect(makeProvider("anthropic", s.url).stream(simpleRequest));
    expect(last(events)).toEqual({
      type: "stop",
      reason: "context_window_exceeded",
      rawReason: "model_context_window_exceeded",
    });
  });
});

describe("Anthropic extended thinking", () => {
  const request: ModelRequest = { ...simpleRequest, maxTokens: 4096 };

  it("asks for thinking with a budget below max_tokens, and sends signed thinking blocks back first", async () => {
    const s = await serve({
      turns: [
        {
          reasoning: "The file is needed first.",
          text: "Reading.",
          toolCalls: [{ id: "toolu_1", name: "read_file", input: { path: "a.txt" } }],
        },
        { reasoning: "Now I know.", text: "Done." },
      ],
    });
    const provider = makeProvider("anthropic", s.url, { thinkingBudgetTokens: 8000 });
    const first = await collect(provider.stream(request));
    expect(recorded(s.requests, 0).body.thinking).toEqual({ type: "enabled", budget_tokens: 8000 });
    expect(recorded(s.requests, 0).body.max_tokens).toBeGreaterThan(8000);
    expect(recorded(s.requests, 0).body.temperature).toBeUndefined();
    const reasoning = first
      .filter((e) => e.type === "reasoning_delta")
      .map((e) => (e.type === "reasoning_delta" ? e.text : ""))
      .join("");
    expect(reasoning).toBe("The file is needed first.");
    const block = first.find((e) => e.type === "reasoning_end");
    expect(block?.type === "reasoning_end" && block.block.signature).toBeTruthy();
    const thinking = (block as { block: ThinkingBlock }).block;

    // The next request of the tool-use loop carries the thinking block unmodified: the server checks its signature.
    const second = await collect(
      provider.stream({
        ...request,
        messages: [
          { role: "user", content: "read a.txt" },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Reading." },
              thinking,
              { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a.txt" } },
            ],
          },
          { role: "user", content: [{ type: "tool_result", toolUseId: "toolu_1", content: "hello" }] },
        ],
      }),
    );
    expect(recorded(s.requests, 1).status).toBe(200);
    expect(recorded(s.requests, 1).body.messages[1].content[0]).toEqual({
      type: "thinking",
      thinking: "The file is needed first.",
      signature: thinking.signature,
    });
    expect(textOf(second)).toBe("Done.");
  });

  it("is refused by the server when a thinking block is left out of the tool-use loop (the check the provider passes)", async () => {
    const s = await serve({ turns: [{ text: "never" }] });
    const events = await collect(
      makeProvider("anthropic", s.url, { thinkingBudgetTokens: 2048 }).stream({
        ...request,
        messages: [
          { role: "user", content: "read a.txt" },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a.txt" } }],
          },
          { role: "user", content: [{ type: "tool_result", toolUseId: "toolu_1", content: "hello" }] },
        ],
      }),
    );
    expect(errorOf(events).kind).toBe("bad_request");
    expect(errorOf(events).message).toContain("must start with a thinking block");
  });

  it("keeps redacted thinking as opaque data", async () => {
    const s = await serve({ turns: [{ redactedThinking: "EncryptedBlob==", text: "ok" }] });
    const events = await collect(makeProvider("anthropic", s.url, { thinkingBudgetTokens: 2048 }).stream(request));
    expect(events.find((e) => e.type === "reasoning_end")).toMatchObject({
      block: { type: "thinking", text: "", redactedData: "EncryptedBlob==", wire: "anthropic" },
    });
  });
});

describe("DeepSeek's thinking mode and OpenAI-style reasoning effort", () => {
  it("sends reasoning_content back with the assistant message it came with", async () => {
    const s = await serve({
      deepseekThinking: true,
      turns: [
        {
          reasoning: "Let me look at a.txt.",
          toolCalls: [{ id: "call_1", name: "read_file", input: { path: "a.txt" } }],
        },
        { reasoning: "Fine.", text: "It says hello." },
      ],
    });
    const provider = makeProvider("openai", s.url, { reasoningEffort: "high" });
    const first = await collect(provider.stream(simpleRequest));
    expect(recorded(s.requests, 0).body.reasoning_effort).toBe("high");
    const block = first.find((e) => e.type === "reasoning_end");
    expect(block).toMatchObject({ block: { text: "Let me look at a.txt.", wire: "reasoning_content" } });
    const second = await collect(
      provider.stream({
        ...simpleRequest,
        messages: [
          { role: "user", content: "hello" },
          {
            role: "assistant",
            content: [
              (block as { block: ThinkingBlock }).block,
              { type: "tool_use", id: "call_1", name: "read_file", input: { path: "a.txt" } },
            ],
          },
          { role: "user", content: [{ type: "tool_result", toolUseId: "call_1", content: "hello" }] },
        ],
      }),
    );
    expect(recorded(s.requests, 1).status).toBe(200);
    expect(recorded(s.requests, 1).body.messages[2]).toMatchObject({
      role: "assistant",
      reasoning_content: "Let me look at a.txt.",
    });
    expect(textOf(second)).toBe("It says hello.");
  });

  it("is refused by DeepSeek without it (the check the provider passes)", async () => {
    const s = await serve({ deepseekThinking: true, turns: [{ text: "never" }] });
    const events = await collect(
      makeProvider("openai", s.url).stream({
        ...simpleRequest,
        messages: [
          { role: "user", content: "hello" },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "call_1", name: "read_file", input: { path: "a.txt" } }],
          },
          { role: "user", content: [{ type: "tool_result", toolUseId: "call_1", content: "hello" }] },
        ],
      }),
    );
    expect(errorOf(events).message).toContain("Missing `reasoning_content` field");
  });
});

describe("errors a task acts on", () => {
  const ctx = makeErrorContext("Anthropic", { model: "m", baseUrl: "https://api.example.com", apiKey: "k" });

  it("reads the figures of an overflow answer", () => {
    const anthropic = classifyError(
      400,
      { type: "invalid_request_error", code: "", message: "prompt is too long: 210000 tokens > 200000 maximum" },
      "",
      undefined,
      ctx,
    );
    expect(anthropic.kind).toBe("context_overflow");
    expect(anthropic.details).toMatchObject({ promptTokens: 210000, contextLimit: 200000 });
    const withOutput = classifyError(
      400,
      {
        type: "invalid_request_error",
        code: "",
        message:
          "input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000, decrease input length or `max_tokens` and try again",
      },
      "",
      undefined,
      ctx,
    );
    expect(withOutput.kind).toBe("context_overflow");
    expect(withOutput.details).toMatchObject({ promptTokens: 195000, contextLimit: 200000 });
    const openai = classifyError(
      400,
      {
        type: "invalid_request_error",
        code: "context_length_exceeded",
        message:
          "This model's maximum context length is 32768 tokens. However, your messages resulted in 40000 tokens. Please reduce the length of the messages.",
      },
      "",
      undefined,
      ctx,
    );
    expect(openai.details).toMatchObject({ promptTokens: 40000, contextLimit: 32768 });
  });

  it("recognises a server that refuses native tools", () => {
    const ollama = classifyError(
      400,
      { type: "api_error", code: "", message: "registry.ollama.ai/library/gemma:2b does not support tools" },
      "",
      undefined,
      ctx,
    );
    expect(ollama.kind).toBe("tools_unsupported");
    expect(ollama.retryable).toBe(false);
  });
});
