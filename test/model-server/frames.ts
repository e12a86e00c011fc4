/** Renders a script turn into the SSE frames of each wire format, as the real APIs send them. */
import { createHash } from "node:crypto";
import type { ScriptTurn, WireFormat } from "./script.js";

/**
 * The signature the server gives a thinking block, and checks when the block comes back (as
 * Anthropic does: a thinking block must be returned unmodified with its signature).
 */
export function thinkingSignature(thinking: string): string {
  return createHash("sha256").update(`dline-model-server\0${thinking}`).digest("base64");
}

export function renderFrames(format: WireFormat, turn: ScriptTurn, model: string, turnNumber: number): string[] {
  return format === "anthropic" ? anthropicFrames(turn, model, turnNumber) : openAiFrames(turn, model, turnNumber);
}

export function errorFrame(format: WireFormat, message: string): string {
  return format === "anthropic"
    ? sse("error", { type: "error", error: { type: "overloaded_error", message } })
    : sse(undefined, { error: { message, type: "server_error", code: null } });
}

export function errorBody(format: WireFormat, status: number, message: string): unknown {
  if (format === "anthropic") {
    const type =
      status === 401
        ? "authentication_error"
        : status === 403
          ? "permission_error"
          : status === 404
            ? "not_found_error"
            : status === 429
              ? "rate_limit_error"
              : status === 529
                ? "overloaded_error"
                : status >= 500
                  ? "api_error"
                  : "invalid_request_error";
    return { type: "error", error: { type, message } };
  }
  const code =
    status === 401
      ? "invalid_api_key"
      : status === 404
        ? "model_not_found"
        : status === 429
          ? "rate_limit_exceeded"
          : null;
  const type =
    status === 401
      ? "invalid_request_error"
      : status === 429
        ? "requests"
        : status >= 500
          ? "server_error"
          : "invalid_request_error";
  return { error: { message, type, param: null, code } };
}

function sse(event: string | undefined, data: unknown): string {
  return `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
}

function pieces(text: string, size: number): string[] {
  const chars = Array.from(text); // split on code points, never inside a surrogate pair
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

function argumentsText(call: NonNullable<ScriptTurn["toolCalls"]>[number]): string {
  return call.rawArguments ?? JSON.stringify(call.input ?? {});
}

function stopReason(turn: ScriptTurn): string {
  // Anthropic's name for an answer that filled what was left of the context window.
  if (turn.stopReason === "context_window_exceeded") return "model_context_window_exceeded";
  return turn.stopReason ?? (turn.toolCalls?.length ? "tool_use" : "end_turn");
}

function anthropicFrames(turn: ScriptTurn, model: string, n: number): string[] {
  const u = turn.usage ?? {};
  const frames = [
    sse("message_start", {
      type: "message_start",
      message: {
        id: `msg_${n}`,
        type: "message",
        role: "assistant",
        content: [],
        model,
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: u.input ?? 0,
          cache_creation_input_tokens: u.cacheWrite ?? 0,
          cache_read_input_tokens: u.cacheRead ?? 0,
          output_tokens: 1,
        },
      },
    }),
    sse("ping", { type: "ping" }),
  ];
  let index = 0;
  const textSize = turn.textChunkChars ?? 8;
  if (turn.reasoning) {
    frames.push(
      sse("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "thinking", thinking: "" },
      }),
    );
    for (const p of pieces(turn.reasoning, textSize))
      frames.push(
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "thinking_delta", thinking: p },
        }),
      );
    frames.push(
      sse("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "signature_delta", signature: thinkingSignature(turn.reasoning) },
      }),
    );
    frames.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index++;
  }
  if (turn.redactedThinking) {
    frames.push(
      sse("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "redacted_thinking", data: turn.redactedThinking },
      }),
    );
    frames.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index++;
  }
  if (turn.text) {
    frames.push(
      sse("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }),
    );
    for (const p of pieces(turn.text, textSize))
      frames.push(
        sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: p } }),
      );
    frames.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index++;
  }
  (turn.toolCalls ?? []).forEach((call, i) => {
    const id = call.id ?? `toolu_${n}_${i}`;
    frames.push(
      sse("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id, name: call.name, input: {} },
      }),
    );
    for (const p of pieces(argumentsText(call), turn.argumentChunkChars ?? 7)) {
      frames.push(
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: p },
        }),
      );
    }
    frames.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index++;
  });
  frames.push(
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stopReason(turn), stop_sequence: null },
      usage: { output_tokens: u.output ?? 0 },
    }),
  );
  if (!turn.holdAfterFinish) frames.push(sse("message_stop", { type: "message_stop" }));
  return frames;
}

function openAiFrames(turn: ScriptTurn, model: string, n: number): string[] {
  const base = { id: `chatcmpl-${n}`, object: "chat.completion.chunk", created: 1_700_000_000, model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    sse(undefined, { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const frames = [chunk({ role: "assistant", content: "" })];
  const textSize = turn.textChunkChars ?? 8;
  for (const p of pieces(turn.reasoning ?? "", textSize)) frames.push(chunk({ reasoning_content: p }));
  for (const p of pieces(turn.text ?? "", textSize)) frames.push(chunk({ content: p }));
  (turn.toolCalls ?? []).forEach((call, i) => {
    const id = call.id ?? `call_${n}_${i}`;
    frames.push(
      chunk({ tool_calls: [{ index: i, id, type: "function", function: { name: call.name, arguments: "" } }] }),
    );
    for (const p of pieces(argumentsText(call), turn.argumentChunkChars ?? 7))
      frames.push(chunk({ tool_calls: [{ index: i, function: { arguments: p } }] }));
  });
  for (const p of pieces(turn.refusal ?? "", textSize)) frames.push(chunk({ refusal: p }));
  const reason = stopReason(turn);
  const finishes: Record<string, string> = {
    tool_use: "tool_calls",
    max_tokens: "length",
    refusal: "content_filter",
    model_context_window_exceeded: "length",
  };
  const finish = finishes[reason] ?? "stop";
  frames.push(chunk({}, turn.refusal ? "stop" : finish));
  const u = turn.usage ?? {};
  frames.push(
    sse(undefined, {
      ...base,
      choices: [],
      usage: {
        prompt_tokens: (u.input ?? 0) + (u.cacheRead ?? 0),
        completion_tokens: u.output ?? 0,
        total_tokens: (u.input ?? 0) + (u.cacheRead ?? 0) + (u.output ?? 0),
        prompt_tokens_details: { cached_tokens: u.cacheRead ?? 0 },
        ...(u.cost !== undefined ? { cost: u.cost } : {}),
      },
    }),
  );
  if (!turn.holdAfterFinish) frames.push("data: [DONE]\n\n");
  return frames;
}
