/**
 * Keeps each model request inside the context window. Before a request is sent, its size is
 * estimated (system prompt, tools, the whole conversation with the tool results just added);
 * when it would not fit, the conversation is trimmed without a model call (context-trim.ts),
 * and the turns it leaves out are summarized only as far as a summary request itself fits.
 * The estimate starts from what the server counted for the previous request (its usage) and
 * adds what came since at a conservative 3 characters per token; a "does not fit" answer (with
 * the server's figures when it gives them) leads to a smaller request, not a failed task.
 */
import type { ModelError, ModelMessage, TokenUsage, ToolSpec } from "../agent/index.js";
import type { Logger } from "../logging/logger.js";
import { conversationItems, latestContextTrim, mergeRoles } from "./conversation.js";
import {
  applyContextTrim,
  capToolResults,
  conversationChars,
  planTrim,
  shortenText,
  type ContextTrimData,
  type ConversationItem,
} from "./context-trim.js";
import type { ContextPort, JournalPort, RunnerModel, UsagePort } from "./ports.js";

/** Code and JSON run at about 3 characters per token (prose at 4 or more): the estimate's rate. */
const CHARS_PER_TOKEN = 3;
/** The estimate is a guess: keep this much of the limit free. */
const ESTIMATE_MARGIN = 1.05;
/** A trim aims this far below the limit, so the next turns fit without another one. */
const TRIM_TARGET = 0.6;
/** One tool result may take this share of the window (the rest of it: how to read more). */
const RESULT_SHARE = 0.25;
/** A request that overflowed is made smaller this many times before the task gives up. */
export const MAX_OVERFLOW_RETRIES = 4;

const SUMMARY_SYSTEM_PROMPT = "You write faithful, compact summaries of coding sessions.";
const SUMMARY_PROMPT =
  "Below is the earlier part of a coding session between a person and an AI agent, which no longer fits the agent's context window. " +
  "Summarize it so that the work can continue from the summary: the person's requests, what was done (files read, created and changed, " +
  "commands run and their outcome), decisions taken, open questions, and what remains to do. Keep file paths, names and exact values. " +
  "Answer with the summary only.";

export interface PreparedConversation {
  messages: ModelMessage[];
  /** Characters of the whole request (system prompt, tools, conversation): what calibration compares to usage. */
  chars: number;
  estimatedTokens: number;
  /** Input tokens the request may use. */
  limitTokens: number;
}

export interface ContextManagerDeps {
  journal: JournalPort;
  model: RunnerModel;
  usage: UsagePort;
  context: ContextPort;
  logger: Logger;
  /** Records a trim: journal entry, the chat's marker, context records, checkpoint. */
  recordTrim(trim: ContextTrimData, description: string): Promise<void>;
}

export class ContextManager {
  /** The last request the server counted: its characters and prompt tokens. */
  private counted: { chars: number; tokens: number } | undefined;
  /** A window the server stated, when smaller than the profile's. */
  private statedWindow: number | undefined;
  /** Shrinks after each overflow answer, so the next attempt aims lower. */
  private squeeze = 1;

  constructor(private readonly deps: ContextManagerDeps) {
    const saved = deps.context.read() ?? {};
    // A window the server stated for this model before (an overflow answer's figures).
    if (
      typeof saved.statedContextWindow === "number" &&
      saved.statedContextWindow > 0 &&
      saved.statedFor === deps.model.provider.model
    ) {
      this.statedWindow = saved.statedContextWindow;
    }
  }

  get contextWindow(): number {
    const window = this.deps.model.contextWindow;
    return this.statedWindow !== undefined ? Math.min(window, this.statedWindow) : window;
  }

  /** Input tokens a request with this output reservation may use. */
  limitTokens(maxOutputTokens: number): number {
    const window = this.contextWindow;
    return Math.floor(Math.max(window * 0.2, Math.min(window - maxOutputTokens, window * 0.95)) * this.squeeze);
  }

  /** Tokens of a request of `chars` characters: the last counted request plus what came since. */
  estimateTokens(chars: number): number {
    const counted = this.counted;
    const tokens =
      counted && chars >= counted.chars
        ? counted.tokens + (chars - counted.chars) / CHARS_PER_TOKEN
        : chars / CHARS_PER_TOKEN;
    return Math.ceil(tokens * ESTIMATE_MARGIN);
  }

