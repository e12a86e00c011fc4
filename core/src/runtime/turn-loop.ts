import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { AskKind, AskSchema, TaskStatus } from "../gen/dline/v1/task_pb.js";
import { decideApproval, type AutoApprovalSettings } from "../agent/approval.js";
import type { ContentBlock, StopReason } from "../agent/providers/types.js";
import type { IgnoreMatcher } from "../agent/tools/ignore-matcher.js";
import { planText } from "../agent/tools/plan-tool.js";
import { runTool, toolSpecs } from "../agent/tools/registry.js";
import type { ToolDefinition, ToolEnvironment, ToolResult } from "../agent/tools/types.js";
import type { Logger } from "../logging/logger.js";
import { uiMessage, type StoredUiMessage } from "../tasks/message-store.js";
import { uiMessageToProto } from "../rpc/task-mapping.js";
import type { AskBroker } from "./ask-broker.js";
import { JOURNAL_KIND, rebuildConversation, type ToolResultsData } from "./conversation.js";
import type { TaskEventLog } from "./event-log.js";
import type { CheckpointPort, ContextPort, JournalPort, MessagesPort, RunnerModel, UsagePort } from "./ports.js";
import { runAndRecordHooks, type CapabilitiesPort, type HookEvent, type HookOutcome } from "./capabilities-port.js";
import type { EnabledRule } from "../agent/system-prompt.js";

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

const COMMAND_TOOL = "execute_command";
const SUBAGENT_TOOL = "new_subagent";

/** The `mode` setting: in plan mode the agent reads and plans; tools that change anything are refused. */
export type TaskMode = "act" | "plan";

const PLAN_MODE_PROMPT =
  "# Plan mode\nThe person set this task to plan mode: explore with the read-only tools, ask what you need to know, and " +
  "answer with a plan of the changes (update_plan helps them follow it). Tools that modify the workspace or run commands " +
  "are refused in plan mode; subagents you start explore in plan mode too. The person switches to act mode when the " +
  "plan suits them.";

