/** Anthropic Messages API (POST {base_url}/v1/messages, stream: true). */
import { classifyError, makeErrorContext, parseWireError, type ErrorContext } from "./http-errors.js";
import { ModelError, redactSecrets } from "./errors.js";
import { HttpModelProvider } from "./http-provider.js";
import { runModelStream, type WireDecoder } from "./stream-runner.js";
import type { SseEvent } from "./sse.js";
import type {
  ContentBlock,
  ModelMessage,
  ModelRequest,
  ModelStreamEvent,
  StopReason,
  ThinkingBlock,
  TokenUsage,
} from "./types.js";
import { parseToolArguments } from "./tool-arguments.js";
import { wireObject, type WireObject } from "./wire-object.js";

export const anthropicVersion = "2023-06-01";
const defaultMaxTokens = 8192;

/**
 * The max_tokens an Anthropic request carries: what was asked (8192 by default), and with
 * extended thinking more than the thinking budget (the API's rule), leaving room for the answer.
 */
export function anthropicMaxTokens(requested: number | undefined, thinkingBudgetTokens: number | undefined): number {
  const base = requested ?? defaultMaxTokens;
  return thinkingBudgetTokens && thinkingBudgetTokens > 0 ? Math.max(base, thinkingBudgetTokens + 4096) : base;
}

export class AnthropicProvider extends HttpModelProvider {
  readonly id = "anthropic" as const;

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent> {
    const body = buildAnthropicBody(this.config.model, request, this.config.thinkingBudgetTokens);
    return runModelStream(
      this.config,
      "Anthropic",
      {
        url: `${this.config.baseUrl.replace(/\/+$/, "")}/v1/messages`,
        headers: {
          ...this.config.headers,
          "content-type": "application/json",
          accept: "text/event-stream",
          "x-api-key": this.config.apiKey,
          "anthropic-version": anthropicVersion,
        },
        body: JSON.stringify(body),
        createDecoder: () => new AnthropicDecoder(makeErrorContext("Anthropic", this.config)),
      },
      signal,
    );
  }
}

export function buildAnthropicBody(
  model: string,
  request: ModelRequest,
  thinkingBudgetTokens?: number,
): Record<string, unknown> {
  const thinking = thinkingBudgetTokens !== undefined && thinkingBudgetTokens > 0;
  const body: Record<string, unknown> = {
    model,
    max_tokens: anthropicMaxTokens(request.maxTokens, thinkingBudgetTokens),
    // The system prompt is stable across turns: mark it for prompt caching.
    system: [{ type: "text", text: request.systemPrompt, cache_control: { type: "ephemeral" } }],
    messages: withCacheBreakpoints(
      request.messages.map((m) => toAnthropicMessage(m, thinking)).filter((m) => (m.content as unknown[]).length > 0),
    ),
    stream: true,
  };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
  }
  if (thinking) body.thinking = { type: "enabled", budget_tokens: thinkingBudgetTokens };
  // With extended thinking the API accepts no other temperature than its default.
  else if (request.temperature !== undefined) body.temperature = request.temperature;
  return body;
}

/**
 * Marks the last block of the last two user messages for prompt caching (with the system
 * prompt that makes 3 of the 4 breakpoints the API allows): each request then reads the
 * previous request's prefix from the cache and writes its own.
 */
function withCacheBreakpoints(messages: Record<string, unknown>[]): Record<string, unknown>[] {
  let marked = 0;
  for (let i = messages.length - 1; i >= 0 && marked < 2; i--) {
    const message = messages[i]!;
    if (message.role !== "user") continue;
    const content =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : (message.content as Record<string, unknown>[]);
    if (content.length === 0) continue;
    const lastBlock = { ...content[content.length - 1], cache_control: { type: "ephemeral" } };
    messages[i] = { ...message, content: [...content.slice(0, -1), lastBlock] };
    marked++;
  }
  return messages;
}

/**
 * Thinking blocks go back (first, unmodified, with their signature) only while thinking is on,
 * as the API wants them in the tool-use loop; without thinking they are left out.
 */
