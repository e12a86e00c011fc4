import { randomUUID } from "node:crypto";
import {
  environmentDetails,
  type EditorFiles,
  type ContentBlock,
  type StopReason,
  parseTextToolCalls,
  TextToolStreamFilter,
  toolSpecs,
  type ToolDefinition,
} from "../agent/index.js";
import { uiMessage, type StoredUiMessage } from "../tasks/index.js";
import {
  settleInterrupted,
  streamAnswer,
  type AnswerHost,
  type AssistantAnswer,
  type ModelToolCall,
} from "./assistant-stream.js";
import { ContextManager } from "./context-manager.js";
import { JOURNAL_KIND, latestToolFormat } from "./conversation.js";
import { textToolItems } from "./text-tool-conversation.js";
import { runAndRecordHooks, type HookEvent, type HookOutcome } from "./capabilities-port.js";
import { attachCheckpoint, runToolCalls, type ToolTurnHost } from "./tool-turn.js";
import { settledWithoutRerun, stoppedTurn, TOOL_CALL_PROGRESS, type StoppedTurn } from "./stopped-turn.js";
import { describeRunFailure } from "./run-failure.js";
import { stoppedRunStatus } from "./run-stop.js";
import { askAfterMistakes, MAX_CONSECUTIVE_MISTAKES } from "./mistake-limit.js";
import { OutputLimit } from "./output-limit.js";
import type { TaskMode, TurnLoopDeps } from "./turn-deps.js";
import { boundedDelta } from "./message-bounds.js";
import type { ContextTrimData } from "./context-trim.js";

/** What the model reads about a tool call its answer was cut in (its arguments are incomplete). */
function cutToolCallNote(limit: number, windowFull: boolean): string {
  const where = windowFull
    ? "filled what was left of the context window"
    : `reached the output token limit (${limit} tokens)`;
  return (
    `your answer ${where} in the middle of this tool call, so its arguments are incomplete and it was not run. ` +
    "Write smaller pieces: create a large file with a first part and add the rest with replace_in_file, and split large edits into several calls"
  );
}

/** Closes, in what the model reads back, a text answer that its output limit or the window cut. */
function cutAnswerNote(windowFull: boolean): string {
  const why = windowFull ? "it filled what was left of the context window" : "it reached the output token limit";
  return `[This answer was cut here: ${why}.]`;
}

interface AssistantTurn {
  failed: boolean;
  toolCalls: ModelToolCall[];
  messageId: string;
  stopReason?: StopReason;
  /** Tool calls that cannot run at all (cut, not valid, unknown tool). */
  malformed: number;
  problem?: string;
}
/** How a run of the loop ended. */
export type RunOutcome = "completed" | "idle" | "cancelled" | "failed";

/**
 * The status reasons of a run that ended because of how the model's answer stopped (not
 * because it chose to end its turn); clients map them (ACP: the `max_tokens` and `refusal`
 * stop reasons).
 */
export const MODEL_STOP_REASONS = {
  maxTokens: "the model's answer reached its output token limit",
  refusal: "the model refused to answer",
  contextWindow: "the model's answer filled the context window",
} as const;

/** Closes the text of an answer that was stopped midway, in what the model reads back. */
export const INTERRUPTED_ANSWER_NOTE = "[This answer was interrupted here: the task was stopped before it ended.]";

const PLAN_MODE_PROMPT =
  "# Plan mode\nThe person set this task to plan mode: explore with the read-only tools, ask what you need to know, and " +
  "answer with a plan of the changes (update_plan helps them follow it). Tools that modify the workspace or run commands " +
  "are refused in plan mode; subagents you start explore in plan mode too. The person switches to act mode when the " +
  "plan suits them.";

/**
 * The agent's turn loop for one task: ask the model, stream its answer as events, run the
 * tools it calls (asking for approval unless auto-approved), journal every step, save a
 * checkpoint after each turn that may have modified the workspace, until the model completes,
 * stops calling tools, or the run is cancelled. The journal is the source of truth: each
 * request's conversation is rebuilt from it.
 */
