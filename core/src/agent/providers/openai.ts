/**
 * OpenAI-compatible Chat Completions (POST {base_url}/chat/completions, stream: true), which
 * covers OpenAI, OpenRouter, Ollama, LM Studio, vLLM and llama.cpp. Tool calls arrive split
 * across chunks, keyed by `index`; `id` and `name` come in the first chunk of each call.
 */
import { randomBytes } from "node:crypto";
import { classifyError, makeErrorContext, parseWireError, type ErrorContext } from "./http-errors.js";
import { ModelError, redactSecrets } from "./errors.js";
import { HttpModelProvider } from "./http-provider.js";
import { runModelStream, type WireDecoder } from "./stream-runner.js";
import type { SseEvent } from "./sse.js";
import type { ModelMessage, ModelRequest, ModelStreamEvent, ProviderConfig, StopReason, TokenUsage } from "./types.js";
import { parseToolArguments } from "./tool-arguments.js";
import { wireArray, wireObject, type WireObject } from "./wire-object.js";

export class OpenAiCompatibleProvider extends HttpModelProvider {
  readonly id = "openai" as const;

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent> {
    const headers: Record<string, string> = {
      ...this.config.headers,
      "content-type": "application/json",
      accept: "text/event-stream",
    };
    // Local servers (Ollama, LM Studio) take no key: send no Authorization header then.
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    const errorContext = makeErrorContext("The OpenAI-compatible endpoint", this.config);
    return runModelStream(
      this.config,
      errorContext.providerName,
      {
        url: `${this.config.baseUrl.replace(/\/+$/, "")}/chat/completions`,
        headers,
        body: JSON.stringify(buildOpenAiBody(this.config.model, request, this.config)),
        createDecoder: () => new OpenAiDecoder(errorContext),
      },
      signal,
    );
  }
}

function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).hostname;
  } catch {
    return "";
  }
}

export function buildOpenAiBody(
  model: string,
  request: ModelRequest,
  config: Pick<ProviderConfig, "baseUrl" | "reasoningEffort"> = { baseUrl: "" },
): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [{ role: "system", content: request.systemPrompt }];
  for (const message of request.messages) messages.push(...toOpenAiMessages(message));
  const body: Record<string, unknown> = { model, messages, stream: true, stream_options: { include_usage: true } };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    }));
  }
  const host = hostOf(config.baseUrl);
  // OpenAI's own API refuses max_tokens for its reasoning models; every model there takes
  // max_completion_tokens. Other compatible servers know max_tokens.
  if (request.maxTokens !== undefined)
    body[host === "api.openai.com" ? "max_completion_tokens" : "max_tokens"] = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (config.reasoningEffort) body.reasoning_effort = config.reasoningEffort;
  // OpenRouter reports each request's cost in its usage when asked.
  if (host === "openrouter.ai" || host.endsWith(".openrouter.ai")) body.usage = { include: true };
  return body;
}

/** One neutral message may become several: tool results are separate `tool` messages here. */
function toOpenAiMessages(message: ModelMessage): Record<string, unknown>[] {
  if (typeof message.content === "string") return [{ role: message.role, content: message.content }];
  const text = message.content
    .filter((b) => b.type === "text")
    .map((b) => (b as { text: string }).text)
    .join("\n");
  if (message.role === "assistant") {
    const toolCalls = message.content.flatMap((b) =>
      b.type === "tool_use"
        ? [{ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }]
        : [],
    );
    const out: Record<string, unknown> = { role: "assistant", content: text || null };
    if (toolCalls.length > 0) out.tool_calls = toolCalls;
    // DeepSeek's thinking mode wants its reasoning back (a 400 otherwise); only reasoning that
    // came as reasoning_content goes back, so other servers never see the field.
    const reasoning = message.content
      .flatMap((b) => (b.type === "thinking" && b.wire === "reasoning_content" ? [b.text] : []))
      .join("");
    if (reasoning) out.reasoning_content = reasoning;
    return [out];
  }
  const out: Record<string, unknown>[] = [];
  for (const b of message.content) {
    if (b.type === "tool_result")
      out.push({ role: "tool", tool_call_id: b.toolUseId, content: b.isError ? `Error: ${b.content}` : b.content });
  }
  if (text) out.push({ role: "user", content: text });
  return out;
}

