/**
 * What the real APIs refuse before answering, so that a client that sends an invalid request
 * fails here as it would against the real service: Anthropic's rules for tool blocks and
 * extended thinking, DeepSeek's thinking mode, servers without tool support, and the context
 * window. Each check returns the HTTP status and error body the real service sends.
 */
import { thinkingSignature } from "./frames.js";
import type { ModelServerScript, WireFormat } from "./script.js";

export interface Refusal {
  status: number;
  body: unknown;
}

const anthropicError = (message: string): Refusal => ({
  status: 400,
  body: { type: "error", error: { type: "invalid_request_error", message } },
});
const openAiError = (
  message: string,
  code: string | null = "invalid_request_error",
  type = "invalid_request_error",
  param: string | null = null,
): Refusal => ({
  status: 400,
  body: { error: { message, type, param, code } },
});

export function refuseInvalid(
  format: WireFormat,
  body: any,
  script: ModelServerScript,
  reasoningSent: ReadonlySet<string>,
): Refusal | undefined {
  return format === "anthropic" ? refuseAnthropic(body) : refuseOpenAi(body, script, reasoningSent);
}

function refuseAnthropic(body: any): Refusal | undefined {
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  const blocks = (m: any): any[] => (Array.isArray(m?.content) ? m.content : []);
  const hasToolBlocks = messages.some((m) =>
    blocks(m).some((b) => b?.type === "tool_use" || b?.type === "tool_result"),
  );
  if (hasToolBlocks && !(Array.isArray(body.tools) && body.tools.length > 0)) {
    return anthropicError("Requests which include `tool_use` or `tool_result` blocks must define tools.");
  }
  // Each tool_use is answered by a tool_result in the next message, and only there.
  for (let i = 0; i < messages.length; i++) {
    const used = messages[i].role === "assistant" ? blocks(messages[i]).filter((b) => b?.type === "tool_use") : [];
    const next = messages[i + 1];
    const answered = new Set(
      next?.role === "user" ? blocks(next).flatMap((b) => (b?.type === "tool_result" ? [b.tool_use_id] : [])) : [],
    );
    const missing = used.filter((b) => !answered.has(b.id)).map((b) => b.id);
    if (missing.length > 0)
      return anthropicError(
        `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    if (messages[i].role !== "user") continue;
    const previous = new Set(
      i > 0 ? blocks(messages[i - 1]).flatMap((b) => (b?.type === "tool_use" ? [b.id] : [])) : [],
    );
    const content = blocks(messages[i]);
    for (let j = 0; j < content.length; j++) {
      const b = content[j];
      if (b?.type === "tool_result" && !previous.has(b.tool_use_id))
        return anthropicError(
          `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
    }
  }
  const thinking = body.thinking;
  if (thinking?.type === "enabled") {
    const budget = thinking.budget_tokens;
    if (typeof budget !== "number" || budget < 1024)
      return anthropicError("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
    if (!(body.max_tokens > budget))
      return anthropicError(
        "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
      );
    if (body.temperature !== undefined && body.temperature !== 1)
      return anthropicError(
        "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility",
      );
    for (let i = 0; i < messages.length; i++) {
      const content = blocks(messages[i]);
      for (let j = 0; j < content.length; j++) {
        const b = content[j];
        if (b?.type === "thinking" && b.signature !== thinkingSignature(String(b.thinking ?? ""))) {
          return anthropicError(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
        }
      }
    }
    const lastAssistant = messages
      .map((m, i) => [m, i] as const)
      .filter(([m]) => m.role === "assistant")
      .pop();
    if (lastAssistant && blocks(lastAssistant[0]).some((b) => b?.type === "tool_use")) {
      const first = blocks(lastAssistant[0])[0];
      if (first?.type !== "thinking" && first?.type !== "redacted_thinking") {
        return anthropicError(
          `messages.${lastAssistant[1]}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
        );
      }
    }
  }
  return undefined;
}

function refuseOpenAi(body: any, script: ModelServerScript, reasoningSent: ReadonlySet<string>): Refusal | undefined {
  const all: any[] = Array.isArray(body.messages) ? body.messages : [];
  // An assistant message's tool_calls are answered by the tool messages right after it, each once.
  for (let i = 0; i < all.length; i++) {
    const m = all[i];
    if (m.role === "tool") {
      const owner = all.slice(0, i).findLast((x) => x.role !== "tool");
      const ids = Array.isArray(owner?.tool_calls) ? owner.tool_calls.map((c: any) => c.id) : [];
      if (!ids.includes(m.tool_call_id))
        return openAiError(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          null,
          "invalid_request_error",
          `messages.[${i}].role`,
        );
      continue;
    }
    if (m.role !== "assistant" || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) continue;
    let end = i + 1;
    while (all[end]?.role === "tool") end++;
    const answered = new Set(all.slice(i + 1, end).map((t) => t.tool_call_id));
    const missing = m.tool_calls.map((c: any) => c.id).filter((id: string) => !answered.has(id));
    if (missing.length > 0)
      return openAiError(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(", ")}`,
        null,
        "invalid_request_error",
        `messages.[${end}].role`,
      );
  }
  if (script.rejectTools && Array.isArray(body.tools) && body.tools.length > 0) {
    return openAiError(
      `registry.ollama.ai/library/${String(body.model)}:latest does not support tools`,
      null,
      "api_error",
    );
  }
  if (script.deepseekThinking) {
    const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      if (m.role !== "assistant") continue;
      if (typeof m.reasoning_content !== "string" || !reasoningSent.has(m.reasoning_content)) {
        if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
          return openAiError(
            `Missing \`reasoning_content\` field in the assistant message at message index ${i}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls`,
          );
        }
        return openAiError("The reasoning_content in the thinking mode must be passed back to the API.");
      }
    }
  }
  return undefined;
}

/** The format's answer to a prompt (plus max_tokens) that does not fit the context window. */
export function refuseOverflow(
  format: WireFormat,
  window: number,
  promptTokens: number,
  maxTokens: number | undefined,
): Refusal | undefined {
  if (promptTokens > window) {
    return format === "anthropic"
      ? anthropicError(`prompt is too long: ${promptTokens} tokens > ${window} maximum`)
      : openAiError(
          `This model's maximum context length is ${window} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`,
          "context_length_exceeded",
          "invalid_request_error",
          "messages",
        );
  }
  if (maxTokens !== undefined && promptTokens + maxTokens > window) {
    return format === "anthropic"
      ? anthropicError(
          `input length and \`max_tokens\` exceed context limit: ${promptTokens} + ${maxTokens} > ${window}, decrease input length or \`max_tokens\` and try again`,
        )
      : openAiError(
          `This model's maximum context length is ${window} tokens. However, you requested ${promptTokens + maxTokens} tokens (${promptTokens} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
          "context_length_exceeded",
          "invalid_request_error",
          "messages",
        );
  }
  return undefined;
}