export class TurnLoop {
  /** Consecutive auto-approved calls, bounded by autoApprovalSettings.maxRequests. */
  private autoApprovedInARow = 0;
  /**
   * UI messages added since the last journal entry: each entry records them, so that a restore
   * to a message can cut the journal at the matching step.
   */
  private unjournaled: string[] = [];
  /** The last UI message added: the anchor of the checkpoint saved at the end of a turn. */
  private lastMessageId = "";
  /** The last UI message added (its row records a turn checkpoint anchored on it). */
  private lastMessage: StoredUiMessage | undefined;
  /** Keeps each request inside the context window. */
  private readonly context: ContextManager;
  /** The max_tokens of the requests (raised after an answer was cut). */
  private readonly outputLimit: OutputLimit;
  /** Answers in a row whose tool calls could not be run. */
  private mistakes = 0;
  /** A stopped turn the next run goes on with (continueStoppedTurn). */
  private stoppedTurn: StoppedTurn | undefined;
  /** The journal seq of the current turn's answer: its calls' progress entries come after it. */
  private turnSeq = 0;
  /** This turn's tools: the built-in ones and those capabilities add (read at every turn). */
  private turnTools: readonly ToolDefinition[] = [];
  /** The task's mode, read at every request and tool call (absent: act). */
  private modeSource: (() => Promise<TaskMode>) | undefined;
  /** Turns' checkpoints being saved (ToolTurnHost.deferSave): settled before a status that ends the run. */
  private readonly turnSaves = new Set<Promise<void>>();
  /** The task's baseline being saved and told (settleBaselineBeforeEnd). */
  private baseline: Promise<void> | undefined;

  constructor(private readonly deps: TurnLoopDeps) {
    this.outputLimit = new OutputLimit(deps.model);
    this.context = new ContextManager({
      journal: deps.journal,
      model: deps.model,
      usage: deps.usage,
      context: deps.context,
      logger: deps.logger,
      recordTrim: (trim, description) => this.recordTrim(trim, description),
    });
  }

  /** Where the loop reads the task's mode (the runtime sets it for a task's own loop). */
  setModeSource(source: () => Promise<TaskMode>): void {
    this.modeSource = source;
  }

  private async mode(): Promise<TaskMode> {
    return this.modeSource ? this.modeSource() : "act";
  }

  private addMessage(init: Partial<StoredUiMessage>): StoredUiMessage {
    const message = uiMessage({ id: randomUUID(), ...init });
    this.deps.messages.append(message);
    this.unjournaled.push(message.id);
    this.lastMessageId = message.id;
    this.lastMessage = message;
    this.deps.events.append({ case: "messageAdded", value: { message: { ...message } } });
    return message;
  }

  private finalize(message: StoredUiMessage): void {
    this.deps.messages.update(message);
    this.deps.events.append({ case: "messageFinalized", value: { message: { ...message } } });
  }

  /**
   * The task's baseline being saved and told: the run's ending status waits for it, as for the
   * turns' checkpoints (a task that modifies nothing did not wait for it otherwise, so whether a
   * client heard of the baseline before the task ended depended on the scan's speed). A stop
   * does not wait for it: a first baseline may take seconds.
   */
  settleBaselineBeforeEnd(baseline: Promise<void>): void {
    this.baseline = baseline;
  }

  private deferSave(saving: Promise<void>): void {
    this.turnSaves.add(saving);
    void saving.finally(() => this.turnSaves.delete(saving));
  }

  /** Resolves when every turn's checkpoint this loop started saving was saved (or failed). */
  private async settleSaves(): Promise<void> {
    await Promise.all(this.turnSaves);
  }

  /** What a status that ends the run (but a stop) waits for: the turns' checkpoints and the baseline. */
  private async settleForEnd(): Promise<void> {
    await this.baseline;
    await this.settleSaves();
  }

