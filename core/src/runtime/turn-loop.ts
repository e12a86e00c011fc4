import { randomUUID } from "node:crypto";
import { TaskStatus } from "../gen/dline/v1/task_pb.js";
import type { AutoApprovalSettings } from "../agent/approval.js";
import type { ContentBlock, StopReason } from "../agent/providers/types.js";
import type { IgnoreMatcher } from "../agent/tools/ignore-matcher.js";
import { toolSpecs } from "../agent/tools/registry.js";
import type { ToolDefinition, ToolEnvironment } from "../agent/tools/types.js";
import type { ToolGuard } from "../agent/tools/tool-guard.js";
import type { Logger } from "../logging/logger.js";
import { uiMessage, type StoredUiMessage } from "../tasks/message-store.js";
import { uiMessageToProto } from "../rpc/task-mapping.js";
import type { AskBroker } from "./ask-broker.js";
import { JOURNAL_KIND, rebuildConversation } from "./conversation.js";
import type { TaskEventLog } from "./event-log.js";
import type { CheckpointPort, ContextPort, JournalPort, MessagesPort, RunnerModel, UsagePort } from "./ports.js";
import { runAndRecordHooks, type CapabilitiesPort, type HookEvent, type HookOutcome } from "./capabilities-port.js";
import type { EnabledRule } from "../agent/system-prompt.js";
import { attachCheckpoint, runToolCalls, type ToolTurnHost } from "./tool-turn.js";
import { describeRunFailure } from "./run-failure.js";
import { boundedDelta } from "./message-bounds.js";

export interface TurnLoopDeps {
  taskId: string;
  workspaceRoot: string;
  events: TaskEventLog;
  asks: AskBroker;
  messages: MessagesPort;
  journal: JournalPort;
  model: RunnerModel;
  tools: readonly ToolDefinition[];
  /** The global autoApprovalSettings, read at each decision (never a task's snapshot). */
  autoApproval: () => Promise<AutoApprovalSettings>;
  /** The workspace's .agentignore, loaded once per run. */
  agentIgnore: () => Promise<IgnoreMatcher>;
  /** The core's own folders (out of the tools' reach) and the stored secrets (redacted from tool output). */
  toolGuard: () => Promise<ToolGuard>;
  /** Where execute_command writes its log (tmp/command-logs/), and the budget enforcement after it. */
  commandLog: { pathFor(callId: string): string; afterCommand(path: string): Promise<void> };
  commandTimeoutMs: () => Promise<number>;
  checkpoints: CheckpointPort | undefined;
  usage: UsagePort;
  /** The system prompt with this turn's enabled rules and tools. */
  systemPrompt: (rules: readonly EnabledRule[], tools: readonly ToolDefinition[]) => string;
  /** Rules, workflows, skills, hooks, MCP tools (issue 11); read at every turn. */
  capabilities: CapabilitiesPort;
  /** Records an activity (activities.db): hook runs and their output, never as the user's words. */
  recordActivity: (kind: string, data: Record<string, unknown>) => void;
  setStatus: (status: TaskStatus, reason?: string) => void;
  logger: Logger;
  /** Upper bound of model requests in one run, so a looping model cannot run forever. */
  maxRequestsPerRun?: number;
  context: ContextPort;
  /** Runs a subagent for new_subagent and returns its result (absent: subagents are not available). */
  runSubagent?: (prompt: string, name: string | undefined, signal: AbortSignal) => Promise<string>;
  /** Share of the context window past which older turns are compacted (default 0.8). */
  compactAt?: number;
  /** The host editor's file and terminal I/O for this task, read at each tool call (absent: local). */
  environment?: () => ToolEnvironment | undefined;
}

const COMPACTION_PROMPT =
  "Summarize the conversation so far so that the work can continue from the summary alone: the task and the person's " +
  "requests, what was done (files read, created and changed, commands run and their outcome), decisions taken, open " +
  "questions, and what remains to do. Keep file paths, names and exact values. Answer with the summary only.";

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
} as const;