  /** Characters of a request that an estimate of `tokens` allows (the inverse of estimateTokens). */
  private charsFor(tokens: number, fixedChars: number): number {
    return Math.max(0, Math.floor((tokens / ESTIMATE_MARGIN) * CHARS_PER_TOKEN) - fixedChars);
  }

  /** Characters one tool result may take in a request (read_file reads no more at once). */
  maxResultChars(): number {
    return Math.max(4000, Math.floor(this.contextWindow * RESULT_SHARE * CHARS_PER_TOKEN));
  }

  /**
   * The conversation for the next request, trimmed (and the trim recorded) when the request
   * would not fit. `convert` turns the items into what is sent (e.g. tools as text).
   */
  async prepare(
    request: {
      systemPrompt: string;
      tools: readonly ToolSpec[];
      maxOutputTokens: number;
      convert?: (items: ConversationItem[]) => ConversationItem[];
    },
    signal: AbortSignal,
  ): Promise<PreparedConversation> {
    const fixedChars =
      request.systemPrompt.length + (request.tools.length > 0 ? JSON.stringify(request.tools).length : 0);
    const limitTokens = this.limitTokens(request.maxOutputTokens);
    const view = (items: readonly ConversationItem[]) => {
      const capped = capToolResults(items, this.maxResultChars());
      return request.convert ? request.convert(capped) : capped;
    };
    let entries = this.deps.journal.entries();
    let items = conversationItems(entries);
    let trim = latestContextTrim(entries);
    let sent = view(applyContextTrim(items, trim));
    let chars = fixedChars + conversationChars(sent);
    if (this.estimateTokens(chars) > limitTokens && items.length > 1) {
      const plan = planTrim(
        items,
        trim,
        this.charsFor(limitTokens * TRIM_TARGET, fixedChars),
        this.charsFor(limitTokens, fixedChars),
        2,
        view,
      );
      const tokensBefore = this.estimateTokens(chars);
      if (plan.newlyDropped.length > 0) {
        plan.trim.summary = await this.summarize(plan.trim.summary, plan.newlyDropped, limitTokens, signal);
      }
      plan.trim.tokensBefore = tokensBefore;
      plan.trim.tokensAfter = this.estimateTokens(fixedChars + plan.chars);
      await this.deps.recordTrim(plan.trim, describeTrim(plan.trim, trim, plan.newlyDropped.length));
      entries = this.deps.journal.entries();
      items = conversationItems(entries);
      trim = latestContextTrim(entries);
      sent = view(applyContextTrim(items, trim));
      chars = fixedChars + conversationChars(sent);
    }
    return { messages: mergeRoles(sent), chars, estimatedTokens: this.estimateTokens(chars), limitTokens };
  }

  /** What the server counted for a request of `chars` characters: the base of the next estimate. */
  noteUsage(chars: number, usage: TokenUsage): void {
    const tokens = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
    if (tokens > 0 && chars > 0) this.counted = { chars, tokens };
  }

  /**
   * After the server answered that the request does not fit: learn from its figures (the
   * prompt's size, the real window) and aim lower. False once the task should stop trying.
   */
  noteOverflow(error: ModelError, chars: number, attempt: number): boolean {
    const { promptTokens, contextLimit } = error.details;
    if (promptTokens && promptTokens > 0 && chars > 0) this.counted = { chars, tokens: promptTokens };
    if (contextLimit && contextLimit > 0 && contextLimit < this.deps.model.contextWindow) {
      this.statedWindow = contextLimit;
      this.save();
    }
    // Without figures, the estimate was wrong by an unknown amount: aim lower each time.
    if (!promptTokens) this.squeeze *= 0.75;
    this.deps.logger.warn("context overflow: the request is made smaller", {
      attempt,
      window: this.contextWindow,
      promptTokens,
      contextLimit,
    });
    return attempt < MAX_OVERFLOW_RETRIES;
  }

  /** An answer filled the rest of the window (Anthropic's model_context_window_exceeded): aim lower. */
  leaveMoreRoom(): void {
    this.squeeze *= 0.8;
  }