/** One line a person reads about a tool call. */
function summarize(tool: string, input: Record<string, unknown>): string {
  const target = input.command ?? input.path ?? input.question ?? "";
  const text = typeof target === "string" ? target : JSON.stringify(target);
  return `${tool}${text ? ` ${text.split("\n")[0].slice(0, 200)}` : ""}`;
}

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
        const outcome = await this.runTools(turn.toolCalls, turn.messageId, signal);
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
      const message = err instanceof Error ? err.message : String(err);
      deps.logger.error("turn loop failed", { taskId: deps.taskId, error: message });
      deps.events.append({ case: "error", value: { code: "internal", message, retryable: false } });
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
    if (deps.checkpoints) {
      const id = await deps.checkpoints.saveCompaction(marker.id);
      if (id) {
        marker.checkpointId = id;
        deps.messages.update(marker);
        deps.events.append({ case: "checkpointSaved", value: { checkpointId: id, messageId: marker.id, kind: "CHECKPOINT_KIND_COMPACTION" } });
      }
    }
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
        case "text_delta":
          if (!message) message = this.addMessage({ role: "assistant", kind: "text", text: ev.text, partial: true });
          else {
            message.text += ev.text;
            deps.events.append({ case: "messageDelta", value: { messageId: message.id, text: ev.text } });
          }
          break;
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

  /** Asks the editor and waits; the status is WAITING meanwhile. */
  private async ask(kind: AskKind, tool: string, summary: string, detail: string, options: string[], signal: AbortSignal) {
    const { deps } = this;
    const answer = await deps.asks.ask((askId) => {
      deps.events.append({ case: "ask", value: create(AskSchema, { askId, kind, tool, summary, detail, options }) });
      deps.setStatus(TaskStatus.WAITING, summary);
    }, signal);
    deps.events.append({ case: "askResolved", value: { askId: "", approved: answer.approve, text: answer.text } });
    deps.setStatus(TaskStatus.RUNNING);
    return answer;
  }

  private async runTools(
    calls: { id: string; name: string; input: Record<string, unknown> | undefined; parseError?: string }[],
    assistantMessageId: string,
    signal: AbortSignal,
  ): Promise<"continue" | "completed"> {
    const { deps } = this;
    const results: ToolResultsData["results"] = [];
    let feedback: string | undefined;
    let denied = false;
    let modified = false;
    let commandRan = false;
    let completion: StoredUiMessage | undefined;
    const edited = new Set<string>();
    const agentIgnore = await deps.agentIgnore();
    for (const call of calls) {
      const result = (content: string, isError = false) => results.push({ toolUseId: call.id, content, isError });
      if (denied || completion) {
        result("Not run: an earlier tool call in this turn was denied or completed the task.", true);
        continue;
      }
      const tool = this.turnTools.find((t) => t.name === call.name);
      if (!tool) {
        result(`Unknown tool "${call.name}". Available tools: ${this.turnTools.map((t) => t.name).join(", ")}.`, true);
        continue;
      }
      if (!call.input) {
        result(`The arguments of ${call.name} are not a JSON object: ${call.parseError ?? "unparseable"}.`, true);
        continue;
      }
      const input = call.input;
      // A subagent runs in its task's mode, so in plan mode it only explores: it may start.
      if (!tool.readOnly && tool.name !== SUBAGENT_TOOL && (await this.mode()) === "plan") {
        result(`${call.name} was not run: the task is in plan mode, where only read-only tools run. Present the change as part of your plan instead.`, true);
        continue;
      }
      const summary = summarize(call.name, input);
      const isCommand = tool.name === COMMAND_TOOL;
      const decision = decideApproval(tool.approvalCategory(input), await deps.autoApproval(), this.autoApprovedInARow);
      if (decision.kind === "auto_approved") this.autoApprovedInARow++;
      if (decision.kind === "ask") {
        const kind = isCommand ? AskKind.COMMAND_APPROVAL : AskKind.TOOL_APPROVAL;
        const answer = await this.ask(kind, call.name, summary, JSON.stringify(input), [], signal);
        this.autoApprovedInARow = 0;
        if (!answer.approve) {
          denied = true;
          this.addMessage({ role: "user", kind: "denied", text: answer.text, tool: call.name });
          result(`The user denied this operation.${answer.text ? ` Their feedback: ${answer.text}` : ""}`, true);
          continue;
        }
        if (answer.text) feedback = `The user approved with feedback: ${answer.text}`;
      }
      const pre = await this.hooks("PreToolUse", { tool: call.name, input }, signal);
      if (pre.blocked) {
        result(`A PreToolUse hook blocked ${call.name}: ${pre.blocked}`, true);
        continue;
      }
      if (!tool.readOnly) {
        await deps.checkpoints?.baseline();
        modified = true;
      }
      const visible = tool.approvalCategory(input) !== undefined;
      const toolMessage = visible
        ? this.addMessage({ role: "tool", kind: isCommand ? "command" : "tool", tool: call.name, text: summary, detail: JSON.stringify(input), partial: true })
        : undefined;
      if (visible) deps.events.append({ case: "toolStarted", value: { toolCallId: call.id, tool: call.name, summary, detail: JSON.stringify(input) } });
      const logPath = isCommand ? deps.commandLog.pathFor(call.id.replace(/[^A-Za-z0-9._-]/g, "_") || "command") : undefined;
      let outcome: ToolResult;
      try {
        outcome = await runTool(tool, input, {
          workspaceRoot: deps.workspaceRoot,
          signal,
          agentIgnore,
          recordEditedPath: (p) => edited.add(p),
          onOutput: (chunk) => deps.events.append({ case: "toolOutput", value: { toolCallId: call.id, chunk } }),
          commandLogPath: logPath,
          commandTimeoutMs: isCommand ? await deps.commandTimeoutMs() : undefined,
          toolCallId: call.id,
          environment: deps.environment?.(),
        });
      } finally {
        if (logPath) await deps.commandLog.afterCommand(logPath).catch((err: Error) => deps.logger.warn("command log budget", { error: err.message }));
      }
      if (isCommand) commandRan = true;
      await this.hooks("PostToolUse", { tool: call.name, input, ok: !outcome.isError, output: outcome.content.slice(0, 16 * 1024) }, signal);
      if (toolMessage) {
        deps.events.append({ case: "toolFinished", value: { toolCallId: call.id, ok: !outcome.isError, result: outcome.content.slice(0, 64 * 1024) } });
        toolMessage.partial = false;
        toolMessage.detail = JSON.stringify({ input, ok: !outcome.isError, output: outcome.content.slice(0, 64 * 1024) });
        this.finalize(toolMessage);
      }
      const interaction = outcome.interaction;
      if (interaction?.kind === "followup") {
        this.addMessage({ role: "assistant", kind: "followup", text: interaction.question, detail: JSON.stringify({ options: interaction.options }) });
        const answer = await this.ask(AskKind.FOLLOWUP, call.name, interaction.question, JSON.stringify(input), interaction.options, signal);
        this.autoApprovedInARow = 0;
        this.addMessage({ role: "user", kind: "text", text: answer.text });
        result(`<answer>\n${answer.text}\n</answer>`);
        continue;
      }
      if (interaction?.kind === "subagent") {
        if (!deps.runSubagent) {
          result("Subagents are not available here.", true);
          continue;
        }
        result(await deps.runSubagent(interaction.prompt, interaction.name, signal));
        continue;
      }
      if (interaction?.kind === "plan") {
        // The plan as a chat message: its text a checklist, its detail the steps (clients show the latest).
        this.addMessage({ role: "assistant", kind: "plan", text: planText(interaction.steps), detail: JSON.stringify({ steps: interaction.steps, explanation: interaction.explanation ?? "" }) });
        result(outcome.content);
        continue;
      }
      if (interaction?.kind === "completion") {
        completion = this.addMessage({ role: "assistant", kind: "completion", text: interaction.result });
        result("The user was shown the result.");
        continue;
      }
      result(outcome.content, outcome.isError);
    }
    this.journal(JOURNAL_KIND.toolResults, { results, feedback } satisfies ToolResultsData);
    if (modified && deps.checkpoints) {
      // The checkpoint follows the whole turn: it is anchored on the turn's last message.
      const anchor = this.lastMessageId || assistantMessageId;
      const id = await deps.checkpoints.saveTurn({ editedPaths: [...edited], commandRan, messageId: anchor });
      if (id) deps.events.append({ case: "checkpointSaved", value: { checkpointId: id, messageId: anchor, kind: "CHECKPOINT_KIND_TURN" } });
    }
    if (completion) {
      if (deps.checkpoints) {
        const id = await deps.checkpoints.saveCompletion(completion.id);
        if (id) {
          completion.checkpointId = id;
          deps.messages.update(completion);
          deps.events.append({ case: "checkpointSaved", value: { checkpointId: id, messageId: completion.id, kind: "CHECKPOINT_KIND_COMPLETION" } });
        }
      }
      await this.hooks("TaskComplete", { result: completion.text });
      deps.setStatus(TaskStatus.COMPLETED, "the task is complete");
      return "completed";
    }
    if (denied) {
      // A denial ends the run: the model hears about it with the user's next message.
      deps.setStatus(TaskStatus.COMPLETED, "an operation was denied");
      return "completed";
    }
    return "continue";
  }
}