  /**
   * Journals a step with the chat messages it produced (a rewind cuts at them). With
   * `dropsProgressAfter`, the step holds a turn's results: its calls' progress entries go.
   */
  private journal(kind: string, data: object, dropsProgressAfter?: number): number {
    const entry = { kind, data: JSON.stringify({ ...data, messageIds: this.unjournaled }) };
    const seq =
      dropsProgressAfter === undefined
        ? this.deps.journal.append(entry)
        : this.deps.journal.appendDropping(entry, TOOL_CALL_PROGRESS, dropsProgressAfter);
    this.unjournaled = [];
    return seq;
  }

  private get capabilityContext() {
    return { taskId: this.deps.taskId, workspaceRoot: this.deps.workspaceRoot };
  }

  /** Runs the hooks of an event and records what they printed as activities. */
  async hooks(
    event: HookEvent,
    payload: Record<string, unknown>,
    signal?: AbortSignal,
    beforeHooks?: () => Promise<void>,
  ): Promise<HookOutcome> {
    return runAndRecordHooks(this.deps.capabilities, this.deps.recordActivity, event, payload, {
      ...this.capabilityContext,
      signal,
      beforeHooks,
      secrets: () => this.deps.toolGuard(),
    });
  }

  /**
   * Adds the user's words to the chat and the journal. The chat shows them as typed; the model
   * reads them with `/workflow` references expanded, and with environment details: the files the
   * editor shows (when the client reports them) and, with the task's first message, the
   * workspace's top-level files.
   */
  async addUserMessage(
    text: string,
    options: { editor?: EditorFiles; firstMessage?: boolean } = {},
  ): Promise<StoredUiMessage> {
    await this.hooks("UserPromptSubmit", { text });
    const expanded = await this.deps.capabilities.expandUserText(text, this.capabilityContext);
    const environment =
      options.editor || options.firstMessage
        ? await environmentDetails({
            workspaceRoot: this.deps.workspaceRoot,
            editor: options.editor,
            workspaceFiles: options.firstMessage === true,
            ignore: await this.deps.agentIgnore(),
          })
        : undefined;
    // A turn its run stopped in gets its calls' results first: the APIs refuse a tool call
    // without one, and the person wrote instead of resuming it.
    const stopped = stoppedTurn(this.deps.journal.entries());
    if (stopped) this.journal(JOURNAL_KIND.toolResults, settledWithoutRerun(stopped), stopped.afterSeq);
    const message = this.addMessage({ role: "user", kind: "text", text });
    this.journal(JOURNAL_KIND.user, environment ? { text: expanded, environment } : { text: expanded });
    return message;
  }

  /**
   * Resume of a turn its run stopped in while a call waited for approval: the next run first
   * runs the calls that never started (asking again), with the results of those that ended.
   */
  continueStoppedTurn(turn: StoppedTurn): void {
    this.stoppedTurn = turn;
  }

  /** Records a context trim: the journal entry (what the next requests leave out), the chat's marker, context.json and its history, a compaction checkpoint. */
  private async recordTrim(trim: ContextTrimData, description: string): Promise<void> {
    const { deps } = this;
    const marker = this.addMessage({
      role: "system",
      kind: "compaction",
      text: description,
      detail: JSON.stringify({ summary: trim.summary ?? "", ...trim }),
    });
    this.journal(JOURNAL_KIND.contextTrim, trim);
    const record = {
      time: Date.now(),
      kind: "trim",
      droppedThroughSeq: trim.droppedThroughSeq,
      elided: trim.elided.length,
      shortened: trim.shortened.length,
      tokensBefore: trim.tokensBefore,
      tokensAfter: trim.tokensAfter,
      contextWindow: this.context.contextWindow,
      summaryChars: trim.summary?.length ?? 0,
    };
    deps.context.write({ ...(deps.context.read() ?? {}), lastTrim: record, summary: trim.summary ?? "" });
    deps.context.appendHistory(record);
    if (deps.checkpoints)
      attachCheckpoint(deps, marker, await deps.checkpoints.saveCompaction(marker.id), "CHECKPOINT_KIND_COMPACTION");
  }