function toAnthropicMessage(message: ModelMessage, thinking: boolean): Record<string, unknown> {
  if (typeof message.content === "string")
    return { role: message.role, content: [{ type: "text", text: message.content }] };
  const blocks = message.content.filter(
    (b) => b.type !== "thinking" || (thinking && b.wire === "anthropic" && (b.signature || b.redactedData)),
  );
  const ordered = [...blocks.filter((b) => b.type === "thinking"), ...blocks.filter((b) => b.type !== "thinking")];
  return { role: message.role, content: ordered.map(toAnthropicBlock) };
}

function toAnthropicBlock(block: ContentBlock): Record<string, unknown> {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "thinking":
      return block.redactedData
        ? { type: "redacted_thinking", data: block.redactedData }
        : { type: "thinking", thinking: block.text, signature: block.signature };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input ?? {} };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: block.toolUseId,
        content: block.content,
        ...(block.isError ? { is_error: true } : {}),
      };
  }
}

const stopReasons: Record<string, StopReason> = {
  end_turn: "end_turn",
  tool_use: "tool_use",
  max_tokens: "max_tokens",
  stop_sequence: "stop_sequence",
  refusal: "refusal",
  // The answer filled what was left of the context window.
  model_context_window_exceeded: "context_window_exceeded",
};

/** The fields of the streamed events that the decoder reads. */
type EventField = "type" | "message" | "index" | "content_block" | "delta" | "usage";
type BlockField = "type" | "id" | "name" | "text" | "thinking" | "signature" | "data";
type DeltaField = "type" | "text" | "thinking" | "signature" | "partial_json";
type UsageField = "input_tokens" | "output_tokens" | "cache_read_input_tokens" | "cache_creation_input_tokens";
/** An event whose data is no JSON object: read by its SSE event name alone. */
const NO_FIELDS: WireObject<EventField> = Object.freeze({});

interface OpenBlock {
  kind: "text" | "tool" | "thinking" | "redacted_thinking" | "other";
  id: string;
  name: string;
  /** Tool arguments, thinking text, or redacted thinking data, as streamed. */
  args: string;
  signature: string;
}

class AnthropicDecoder implements WireDecoder {
  complete = false;
  finished = false;
  usage: TokenUsage | undefined;
  stop: { reason: StopReason; raw: string | null } = { reason: "other", raw: null };
  private readonly blocks = new Map<number, OpenBlock>();

  constructor(private readonly errorContext: ErrorContext) {}

  decode(sse: SseEvent, out: ModelStreamEvent[]): void {
    if (sse.event === "ping") return;
    const data = wireObject<EventField>(JSON.parse(sse.data)) ?? NO_FIELDS;
    const type = typeof data.type === "string" ? data.type : sse.event;
    switch (type) {
      case "message_start":
        this.addUsage(wireObject<"usage">(data.message)?.usage);
        break;
      case "content_block_start":
        this.startBlock(data.index, data.content_block, out);
        break;
      case "content_block_delta":
        this.delta(data.index, data.delta, out);
        break;
      case "content_block_stop":
        this.stopBlock(data.index, out);
        break;
      case "message_delta": {
        this.addUsage(data.usage);
        const stopReason = wireObject<"stop_reason">(data.delta)?.stop_reason;
        if (typeof stopReason === "string") {
          this.stop = { reason: stopReasons[stopReason] ?? "other", raw: stopReason };
          // The stop reason and the final usage are all there is: message_stop adds nothing.
          this.complete = true;
          this.finished = true;
        }
        break;
      }
      case "message_stop":
        this.complete = true;
        this.finished = true;
        break;
      case "error": {
        const wire = parseWireError(data);
        const suffix = wire?.message ? ` Server said: ${redactSecrets(wire.message, this.errorContext.apiKey)}` : "";
        throw classifyError(undefined, wire, suffix, undefined, this.errorContext);
      }
      default:
        break; // new event types are ignored, as the API asks clients to do
    }
  }

  flush(out: ModelStreamEvent[]): void {
    for (const index of [...this.blocks.keys()].sort((a, b) => a - b)) this.stopBlock(index, out);
  }