/** The `mode` setting: in plan mode the agent reads and plans; tools that change anything are refused. */
export type TaskMode = "act" | "plan";

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
  /** Tokens the last request occupied in the context window (prompt and answer). */
  private contextTokens = 0;
  /** This turn's tools: the built-in ones and those capabilities add (read at every turn). */
  private turnTools: readonly ToolDefinition[] = [];
  /** The task's mode, read at every request and tool call (absent: act). */
  private modeSource: (() => Promise<TaskMode>) | undefined;

  constructor(private readonly deps: TurnLoopDeps) {}

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
    this.deps.events.append({ case: "messageAdded", value: { message: uiMessageToProto(message) } });
    return message;
  }

  private finalize(message: StoredUiMessage): void {
    this.deps.messages.update(message);
    this.deps.events.append({ case: "messageFinalized", value: { message: uiMessageToProto(message) } });
  }

  /** Appends a journal entry recording the UI messages added since the previous one. */
  private journal(kind: string, data: object): void {
    this.deps.journal.append({ kind, data: JSON.stringify({ ...data, messageIds: this.unjournaled }) });
    this.unjournaled = [];
  }

  private get capabilityContext() {
    return { taskId: this.deps.taskId, workspaceRoot: this.deps.workspaceRoot };
  }

  /** Runs the hooks of an event and records what they printed as activities. */
  async hooks(event: HookEvent, payload: Record<string, unknown>, signal?: AbortSignal): Promise<HookOutcome> {
    return runAndRecordHooks(this.deps.capabilities, this.deps.recordActivity, event, payload, { ...this.capabilityContext, signal });
  }

  /**
   * Adds the user's words to the chat and the journal. The chat shows them as typed; the model
   * reads them with `/workflow` references expanded.
   */
  async addUserMessage(text: string): Promise<StoredUiMessage> {
    await this.hooks("UserPromptSubmit", { text });
    const expanded = await this.deps.capabilities.expandUserText(text, this.capabilityContext);
    const message = this.addMessage({ role: "user", kind: "text", text });
    this.journal(JOURNAL_KIND.user, { text: expanded });
    return message;
  }

  async run(signal: AbortSignal): Promise<RunOutcome> {
    const { deps } = this;
    const maxRequests = deps.maxRequestsPerRun ?? 200;
    deps.setStatus(TaskStatus.RUNNING);
    try {
      for (let request = 0; request < maxRequests; request++) {
        signal.throwIfAborted();
        const turn = await this.streamAssistantTurn(signal);
        if (turn.failed) return "failed";
        if (turn.toolCalls.length === 0) {
          const reason =
            turn.stopReason === "max_tokens" ? MODEL_STOP_REASONS.maxTokens : turn.stopReason === "refusal" ? MODEL_STOP_REASONS.refusal : "the model ended its turn";
          deps.setStatus(TaskStatus.COMPLETED, reason);
          return "idle";
        }
        const outcome = await runToolCalls(this.toolHost(), turn.toolCalls, turn.messageId, signal);
        if (outcome === "completed") return "completed";
      }
      deps.setStatus(TaskStatus.FAILED, `stopped after ${maxRequests} model requests in one run`);
      return "failed";
    } catch (err) {
      if (signal.aborted) {
        // A stopping sidecar leaves the task interrupted (resumable); a user's cancel cancels it.
        const stopping = (signal.reason as { code?: string } | undefined)?.code === "unavailable";
        deps.setStatus(stopping ? TaskStatus.INTERRUPTED : TaskStatus.CANCELLED, stopping ? "the sidecar stopped" : "cancelled");
        return "cancelled";
      }
      const { code, message } = describeRunFailure(err);
      deps.logger.error("turn loop failed", { taskId: deps.taskId, error: err instanceof Error ? err.message : String(err) });
      deps.events.append({ case: "error", value: { code, message, retryable: false } });
      deps.setStatus(TaskStatus.FAILED, message);
      return "failed";
    }
  }

  /**
   * Context management: when the last request filled most of the context window, older turns
   * are replaced by a summary the model writes (a compaction entry in the journal, recorded in
   * context.json and context_history.jsonl, marked by a compaction checkpoint).
   */
  private async compactIfNeeded(signal: AbortSignal, force = false): Promise<void> {
    const { deps } = this;
    const window = deps.model.contextWindow;
    if (!force && (window <= 0 || this.contextTokens < window * (deps.compactAt ?? 0.8))) return;
    const entries = deps.journal.entries();
    if (entries.length < 2) return;
    const conversation = rebuildConversation(entries);
    conversation.push({ role: "user", content: [{ type: "text", text: COMPACTION_PROMPT }] });
    let summary = "";
    for await (const ev of deps.model.provider.stream({ systemPrompt: "You write faithful, compact summaries of coding sessions.", messages: conversation }, signal)) {
      if (ev.type === "text_delta") summary += ev.text;
      else if (ev.type === "usage") deps.usage.record(ev.usage, ev.costUsd, deps.model.provider.model);
      else if (ev.type === "error") throw ev.error;
    }
    signal.throwIfAborted();
    if (!summary.trim()) return;
    const upToSeq = entries[entries.length - 1].seq;
    const tokensBefore = this.contextTokens;
    const marker = this.addMessage({ role: "system", kind: "compaction", text: "Older turns were summarized to fit the context window.", detail: JSON.stringify({ summary }) });
    this.journal(JOURNAL_KIND.compaction, { summary, upToSeq });
    const record = { time: Date.now(), upToSeq, tokensBefore, contextWindow: window, summaryChars: summary.length };
    deps.context.write({ lastCompaction: record, summary });
    deps.context.appendHistory({ kind: "compaction", ...record });
    this.contextTokens = 0;
    if (deps.checkpoints) attachCheckpoint(deps, marker, await deps.checkpoints.saveCompaction(marker.id), "CHECKPOINT_KIND_COMPACTION");
  }

  private async streamAssistantTurn(
    signal: AbortSignal,
    retriedAfterOverflow = false,
  ): Promise<{ failed: boolean; toolCalls: { id: string; name: string; input: Record<string, unknown> | undefined; parseError?: string }[]; messageId: string; stopReason?: StopReason }> {
    const { deps } = this;
    await this.compactIfNeeded(signal);
    const conversation = rebuildConversation(deps.journal.entries());
    const capabilities = await deps.capabilities.forTurn({ ...this.capabilityContext, signal });
    this.turnTools = [...deps.tools, ...capabilities.tools.filter((t) => !deps.tools.some((b) => b.name === t.name))];
    const specs = toolSpecs(this.turnTools);
    let message: StoredUiMessage | undefined;
    const toolCalls: { id: string; name: string; input: Record<string, unknown> | undefined; parseError?: string }[] = [];
    let failed = false;
    let overflow = false;
    let stopReason: StopReason | undefined;
    const planMode = (await this.mode()) === "plan";
    const systemPrompt = deps.systemPrompt(capabilities.rules, this.turnTools);
    for await (const ev of deps.model.provider.stream(
      { systemPrompt: planMode ? `${systemPrompt}\n${PLAN_MODE_PROMPT}\n` : systemPrompt, messages: conversation, tools: specs, maxTokens: deps.model.maxOutputTokens || undefined },
      signal,
    )) {
      switch (ev.type) {
        case "text_delta": {
          const text = boundedDelta(message?.text.length ?? 0, ev.text);
          if (!text) break;
          if (!message) message = this.addMessage({ role: "assistant", kind: "text", text, partial: true });
          else {
            message.text += text;
            deps.events.append({ case: "messageDelta", value: { messageId: message.id, text } });
          }
          break;
        }
        case "tool_call_end":
          toolCalls.push({ id: ev.id, name: ev.name, input: ev.input, parseError: ev.parseError });
          break;
        case "usage":
          this.contextTokens = ev.usage.inputTokens + ev.usage.cacheReadTokens + ev.usage.cacheWriteTokens + ev.usage.outputTokens;
          deps.usage.record(ev.usage, ev.costUsd, deps.model.provider.model);
          deps.events.append({
            case: "usage",
            value: {
              tokensIn: BigInt(ev.usage.inputTokens),
              tokensOut: BigInt(ev.usage.outputTokens),
              cacheReads: BigInt(ev.usage.cacheReadTokens),
              cacheWrites: BigInt(ev.usage.cacheWriteTokens),
              cost: ev.costUsd,
            },
          });
          break;
        case "stop":
          stopReason = ev.reason;
          break;
        case "error":
          if (ev.error.kind === "context_overflow" && !retriedAfterOverflow && !message && toolCalls.length === 0) {
            overflow = true;
            break;
          }
          failed = true;
          deps.events.append({
            case: "error",
            value: { code: ev.error.kind, message: ev.error.message, retryable: ev.error.retryable },
          });
          break;
        default:
          break;
      }
    }
    signal.throwIfAborted();
    if (overflow) {
      // The prompt no longer fits (e.g. after a restart, with no usage seen yet): compact, once.
      await this.compactIfNeeded(signal, true);
      return this.streamAssistantTurn(signal, true);
    }
    if (message) {
      message.partial = false;
      this.finalize(message);
    }
    const content: ContentBlock[] = [];
    if (message?.text) content.push({ type: "text", text: message.text });
    for (const call of toolCalls) content.push({ type: "tool_use", id: call.id, name: call.name, input: call.input ?? {} });
    if (failed) {
      deps.setStatus(TaskStatus.FAILED, "the model request failed");
      return { failed, toolCalls: [], messageId: message?.id ?? "" };
    }
    this.journal(JOURNAL_KIND.assistant, { content });
    return { failed, toolCalls, messageId: message?.id ?? "", stopReason };
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
      get autoApprovedInARow() {
        return loop.autoApprovedInARow;
      },
      set autoApprovedInARow(count: number) {
        loop.autoApprovedInARow = count;
      },
      mode: () => this.mode(),
      hooks: (event, payload, signal) => this.hooks(event, payload, signal),
      addMessage: (init) => this.addMessage(init),
      finalize: (message) => this.finalize(message),
      journal: (kind, data) => this.journal(kind, data),
    };
  }
}