  async run(signal: AbortSignal): Promise<RunOutcome> {
    const { deps } = this;
    const maxRequests = deps.maxRequestsPerRun ?? 200;
    deps.setStatus("running");
    try {
      const stopped = this.stoppedTurn;
      this.stoppedTurn = undefined;
      if (stopped) {
        this.turnSeq = stopped.afterSeq;
        await this.loadTurnTools(signal);
        if ((await runToolCalls(this.toolHost(), stopped.notStarted, "", signal, stopped)) === "completed")
          return "completed";
      }
      for (let request = 0; request < maxRequests; request++) {
        signal.throwIfAborted();
        const turn = await this.streamAssistantTurn(signal);
        if (turn.failed) {
          await this.settleForEnd();
          deps.setStatus("failed", "the model request failed");
          return "failed";
        }
        if (turn.toolCalls.length === 0) {
          const reason =
            turn.stopReason === "max_tokens"
              ? MODEL_STOP_REASONS.maxTokens
              : turn.stopReason === "refusal"
                ? MODEL_STOP_REASONS.refusal
                : turn.stopReason === "context_window_exceeded"
                  ? MODEL_STOP_REASONS.contextWindow
                  : "the model ended its turn";
          await this.settleForEnd();
          deps.setStatus("completed", reason);
          return "idle";
        }
        const outcome = await runToolCalls(this.toolHost(), turn.toolCalls, turn.messageId, signal);
        if (outcome === "completed") return "completed";
        this.mistakes = turn.malformed === turn.toolCalls.length ? this.mistakes + 1 : 0;
        if (this.mistakes >= MAX_CONSECUTIVE_MISTAKES) {
          const goOn = await askAfterMistakes(
            { deps, addMessage: (init) => this.addMessage(init), journal: (kind, data) => this.journal(kind, data) },
            this.mistakes,
            turn.problem,
            signal,
          );
          this.mistakes = 0;
          if (goOn) continue;
          await this.settleForEnd();
          deps.setStatus("completed", "stopped after repeated tool calls that could not be run");
          return "idle";
        }
      }
      await this.settleForEnd();
      deps.setStatus("failed", `stopped after ${maxRequests} model requests in one run`);
      return "failed";
    } catch (err) {
      // A stop does not wait for the baseline (settleBaselineBeforeEnd); a failure does.
      await (signal.aborted ? this.settleSaves() : this.settleForEnd());
      if (signal.aborted) {
        const stopped = stoppedRunStatus(signal.reason);
        if (stopped) deps.setStatus(stopped.status, stopped.reason);
        return "cancelled";
      }
      const { code, message } = describeRunFailure(err);
      deps.logger.error("turn loop failed", {
        taskId: deps.taskId,
        error: err instanceof Error ? err.message : String(err),
      });
      deps.events.append({ case: "error", value: { code, message, retryable: false } });
      deps.setStatus("failed", message);
      return "failed";
    }
  }

  /** The turn's capabilities, and its tools: the built-in ones and those capabilities add. */
  private async loadTurnTools(signal: AbortSignal) {
    const { deps } = this;
    const capabilities = await deps.capabilities.forTurn({ ...this.capabilityContext, signal });
    this.turnTools = [...deps.tools, ...capabilities.tools.filter((t) => !deps.tools.some((b) => b.name === t.name))];
    return capabilities;
  }