  private startBlock(index: unknown, value: unknown, out: ModelStreamEvent[]): void {
    const block = wireObject<BlockField>(value);
    if (typeof index !== "number" || !block) throw malformed("content_block_start without an index or block");
    const open = (kind: OpenBlock["kind"], id = "", name = ""): OpenBlock => {
      const opened = { kind, id, name, args: "", signature: "" };
      this.blocks.set(index, opened);
      return opened;
    };
    if (block.type === "tool_use") {
      if (typeof block.id !== "string" || typeof block.name !== "string")
        throw malformed("tool_use block without id or name");
      open("tool", block.id, block.name);
      out.push({ type: "tool_call_start", id: block.id, name: block.name });
    } else if (block.type === "text") {
      open("text");
      if (typeof block.text === "string" && block.text) out.push({ type: "text_delta", text: block.text });
    } else if (block.type === "thinking") {
      const thinking = open("thinking");
      if (typeof block.thinking === "string" && block.thinking) {
        thinking.args = block.thinking;
        out.push({ type: "reasoning_delta", text: block.thinking });
      }
      if (typeof block.signature === "string") thinking.signature = block.signature;
    } else if (block.type === "redacted_thinking") {
      const redacted = open("redacted_thinking");
      if (typeof block.data === "string") redacted.args = block.data;
    } else {
      open("other");
    }
  }

  private delta(index: unknown, value: unknown, out: ModelStreamEvent[]): void {
    const block = typeof index === "number" ? this.blocks.get(index) : undefined;
    const delta = wireObject<DeltaField>(value);
    if (!block || !delta) throw malformed(`content_block_delta for unknown block ${String(index)}`);
    switch (delta.type) {
      case "text_delta":
        if (typeof delta.text === "string" && delta.text) out.push({ type: "text_delta", text: delta.text });
        break;
      case "thinking_delta":
        if (typeof delta.thinking === "string" && delta.thinking) {
          block.args += delta.thinking;
          out.push({ type: "reasoning_delta", text: delta.thinking });
        }
        break;
      case "signature_delta":
        if (typeof delta.signature === "string") block.signature += delta.signature;
        break;
      case "input_json_delta":
        if (block.kind !== "tool") throw malformed("input_json_delta outside a tool_use block");
        if (typeof delta.partial_json === "string" && delta.partial_json) {
          block.args += delta.partial_json;
          out.push({ type: "tool_call_delta", id: block.id, argumentsDelta: delta.partial_json });
        }
        break;
      default:
        break; // citations_delta: nothing to show
    }
  }

  private stopBlock(index: unknown, out: ModelStreamEvent[]): void {
    if (typeof index !== "number") return;
    const block = this.blocks.get(index);
    if (!block) return;
    this.blocks.delete(index);
    if (block.kind === "tool")
      out.push({
        type: "tool_call_end",
        id: block.id,
        name: block.name,
        arguments: block.args,
        ...parseToolArguments(block.args),
      });
    if (block.kind === "thinking") {
      const thinking: ThinkingBlock = { type: "thinking", text: block.args, wire: "anthropic" };
      if (block.signature) thinking.signature = block.signature;
      out.push({ type: "reasoning_end", block: thinking });
    }
    if (block.kind === "redacted_thinking")
      out.push({
        type: "reasoning_end",
        block: { type: "thinking", text: "", redactedData: block.args, wire: "anthropic" },
      });
  }

  private addUsage(value: unknown): void {
    const usage = wireObject<UsageField>(value);
    if (!usage) return;
    const u = (this.usage ??= { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
    // message_delta repeats cumulative counts: the latest non-null value wins.
    if (typeof usage.input_tokens === "number") u.inputTokens = usage.input_tokens;
    if (typeof usage.output_tokens === "number") u.outputTokens = usage.output_tokens;
    if (typeof usage.cache_read_input_tokens === "number") u.cacheReadTokens = usage.cache_read_input_tokens;
    if (typeof usage.cache_creation_input_tokens === "number") u.cacheWriteTokens = usage.cache_creation_input_tokens;
  }
}

function malformed(what: string): ModelError {
  return new ModelError("malformed_stream", `Anthropic sent a malformed stream: ${what}.`);
}