  private save(): void {
    try {
      const current = this.deps.context.read() ?? {};
      this.deps.context.write({
        ...current,
        statedContextWindow: this.statedWindow,
        statedFor: this.deps.model.provider.model,
      });
    } catch (err) {
      this.deps.logger.warn("context.json not written", { error: (err as Error).message });
    }
  }

  /**
   * A summary of the turns being left out (with the summary they had before), asked with a
   * transcript cut to what fits half the window. Undefined when it cannot be had: the turns are
   * then left out with a note, and the task goes on.
   */
  private async summarize(
    previous: string | undefined,
    dropped: ConversationItem[],
    limitTokens: number,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    const budgetChars = this.charsFor(limitTokens * 0.5, SUMMARY_PROMPT.length + SUMMARY_SYSTEM_PROMPT.length);
    if (budgetChars < 2000) return undefined;
    const transcript = fitTranscript(previous, dropped, budgetChars);
    const { provider } = this.deps.model;
    let summary = "";
    try {
      for await (const ev of provider.stream(
        {
          systemPrompt: SUMMARY_SYSTEM_PROMPT,
          messages: [
            {
              role: "user",
              content: [{ type: "text", text: `${SUMMARY_PROMPT}\n\n<transcript>\n${transcript}\n</transcript>` }],
            },
          ],
          maxTokens: 2048,
        },
        signal,
      )) {
        if (ev.type === "text_delta") summary += ev.text;
        else if (ev.type === "retry" && ev.discard) summary = "";
        else if (ev.type === "usage") this.deps.usage.record(ev.usage, ev.costUsd, provider.model);
        else if (ev.type === "error") {
          if (ev.error.kind === "canceled") throw ev.error;
          this.deps.logger.warn("summary request failed; older turns are left out with a note", {
            error: ev.error.message,
          });
          return undefined;
        }
      }
    } catch (err) {
      signal.throwIfAborted();
      throw err;
    }
    return summary.trim() || undefined;
  }
}

/** The transcript of the turns to summarize, its tool results shortened (then its oldest part cut) to fit. */
function fitTranscript(previous: string | undefined, items: readonly ConversationItem[], budgetChars: number): string {
  for (const resultChars of [4000, 1500, 400]) {
    const text = renderTranscript(previous, items, resultChars);
    if (text.length <= budgetChars) return text;
  }
  const text = renderTranscript(previous, items, 200);
  return `[... the oldest part of the transcript is left out ...]\n${text.slice(text.length - budgetChars + 60)}`;
}

function renderTranscript(
  previous: string | undefined,
  items: readonly ConversationItem[],
  resultChars: number,
): string {
  const lines: string[] = [];
  if (previous) lines.push(`Summary of what came before:\n${previous}`);
  for (const item of items) {
    for (const b of item.blocks) {
      if (b.type === "text") lines.push(`${item.role === "user" ? "Person" : "Agent"}: ${b.text}`);
      else if (b.type === "tool_use")
        lines.push(`Agent called ${b.name} ${JSON.stringify(b.input ?? {}).slice(0, 1000)}`);
      else if (b.type === "tool_result")
        lines.push(
          `Result${b.isError ? " (error)" : ""}: ${shortenText(b.content, Math.floor(resultChars * 0.75), Math.floor(resultChars * 0.25), "left out")}`,
        );
    }
  }
  return lines.join("\n\n");
}

function describeTrim(trim: ContextTrimData, before: ContextTrimData | undefined, newlyDropped: number): string {
  const parts: string[] = [];
  const elided = trim.elided.length - (before?.elided.length ?? 0);
  const shortened = trim.shortened.length - (before?.shortened.length ?? 0);
  if (elided > 0) parts.push(`${elided} repeated file read${elided === 1 ? "" : "s"} left out`);
  if (shortened > 0) parts.push(`${shortened} long tool result${shortened === 1 ? "" : "s"} shortened`);
  if (newlyDropped > 0)
    parts.push(
      `${newlyDropped} older message${newlyDropped === 1 ? "" : "s"} ${trim.summary ? "summarized" : "removed"}`,
    );
  return `To fit the context window: ${parts.join(", ") || "nothing more could be trimmed"}.`;
}