  /**
   * One model request and its answer: the conversation fitted to the context window (trimmed
   * and recorded when it would not fit), the answer streamed, an answer refused as too large
   * sent again smaller, and a server that refuses native tools answered in text from then on.
   */
  private async streamAssistantTurn(signal: AbortSignal): Promise<AssistantTurn> {
    const { deps } = this;
    const capabilities = await this.loadTurnTools(signal);
    const textTools = this.toolFormat() === "xml";
    const specs = textTools ? [] : toolSpecs(this.turnTools);
    const planMode = (await this.mode()) === "plan";
    const basePrompt = deps.systemPrompt(capabilities.rules, this.turnTools, { textTools });
    const systemPrompt = planMode ? `${basePrompt}\n${PLAN_MODE_PROMPT}\n` : basePrompt;
    for (let overflows = 0; ;) {
      const maxTokens = this.outputLimit.current;
      const prepared = await this.context.prepare(
        {
          systemPrompt,
          tools: specs,
          maxOutputTokens: this.outputLimit.reserve(maxTokens, this.context.contextWindow),
          convert: textTools ? textToolItems : undefined,
        },
        signal,
      );
      const answer = await streamAnswer(
        this.answerHost(),
        deps.model.provider.stream({ systemPrompt, messages: prepared.messages, tools: specs, maxTokens }, signal),
        textTools ? () => new TextToolStreamFilter(this.turnTools) : undefined,
      );
      if (signal.aborted) {
        // The provider ended its stream at the abort: the text shown so far stays, as it is,
        // and the model reads it back (marked as cut), as the person saw it.
        if (answer.message?.partial) settleInterrupted(this.answerHost(), answer.message);
        this.journalInterrupted(answer.message?.text ?? "");
        signal.throwIfAborted();
      }
      if (answer.usage) this.context.noteUsage(prepared.chars, answer.usage);
      const error = answer.error;
      if (error?.kind === "context_overflow" && !answer.message && answer.toolCalls.length === 0) {
        overflows++;
        if (this.context.noteOverflow(error, prepared.chars, overflows)) continue;
      }
      if (error?.kind === "tools_unsupported" && !textTools) {
        // Answered in text from now on (recorded: the rest of the task, a resume too).
        deps.logger.warn("the server refused native tools; switching to text tool calls", { taskId: deps.taskId });
        this.journal(JOURNAL_KIND.toolFormat, { format: "xml", reason: error.message });
        return this.streamAssistantTurn(signal);
      }
      return this.finishAnswer(answer, textTools, maxTokens);
    }
  }

  /**
   * Journals the text of an answer stopped midway (its unfinished tool calls are dropped: none
   * ran), so that the model's next request holds what the person read, and their next words
   * come after it rather than merged into their previous message.
   */
  private journalInterrupted(text: string): void {
    if (!text.trim()) return;
    this.journal(JOURNAL_KIND.assistant, {
      content: [{ type: "text", text: `${text}\n\n${INTERRUPTED_ANSWER_NOTE}` }],
    });
  }

  /** Journals a finished answer (reasoning, text, tool calls); a cut tool call is marked as such. */
  private finishAnswer(answer: AssistantAnswer, textTools: boolean, maxTokens: number | undefined): AssistantTurn {
    const { deps } = this;
    // What the chat kept of the text (a runaway reply is cut there) is what the model reads back.
    let text = answer.message?.text ?? "";
    let toolCalls = answer.toolCalls;
    if (textTools) {
      const parsed = parseTextToolCalls(answer.text, this.turnTools);
      text = boundedDelta(0, parsed.text);
      toolCalls = parsed.calls.map((c) => ({
        id: `call_text_${randomUUID().slice(0, 12)}`,
        name: c.name,
        input: c.problem ? undefined : c.input,
        parseError: c.problem ? `the tool call is not complete: ${c.problem}` : undefined,
      }));
    }
    const cut = answer.stopReason === "max_tokens" || answer.stopReason === "context_window_exceeded";
    const last = toolCalls.at(-1);
    if (answer.message) {
      answer.message.partial = false;
      if (textTools) answer.message.text = text;
      // A text that stops at the output limit, a full window or a stream error is marked where
      // it stops, as a Cancel marks it: it is no complete answer.
      if (answer.message.kind === "text" && text && (answer.error || (cut && !last))) answer.message.cutOff = true;
      this.finalize(answer.message);
    }
    if (answer.error) {
      deps.events.append({
        case: "error",
        value: { code: answer.error.kind, message: answer.error.message, retryable: answer.error.retryable },
      });
      // The run's status says "failed" once the turns' checkpoints are saved (run()).
      return { failed: true, toolCalls: [], messageId: answer.message?.id ?? "", malformed: 0 };
    }
    // The answer filled the context window: the next requests leave more room.
    if (answer.stopReason === "context_window_exceeded") this.context.leaveMoreRoom();
    const windowFull = answer.stopReason === "context_window_exceeded";
    if (cut && last) {
      // The answer stopped inside its last tool call: say so, and allow longer answers (a call
      // cannot be split; a text can, by "go on", within the profile's limit).
      const limit = maxTokens ?? this.outputLimit.reserve(maxTokens, this.context.contextWindow);
      toolCalls = [
        ...toolCalls.slice(0, -1),
        { ...last, input: undefined, parseError: cutToolCallNote(limit, windowFull) },
      ];
      if (answer.stopReason === "max_tokens") this.outputLimit.raise(limit, this.context.contextWindow);
    } else if (cut && text) {
      // The model reads its cut text back as such, so "go on" continues it.
      text = `${text}\n\n${cutAnswerNote(windowFull)}`;
    }
    const content: ContentBlock[] = [...answer.thinking];
    if (text) content.push({ type: "text", text });
    for (const call of toolCalls)
      content.push({ type: "tool_use", id: call.id, name: call.name, input: call.input ?? {} });
    this.turnSeq = this.journal(JOURNAL_KIND.assistant, { content });
    const malformed = toolCalls.filter((c) => !c.input || !this.turnTools.some((t) => t.name === c.name)).length;
    return {
      failed: false,
      toolCalls,
      messageId: answer.message?.id ?? "",
      stopReason: answer.stopReason,
      malformed,
      problem: toolCalls.find((c) => c.parseError)?.parseError,
    };
  }