const finishReasons: Record<string, StopReason> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  function_call: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
};

/** The fields of the streamed chunks that the decoder reads. */
type ChunkField = "error" | "usage" | "choices";
type ChoiceField = "delta" | "finish_reason";
type DeltaField = "content" | "refusal" | "reasoning" | "reasoning_content" | "tool_calls";
type ToolCallField = "index" | "id" | "function";
type FunctionField = "name" | "arguments";
type UsageField = "cost" | "prompt_tokens" | "completion_tokens" | "prompt_cache_hit_tokens" | "prompt_tokens_details";

interface OpenCall {
  id: string;
  name: string;
  args: string;
  started: boolean;
}

class OpenAiDecoder implements WireDecoder {
  complete = false;
  finished = false;
  usage: TokenUsage | undefined;
  reportedCostUsd: number | undefined;
  stop: { reason: StopReason; raw: string | null } = { reason: "other", raw: null };
  private readonly calls = new Map<number, OpenCall>();
  /** The reasoning streamed so far, and the field it came in (DeepSeek: reasoning_content). */
  private reasoning = "";
  private reasoningField: "reasoning_content" | "reasoning" | undefined;
  /** The answer carried a `refusal` field: the stop reason is "refusal" whatever finish_reason says. */
  private refused = false;

  constructor(private readonly errorContext: ErrorContext) {}

  decode(sse: SseEvent, out: ModelStreamEvent[]): void {
    const text = sse.data.trim();
    if (text === "[DONE]") {
      this.closeCalls(out);
      this.complete = true;
      this.finished = true;
      return;
    }
    if (text === "") return;
    const chunk = wireObject<ChunkField>(JSON.parse(text));
    if (!chunk) return; // an event that is no object carries nothing
    if (chunk.error) {
      const wire = parseWireError(chunk);
      const suffix = wire?.message ? ` Server said: ${redactSecrets(wire.message, this.errorContext.apiKey)}` : "";
      throw classifyError(undefined, wire, suffix, undefined, this.errorContext);
    }
    const usage = wireObject<UsageField>(chunk.usage);
    if (usage) {
      this.setUsage(usage);
      // Usage comes last, after the finish reason: the answer is whole, [DONE] adds nothing.
      if (this.complete) this.finished = true;
    }
    const choice = wireObject<ChoiceField>(wireArray(chunk.choices)?.[0]);
    if (!choice) return;
    const delta = wireObject<DeltaField>(choice.delta);
    if (delta) this.decodeDelta(delta, out);
    const finishReason = choice.finish_reason;
    if (typeof finishReason === "string" && finishReason) {
      this.closeCalls(out);
      const reason = this.refused ? "refusal" : (finishReasons[finishReason] ?? "other");
      this.stop = { reason, raw: finishReason };
      this.complete = true;
      // Some servers put the usage in the finish chunk itself.
      if (usage) this.finished = true;
    }
  }

  private decodeDelta(delta: WireObject<DeltaField>, out: ModelStreamEvent[]): void {
    // DeepSeek and vLLM use reasoning_content; OpenRouter and Ollama use reasoning.
    const { reasoning_content: reasoningContent, reasoning, content, refusal, tool_calls: toolCalls } = delta;
    if (typeof reasoningContent === "string") this.reasoningDelta(reasoningContent, "reasoning_content", out);
    else if (typeof reasoning === "string") this.reasoningDelta(reasoning, "reasoning", out);
    if (typeof content === "string" && content) out.push({ type: "text_delta", text: content });
    // A refusal comes as its own text field; the person reads it as the answer.
    if (typeof refusal === "string" && refusal) {
      this.refused = true;
      out.push({ type: "text_delta", text: refusal });
    }
    const calls = wireArray(toolCalls);
    if (calls) for (const call of calls) this.toolCallDelta(call, out);
  }

