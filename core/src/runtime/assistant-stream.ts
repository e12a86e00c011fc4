/**
 * One model answer as the task shows it: text streamed into a chat message, reasoning into a
 * message of its own (reasoning_delta events), usage recorded, retries shown as a status line
 * (`retrying in N s (attempt k of n)`) with the failed attempt's partial answer removed, and a
 * slow first byte shown while it is awaited. What goes back to the model (text, reasoning
 * blocks, tool calls) is collected for the journal.
 */
import {
  type ModelError,
  describeWait,
  type ModelStreamEvent,
  type StopReason,
  type ThinkingBlock,
  type TokenUsage,
  type TextToolStreamFilter,
} from "../agent/index.js";
import type { StoredUiMessage } from "../tasks/index.js";
import type { TaskEventLog } from "./event-log.js";
import { boundedDelta } from "./message-bounds.js";
import type { UsagePort } from "./ports.js";

export interface ModelToolCall {
  id: string;
  name: string;
  input: Record<string, unknown> | undefined;
  parseError?: string;
}

export interface AssistantAnswer {
  /** The chat message holding the answer's text (absent when there was none). */
  message: StoredUiMessage | undefined;
  /** The whole text as the model wrote it (with tool-call XML in text mode). */
  text: string;
  thinking: ThinkingBlock[];
  toolCalls: ModelToolCall[];
  stopReason?: StopReason;
  /** How the request failed, after the provider's retries. */
  error?: ModelError;
  /** The answer's usage (for calibrating the context estimate). */
  usage?: TokenUsage;
}

export interface AnswerHost {
  events: TaskEventLog;
  usage: UsagePort;
  modelName: string;
  /** The context window of the task's own requests; undefined for a subagent's. */
  contextWindow?: number;
  addMessage(init: Partial<StoredUiMessage>): StoredUiMessage;
  finalize(message: StoredUiMessage): void;
  /** Writes a message as it is now to the task's store (no event: its deltas were sent). */
  store(message: StoredUiMessage): void;
  /** Removes the chat messages after this one (a failed attempt's partial answer). */
  removeMessagesAfter(messageId: string): void;
  /** The id of the last chat message now. */
  lastMessageId(): string;
}

/** "retrying in 4 s (attempt 2 of 6)". */
export function retryLine(attempt: number, maxAttempts: number, delayMs: number): string {
  return `retrying in ${describeWait(delayMs)} (attempt ${attempt} of ${maxAttempts})`;
}

/**
 * A streaming message is stored again at most this often: the text shown so far survives a
 * sidecar that is killed or stops mid-answer (at most this much of it is lost), at the cost of
 * one row update per interval, not one per delta.
 */
const STORE_STREAMING_EVERY_MS = 1000;