  /** How tools are offered now: the task's recorded switch, else the profile's choice. */
  private toolFormat(): "native" | "xml" {
    return latestToolFormat(this.deps.journal.entries()) ?? this.deps.model.toolCallFormat ?? "native";
  }

  private answerHost(): AnswerHost {
    const { deps } = this;
    return {
      events: deps.events,
      usage: deps.usage,
      modelName: deps.model.provider.model,
      contextWindow: deps.ownsContext ? this.context.contextWindow : undefined,
      addMessage: (init) => this.addMessage(init),
      finalize: (message) => this.finalize(message),
      store: (message) => deps.messages.update(message),
      lastMessageId: () => this.lastMessageId,
      removeMessagesAfter: (messageId) => {
        const kept = deps.messages.list();
        const index = messageId ? kept.findIndex((m) => m.id === messageId) : -1;
        const removed = new Set(kept.slice(index + 1).map((m) => m.id));
        if (messageId) deps.messages.truncateAfter(messageId);
        else deps.messages.clear();
        this.unjournaled = this.unjournaled.filter((id) => !removed.has(id));
        this.lastMessageId = messageId;
        this.lastMessage = index >= 0 ? kept[index] : undefined;
      },
    };
  }

  /** The loop's side of running a turn's tool calls (tool-turn.ts). */
  private toolHost(): ToolTurnHost {
    const loop = this;
    return {
      deps: this.deps,
      tools: this.turnTools,
      get lastMessageId() {
        return loop.lastMessageId;
      },
      get lastMessage() {
        return loop.lastMessage;
      },
      get autoApprovedInARow() {
        return loop.autoApprovedInARow;
      },
      set autoApprovedInARow(count: number) {
        loop.autoApprovedInARow = count;
      },
      mode: () => this.mode(),
      hooks: (event, payload, signal, beforeHooks) => this.hooks(event, payload, signal, beforeHooks),
      deferSave: (saving) => this.deferSave(saving),
      settleSaves: () => this.settleSaves(),
      settleForEnd: () => this.settleForEnd(),
      addMessage: (init) => this.addMessage(init),
      finalize: (message) => this.finalize(message),
      journal: (kind, data) => this.journal(kind, data),
      maxResultChars: this.context.maxResultChars(),
      uniqueToolCallId: (modelId) => this.deps.uniqueToolCallId(modelId),
      // Scratch, not a step of the conversation: it takes no chat messages (the results do).
      journalProgress: (progress) =>
        this.deps.journal.append({ kind: TOOL_CALL_PROGRESS, data: JSON.stringify(progress) }),
      journalResults: (data) => this.journal(JOURNAL_KIND.toolResults, data, this.turnSeq),
    };
  }
}