  private reasoningDelta(text: string, field: "reasoning_content" | "reasoning", out: ModelStreamEvent[]): void {
    if (!text) return;
    this.reasoning += text;
    this.reasoningField ??= field;
    out.push({ type: "reasoning_delta", text });
  }

  flush(out: ModelStreamEvent[]): void {
    this.closeCalls(out);
  }

  private toolCallDelta(value: unknown, out: ModelStreamEvent[]): void {
    const call = wireObject<ToolCallField>(value);
    if (!call) return; // a tool call that is no object carries nothing
    const index = typeof call.index === "number" ? call.index : this.calls.size;
    let open = this.calls.get(index);
    if (!open) {
      open = { id: "", name: "", args: "", started: false };
      this.calls.set(index, open);
    }
    const fn = wireObject<FunctionField>(call.function);
    if (!open.started) {
      if (typeof call.id === "string" && call.id) open.id = call.id;
      // A name may come in pieces: the call starts once its arguments begin (or at its end).
      if (typeof fn?.name === "string") open.name += fn.name;
    }
    const args = fn?.arguments;
    const argsDelta = typeof args === "string" ? args : args && typeof args === "object" ? JSON.stringify(args) : "";
    if (!argsDelta) return;
    this.start(open, index, out);
    open.args += argsDelta;
    out.push({ type: "tool_call_delta", id: open.id, argumentsDelta: argsDelta });
  }

  private start(open: OpenCall, index: number, out: ModelStreamEvent[]): void {
    if (open.started) return;
    if (!open.name)
      throw new ModelError(
        "malformed_stream",
        "The OpenAI-compatible endpoint sent a tool call without a function name.",
      );
    // Some local servers send no id: make one, unique across the conversation.
    if (!open.id) open.id = `call_${index}_${randomBytes(6).toString("hex")}`;
    open.started = true;
    out.push({ type: "tool_call_start", id: open.id, name: open.name });
  }

  private closeCalls(out: ModelStreamEvent[]): void {
    this.endReasoning(out);
    for (const index of [...this.calls.keys()].sort((a, b) => a - b)) {
      const call = this.calls.get(index)!;
      this.calls.delete(index);
      this.start(call, index, out);
      out.push({
        type: "tool_call_end",
        id: call.id,
        name: call.name,
        arguments: call.args,
        ...parseToolArguments(call.args),
      });
    }
  }

  /** The reasoning block is whole once the answer or a tool call starts, or the answer ends. */
  private endReasoning(out: ModelStreamEvent[]): void {
    if (!this.reasoning) return;
    out.push({
      type: "reasoning_end",
      block: {
        type: "thinking",
        text: this.reasoning,
        wire: this.reasoningField === "reasoning_content" ? "reasoning_content" : "other",
      },
    });
    this.reasoning = "";
  }

  private setUsage(usage: WireObject<UsageField>): void {
    // OpenRouter: the request's cost in US dollars (credits).
    if (typeof usage.cost === "number" && Number.isFinite(usage.cost)) this.reportedCostUsd = usage.cost;
    // DeepSeek reports cache hits as prompt_cache_hit_tokens.
    const cachedField =
      wireObject<"cached_tokens">(usage.prompt_tokens_details)?.cached_tokens ?? usage.prompt_cache_hit_tokens;
    const cached = typeof cachedField === "number" ? cachedField : 0;
    const prompt = typeof usage.prompt_tokens === "number" ? usage.prompt_tokens : 0;
    this.usage = {
      inputTokens: Math.max(0, prompt - cached),
      outputTokens: typeof usage.completion_tokens === "number" ? usage.completion_tokens : 0,
      cacheReadTokens: cached,
      cacheWriteTokens: 0,
    };
  }
}