export async function streamAnswer(
  host: AnswerHost,
  stream: AsyncIterable<ModelStreamEvent>,
  textFilter?: () => TextToolStreamFilter,
): Promise<AssistantAnswer> {
  const answer: AssistantAnswer = { message: undefined, text: "", thinking: [], toolCalls: [] };
  let reasoning: StoredUiMessage | undefined;
  let filter = textFilter?.();
  let anchor = host.lastMessageId();
  const shown: StoredUiMessage[] = [];
  let storedAt = Date.now();
  const storeNowAndThen = (message: StoredUiMessage) => {
    if (Date.now() - storedAt < STORE_STREAMING_EVERY_MS) return;
    storedAt = Date.now();
    host.store(message);
  };

  const appendText = (delta: string) => {
    // A runaway reply is cut (with a note) so that a stored message stays bounded.
    const text = boundedDelta(answer.message?.text.length ?? 0, delta);
    if (!text) return;
    if (!answer.message) {
      answer.message = host.addMessage({ role: "assistant", kind: "text", text, partial: true });
      shown.push(answer.message);
    } else {
      answer.message.text += text;
      host.events.append({ case: "messageDelta", value: { messageId: answer.message.id, text } });
      storeNowAndThen(answer.message);
    }
  };
  const closeReasoning = () => {
    if (!reasoning) return;
    reasoning.partial = false;
    host.finalize(reasoning);
    reasoning = undefined;
  };

  try {
    for await (const ev of stream) {
      switch (ev.type) {
        case "reasoning_delta": {
          const text = boundedDelta(reasoning && !answer.message ? reasoning.text.length : 0, ev.text);
          if (!text) break;
          if (!reasoning || answer.message) {
            reasoning = host.addMessage({ role: "assistant", kind: "reasoning", text, partial: true });
            shown.push(reasoning);
          } else {
            reasoning.text += text;
            host.events.append({ case: "reasoningDelta", value: { messageId: reasoning.id, text } });
            storeNowAndThen(reasoning);
          }
          break;
        }
        case "reasoning_end":
          answer.thinking.push(ev.block);
          break;
        case "text_delta":
          closeReasoning();
          answer.text += ev.text;
          appendText(filter ? filter.push(ev.text) : ev.text);
          break;
        case "tool_call_end":
          answer.toolCalls.push({ id: ev.id, name: ev.name, input: ev.input, parseError: ev.parseError });
          break;
        case "usage":
          answer.usage = ev.usage;
          host.usage.record(ev.usage, ev.costUsd, host.modelName, host.contextWindow);
          host.events.append({
            case: "usage",
            value: {
              tokensIn: BigInt(ev.usage.inputTokens),
              tokensOut: BigInt(ev.usage.outputTokens),
              cacheReads: BigInt(ev.usage.cacheReadTokens),
              cacheWrites: BigInt(ev.usage.cacheWriteTokens),
              cost: ev.costUsd ?? 0,
              costUnknown: ev.costUsd === undefined,
              contextWindow: BigInt(host.contextWindow ?? 0),
            },
          });
          break;
        case "retry": {
          const discarded = ev.discard ? shown.map((m) => m.id) : [];
          if (ev.discard) {
            // The next attempt answers from the start: what this one showed goes.
            if (shown.length > 0) host.removeMessagesAfter(anchor);
            answer.message = undefined;
            answer.text = "";
            answer.thinking = [];
            answer.toolCalls = [];
            reasoning = undefined;
            shown.length = 0;
            filter = textFilter?.();
          }
          host.events.append({
            case: "modelRetry",
            value: {
              attempt: ev.attempt,
              maxAttempts: ev.maxAttempts,
              delayMs: BigInt(ev.delayMs),
              reason: ev.reason,
              message: retryLine(ev.attempt, ev.maxAttempts, ev.delayMs),
              discardedMessageIds: discarded,
            },
          });
          anchor = host.lastMessageId();
          break;
        }
        case "waiting":
          host.events.append({
            case: "modelWaiting",
            value: {
              waitedMs: BigInt(ev.waitedMs),
              timeoutMs: BigInt(ev.timeoutMs),
              message: `waiting for the model: ${describeWait(ev.waitedMs)} (gives up after ${describeWait(ev.timeoutMs)} without an answer)`,
            },
          });
          break;
        case "stop":
          answer.stopReason = ev.reason;
          break;
        case "error":
          answer.error = ev.error;
          break;
        default:
          break;
      }
    }
  } catch (err) {
    // Cancelled, or the sidecar stops: what was shown stays, as far as it got.
    for (const message of shown) if (message.partial) settleInterrupted(host, message);
    throw err;
  }
  closeReasoning();
  if (filter) appendText(filter.end());
  return answer;
}

/**
 * A message whose answer stopped midway (a cancel, a stopping sidecar) keeps the text it had:
 * stored whole and no longer streaming, as the chat showed it.
 */
export function settleInterrupted(host: Pick<AnswerHost, "finalize">, message: StoredUiMessage): void {
  message.partial = false;
  // Clients mark where an answer was cut; reasoning that stopped is only reasoning that stopped.
  if (message.kind === "text") message.cutOff = true;
  host.finalize(message);
}
