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
import type { ModelMessage, ModelRequest, ModelStreamEvent, StopReason, TokenUsage } from "./types.js";
import { parseToolArguments } from "./tool-arguments.js";

export class OpenAiCompatibleProvider extends HttpModelProvider {
  readonly id = "openai" as const;

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent> {
    const headers: Record<string, string> = { ...this.config.headers, "content-type": "application/json", accept: "text/event-stream" };
    // Local servers (Ollama, LM Studio) take no key: send no Authorization header then.
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    const errorContext = makeErrorContext("The OpenAI-compatible endpoint", this.config);
    return runModelStream(this.config, errorContext.providerName, {
      url: `${this.config.baseUrl.replace(/\/+$/, "")}/chat/completions`,
      headers,
      body: JSON.stringify(buildOpenAiBody(this.config.model, request)),
      createDecoder: () => new OpenAiDecoder(errorContext),
    }, signal);
  }
}

export function buildOpenAiBody(model: string, request: ModelRequest): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [{ role: "system", content: request.systemPrompt }];
  for (const message of request.messages) messages.push(...toOpenAiMessages(message));
  const body: Record<string, unknown> = { model, messages, stream: true, stream_options: { include_usage: true } };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.inputSchema } }));
  }
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  return body;
}

/** One neutral message may become several: tool results are separate `tool` messages here. */
function toOpenAiMessages(message: ModelMessage): Record<string, unknown>[] {
  if (typeof message.content === "string") return [{ role: message.role, content: message.content }];
  const text = message.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("\n");
  if (message.role === "assistant") {
    const toolCalls = message.content.flatMap((b) =>
      b.type === "tool_use" ? [{ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }] : [],
    );
    const out: Record<string, unknown> = { role: "assistant", content: text || null };
    if (toolCalls.length > 0) out.tool_calls = toolCalls;
    return [out];
  }
  const out: Record<string, unknown>[] = [];
  for (const b of message.content) {
    if (b.type === "tool_result") out.push({ role: "tool", tool_call_id: b.toolUseId, content: b.isError ? `Error: ${b.content}` : b.content });
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
  stop: { reason: StopReason; raw: string | null } = { reason: "other", raw: null };
  private readonly calls = new Map<number, OpenCall>();
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
    const chunk = JSON.parse(text) as Record<string, any>;
    if (chunk.error) {
      const wire = parseWireError(chunk);
      const suffix = wire?.message ? ` Server said: ${redactSecrets(wire.message, this.errorContext.apiKey)}` : "";
      throw classifyError(undefined, wire, suffix, undefined, this.errorContext);
    }
    if (chunk.usage && typeof chunk.usage === "object") this.setUsage(chunk.usage);
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (!choice) return;
    const delta = choice.delta ?? {};
    // DeepSeek and vLLM use reasoning_content; OpenRouter and Ollama use reasoning.
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string" && reasoning) out.push({ type: "reasoning_delta", text: reasoning });
    if (typeof delta.content === "string" && delta.content) out.push({ type: "text_delta", text: delta.content });
    // A refusal comes as its own text field; the person reads it as the answer.
    if (typeof delta.refusal === "string" && delta.refusal) {
      this.refused = true;
      out.push({ type: "text_delta", text: delta.refusal });
    }
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) this.toolCallDelta(call, out);
    if (typeof choice.finish_reason === "string" && choice.finish_reason) {
      this.closeCalls(out);
      const reason = this.refused ? "refusal" : (finishReasons[choice.finish_reason] ?? "other");
      this.stop = { reason, raw: choice.finish_reason };
      this.complete = true;
    }
  }

  flush(out: ModelStreamEvent[]): void {
    this.closeCalls(out);
  }

  private toolCallDelta(call: Record<string, any>, out: ModelStreamEvent[]): void {
    const index = typeof call.index === "number" ? call.index : this.calls.size;
    let open = this.calls.get(index);
    if (!open) {
      open = { id: "", name: "", args: "", started: false };
      this.calls.set(index, open);
    }
    const fn = call.function ?? {};
    if (!open.started) {
      if (typeof call.id === "string" && call.id) open.id = call.id;
      // A name may come in pieces: the call starts once its arguments begin (or at its end).
      if (typeof fn.name === "string") open.name += fn.name;
    }
    const argsDelta = typeof fn.arguments === "string" ? fn.arguments : fn.arguments && typeof fn.arguments === "object" ? JSON.stringify(fn.arguments) : "";
    if (!argsDelta) return;
    this.start(open, index, out);
    open.args += argsDelta;
    out.push({ type: "tool_call_delta", id: open.id, argumentsDelta: argsDelta });
  }

  private start(open: OpenCall, index: number, out: ModelStreamEvent[]): void {
    if (open.started) return;
    if (!open.name) throw new ModelError("malformed_stream", "The OpenAI-compatible endpoint sent a tool call without a function name.");
    // Some local servers send no id: make one, unique across the conversation.
    if (!open.id) open.id = `call_${index}_${randomBytes(6).toString("hex")}`;
    open.started = true;
    out.push({ type: "tool_call_start", id: open.id, name: open.name });
  }

  private closeCalls(out: ModelStreamEvent[]): void {
    for (const index of [...this.calls.keys()].sort((a, b) => a - b)) {
      const call = this.calls.get(index)!;
      this.calls.delete(index);
      this.start(call, index, out);
      out.push({ type: "tool_call_end", id: call.id, name: call.name, arguments: call.args, ...parseToolArguments(call.args) });
    }
  }

  private setUsage(usage: Record<string, any>): void {
    const cached = typeof usage.prompt_tokens_details?.cached_tokens === "number" ? usage.prompt_tokens_details.cached_tokens : 0;
    const prompt = typeof usage.prompt_tokens === "number" ? usage.prompt_tokens : 0;
    this.usage = {
      inputTokens: Math.max(0, prompt - cached),
      outputTokens: typeof usage.completion_tokens === "number" ? usage.completion_tokens : 0,
      cacheReadTokens: cached,
      cacheWriteTokens: 0,
    };
  }
}
