/**
 * One ACP prompt turn: sends the user's words to the task (creating it on the session's first
 * prompt), follows the task's event stream and turns it into session/update notifications,
 * asks the client's permission for the asks, and ends with the stop reason when the run ends
 * (or waits for an answer only the user can type).
 */
import {
  methods,
  RequestError,
  type AgentContext,
  type SessionUpdate,
  type StopReason,
  type ToolCallContent,
} from "@agentclientprotocol/sdk";
import {
  AskKind,
  MessageRole,
  TaskStatus,
  ToolCallStatus,
  type Ask,
  type FileEdit,
  type TaskEvent,
  type ToolCall,
} from "../gen/dline/v1/task_pb.js";
import type { ApprovalCategory, ToolEnvironment } from "../agent/index.js";
import type { Logger } from "../logging/logger.js";
import { type TaskRuntime, MODEL_STOP_REASONS } from "../runtime/index.js";
import { taskEventsToProto } from "../rpc/task-mapping.js";
import { alwaysName, approvalCategoryOf } from "./always-answers.js";
import { parseDetail, planUpdate, text, toolKind, toolLocations } from "./session-updates.js";
import { acpStatus, diffContent, settledContent } from "./tool-call-updates.js";
import { visible } from "../text/visible-text.js";
import { StreamedText } from "./streamed-text.js";

/** The tail of a tool's output shown in its tool call while it runs. */
const SHOWN_OUTPUT_CHARS = 32 * 1024;
const OUTPUT_FLUSH_MS = 100;

/** Approval kinds answered "always" in a session: applied to the session's task only. */
export interface SessionApprovals {
  readonly allowed: Set<ApprovalCategory>;
  readonly rejected: Set<ApprovalCategory>;
}

/** What the turn needs of its session. */
export interface TurnSession {
  readonly id: string;
  readonly cwd: string;
  profileId: string;
  /** False until the first prompt created the task (the task id is the session id). */
  started: boolean;
  /** The client's file and terminal I/O the task's tools use, if it offers any. */
  environment?: ToolEnvironment;
  /** "Allow always" / "reject always" of this session (the runtime applies them to the task). */
  readonly approvals: SessionApprovals;
  /** Tool call ids sent in this session: each is sent once as a new tool call. */
  readonly toolCallIds: Set<string>;
}

export interface PromptTurnDeps {
  runtime: TaskRuntime;
  client: AgentContext;
  session: TurnSession;
  logger: Logger;
  /** The model's context window, for usage_update (absent: no usage updates). */
  contextWindow?: number;
  /** The task's cost so far (USD), so usage_update carries the session's total. */
  costBefore?: number;
}

type ToolDisplay = {
  acpId: string;
  output: string;
  timer?: NodeJS.Timeout;
  terminalId?: string;
  /** The status and edits last sent, so an unchanged row sends nothing. */
  sent: { status: ToolCallStatus; edits: string };
  /** The tool's own end was sent (its result, diff or terminal): later row updates add nothing. */
  ended: boolean;
  /**
   * The content the running call's last live update showed (its streamed output, the client's
   * terminal), as JSON: a client keeps a tool call's content until an update replaces it, so the
   * final update carries its content only when it differs from this.
   */
  liveContent?: string;
};

export class PromptTurn {
  private readonly stop = new AbortController();
  private cancelRequested = false;
  private sending: Promise<void> = Promise.resolve();
  /** How each streamed message is shown: agent text, agent thought, or not at all. */
  private readonly messageKinds = new Map<string, "agent" | "thought" | "skip">();
  /** The streamed messages' texts so far, by message id (a CR LF split between deltas). */
  private readonly streamedTexts = new Map<string, StreamedText>();
  /** The message whose chunks were sent last, of the answer and of the thoughts. */
  private readonly lastSentMessage: { agent?: string; thought?: string } = {};
  /** Core tool call id -> what the client sees of it. */
  private readonly tools = new Map<string, ToolDisplay>();
  private readonly toolWaiters = new Map<string, (d: ToolDisplay) => void>();
  private lastError: { code: string; message: string } | undefined;
  /** The last _dline/checkpoint_status sent in this turn (JSON), so that a repeat is not sent again. */
  private lastCheckpointStatus = "";
  private cost = 0;

  constructor(private readonly deps: PromptTurnDeps) {}

  private get taskId(): string {
    return this.deps.session.id;
  }

  /** Runs the turn to its stop reason. `signal` aborts when the request is cancelled or the connection closes. */
  async run(userText: string, signal: AbortSignal): Promise<StopReason> {
    const { runtime, session } = this.deps;
    // `$/cancel_request` for the prompt cancels the run like session/cancel; a closed connection
    // only stops following it (the core's own stop leaves the task interrupted, resumable).
    const onAbort = () => {
      const reason = signal.reason as { code?: unknown } | undefined;
      if (reason instanceof RequestError && reason.code === -32800) void this.cancel();
      else this.stop.abort();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      let afterSeq = 0n;
      if (!session.started) {
        await runtime.newTask(session.cwd, userText, session.profileId, { taskId: session.id });
        session.started = true;
      } else {
        afterSeq = runtime.liveView(this.taskId)?.lastSeq ?? runtime.storedLastSeq(this.taskId);
        // The session's folder: the task's own, or the editor's for a task without one here.
        await runtime.sendMessage(this.taskId, userText, { workspaceRoot: session.cwd || undefined });
      }
      if (this.cancelRequested) await this.cancelRun();
      for await (const event of taskEventsToProto(runtime.subscribe(this.taskId, afterSeq, this.stop.signal))) {
        const reason = await this.handle(event);
        if (reason) {
          // The task's last status: answer once the run is over here, so that the next prompt,
          // from this editor or another one over the same roots, finds the task free.
          if (event.event.case === "statusChanged") await runtime.runEnded(this.taskId);
          return reason;
        }
      }
      return "cancelled";
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.stop.abort();
      for (const display of this.tools.values()) clearTimeout(display.timer);
      await this.sending;
    }
  }

  /** session/cancel: stops the task's run; the turn then ends with "cancelled". */
  async cancel(): Promise<void> {
    this.cancelRequested = true;
    if (this.deps.session.started) await this.cancelRun();
  }

  private async cancelRun(): Promise<void> {
    if (!this.deps.runtime.isRunning(this.taskId)) return;
    await this.deps.runtime
      .cancel(this.taskId)
      .catch((err: Error) => this.deps.logger.warn("cancel failed", { taskId: this.taskId, error: err.message }));
  }

  /** The command of core tool call `toolCallId` runs in client terminal `terminalId`: show it in the call. */
  async terminalStarted(toolCallId: string, terminalId: string): Promise<void> {
    const display =
      this.tools.get(toolCallId) ??
      (await new Promise<ToolDisplay>((resolve) => this.toolWaiters.set(toolCallId, resolve)));
    if (display.ended) return; // the final update was sent: nothing comes after it
    display.terminalId = terminalId;
    this.sendLive(display, [{ type: "terminal", terminalId }]);
  }

  /** Notifications go out one after the other, in event order. */
  private send(update: SessionUpdate): void {
    const params = { sessionId: this.deps.session.id, update };
    this.sending = this.sending
      .then(() => this.deps.client.notify(methods.client.session.update, params))
      .catch((err: Error) => this.deps.logger.warn("session/update not sent", { error: err.message }));
  }

  private sendExtension(method: string, params: Record<string, unknown>): void {
    this.sending = this.sending
      .then(() => this.deps.client.notify(method, { sessionId: this.taskId, ...params }))
      .catch((err: Error) => this.deps.logger.warn("extension notification not sent", { method, error: err.message }));
  }

  private async handle(event: TaskEvent): Promise<StopReason | undefined> {
    const e = event.event;
    switch (e.case) {
      case "messageAdded": {
        const m = e.value.message!;
        if (m.toolCall) {
          this.toolRow(m.text, m.toolCall);
          return undefined;
        }
        if (m.kind === "plan") {
          this.messageKinds.set(m.id, "skip");
          const plan = planUpdate(m.detail);
          if (plan) this.send(plan);
          return undefined;
        }
        const shown = m.role !== MessageRole.ASSISTANT ? "skip" : m.kind === "reasoning" ? "thought" : "agent";
        this.messageKinds.set(m.id, shown);
        const body = m.kind === "error" ? `Error: ${m.text}` : m.text;
        if (shown !== "skip" && body) this.sendChunk(shown, m.id, body);
        return undefined;
      }
      case "messageFinalized": {
        const m = e.value.message!;
        if (m.toolCall) this.toolRow(m.text, m.toolCall);
        const shown = this.messageKinds.get(m.id);
        const rest = this.streamedTexts.get(m.id)?.end();
        this.streamedTexts.delete(m.id);
        if (rest && shown && shown !== "skip") this.sendReady(shown, m.id, rest);
        return undefined;
      }
      case "messageDelta":
      case "reasoningDelta": {
        const shown = this.messageKinds.get(e.value.messageId);
        if (shown && shown !== "skip") this.sendChunk(shown, e.value.messageId, e.value.text);
        return undefined;
      }
      case "modelRetry":
        // Text an editor showed cannot be taken back: a thought says the answer starts over.
        this.send({
          sessionUpdate: "agent_thought_chunk",
          content: text(
            `\n[${e.value.message}: ${e.value.reason}${e.value.discardedMessageIds.length > 0 ? " The answer above was cut off and starts over." : ""}]\n`,
          ),
        });
        this.sendExtension("_dline/model_retry", {
          attempt: e.value.attempt,
          maxAttempts: e.value.maxAttempts,
          delayMs: Number(e.value.delayMs),
          reason: e.value.reason,
          discardedMessageIds: e.value.discardedMessageIds,
        });
        return undefined;
      case "modelWaiting":
        this.sendExtension("_dline/model_waiting", {
          waitedMs: Number(e.value.waitedMs),
          timeoutMs: Number(e.value.timeoutMs),
          message: e.value.message,
        });
        return undefined;
      case "ask":
        return this.onAsk(e.value);
      case "toolStarted":
        this.toolStarted(e.value.toolCallId);
        return undefined;
      case "toolOutput":
        this.toolOutput(e.value.toolCallId, e.value.chunk);
        return undefined;
      case "toolFinished":
        this.toolFinished(e.value.toolCallId, e.value.ok, e.value.result, e.value.edits, e.value.status);
        return undefined;
      case "checkpointSaved":
        // Not part of ACP: extension notifications, so editors can offer Compare / Restore there.
        this.sendExtension("_dline/checkpoint_saved", {
          checkpointId: e.value.checkpointId,
          messageId: e.value.messageId,
          // The same names as _dline/checkpoints/list ("turn", "completion", ...).
          kind: e.value.kind.replace(/^CHECKPOINT_KIND_/, "").toLowerCase(),
        });
        return undefined;
      case "filesRestored":
        // A restore (or its Undo) in any window: an editor lists the checkpoints again.
        this.sendExtension("_dline/files_restored", {
          checkpointId: e.value.checkpointId,
          undoCheckpointId: e.value.undoCheckpointId,
          undo: e.value.undo,
        });
        return undefined;
      case "checkpointStatus": {
        const v = e.value;
        const status = {
          state: v.state.replace(/^CHECKPOINT_STATE_/, "").toLowerCase(),
          message: v.message,
          canRetry: v.canRetry,
          canDisable: v.canDisable,
          // While a baseline scan runs: what it is doing, and how far (as _dline/checkpoints/status).
          ...(v.phase ? { progress: { phase: v.phase, done: Number(v.filesDone), total: Number(v.filesTotal) } } : {}),
        };
        // The same status again tells an editor nothing: sent only when something changed.
        const text = JSON.stringify(status);
        if (text !== this.lastCheckpointStatus) this.sendExtension("_dline/checkpoint_status", status);
        this.lastCheckpointStatus = text;
        return undefined;
      }
      case "error":
        this.lastError = { code: e.value.code, message: e.value.message };
        return undefined;
      case "usage": {
        this.cost += e.value.cost;
        if (!this.deps.contextWindow) return undefined;
        const u = e.value;
        this.send({
          sessionUpdate: "usage_update",
          used: Number(u.tokensIn + u.cacheReads + u.cacheWrites + u.tokensOut),
          size: this.deps.contextWindow,
          cost: { amount: (this.deps.costBefore ?? 0) + this.cost, currency: "USD" },
        });
        return undefined;
      }
      case "statusChanged":
        return this.onStatus(e.value.status, e.value.reason);
      default:
        return undefined;
    }
  }

  private sendChunk(shown: "agent" | "thought", messageId: string, chunk: string): void {
    let streamed = this.streamedTexts.get(messageId);
    if (!streamed) this.streamedTexts.set(messageId, (streamed = new StreamedText()));
    const ready = streamed.push(chunk);
    if (ready) this.sendReady(shown, messageId, ready);
  }

  private sendReady(shown: "agent" | "thought", messageId: string, chunk: string): void {
    // A new message of the turn starts a paragraph of its own: a client that does not tell
    // messages apart by their messageId appends the chunks to what it shows ("Done.All done.").
    const last = this.lastSentMessage[shown];
    if (last !== messageId) {
      if (last !== undefined) chunk = `\n\n${chunk}`;
      this.lastSentMessage[shown] = messageId;
    }
    this.send({
      sessionUpdate: shown === "agent" ? "agent_message_chunk" : "agent_thought_chunk",
      content: text(chunk),
      messageId,
    });
  }

  private onStatus(status: TaskStatus, reason: string): StopReason | undefined {
    switch (status) {
      case TaskStatus.COMPLETED:
        if (reason === MODEL_STOP_REASONS.maxTokens) return "max_tokens";
        if (reason === MODEL_STOP_REASONS.refusal) return "refusal";
        return "end_turn";
      case TaskStatus.CANCELLED:
      case TaskStatus.INTERRUPTED:
        return "cancelled";
      case TaskStatus.FAILED:
        if (/model requests in one run/.test(reason)) return "max_turn_requests";
        throw new RequestError(-32603, this.lastError?.message || reason || "The task failed.", {
          dlineCode: this.lastError?.code ?? "internal",
          sessionId: this.taskId,
        });
      default:
        return undefined;
    }
  }

  /** A unique ACP id for a core tool call (sent once per session as a new tool call). */
  private acpIdFor(toolCallId: string): string {
    const used = this.deps.session.toolCallIds;
    let id = toolCallId;
    for (let n = 2; used.has(id); n++) id = `${toolCallId}#${n}`;
    used.add(id);
    return id;
  }

  /**
   * A tool call's row, added or replaced: the first time a new `tool_call` (pending, in
   * progress, or already failed when it was refused), then an update whenever its status or
   * proposed edits change. The tool's own end (result, diff, terminal) comes with toolFinished.
   */
  private toolRow(title: string, call: ToolCall): void {
    const edits = JSON.stringify(call.edits.map((e) => [e.path, e.originalText, e.proposedText]));
    const existing = this.tools.get(call.toolCallId);
    if (!existing) {
      const display: ToolDisplay = {
        acpId: this.acpIdFor(call.toolCallId),
        output: "",
        sent: { status: call.status, edits },
        ended: false,
      };
      this.tools.set(call.toolCallId, display);
      this.toolWaiters.get(call.toolCallId)?.(display);
      this.toolWaiters.delete(call.toolCallId);
      const input = parseDetail(call.input);
      const over = call.status !== ToolCallStatus.PENDING && call.status !== ToolCallStatus.RUNNING;
      display.ended = over;
      this.send({
        sessionUpdate: "tool_call",
        toolCallId: display.acpId,
        title: visible(title || call.tool),
        kind: toolKind(call.tool),
        status: acpStatus(call.status),
        rawInput: input,
        locations: toolLocations(input, this.deps.session.cwd),
        content: over ? settledContent(call) : diffContent(call.edits, this.deps.session.cwd),
      });
      return;
    }
    if (existing.ended || (existing.sent.status === call.status && existing.sent.edits === edits)) return;
    existing.sent = { status: call.status, edits };
    const over = call.status !== ToolCallStatus.PENDING && call.status !== ToolCallStatus.RUNNING;
    if (over) existing.ended = true;
    this.send({
      sessionUpdate: "tool_call_update",
      toolCallId: existing.acpId,
      status: acpStatus(call.status),
      ...(over
        ? { content: settledContent(call) }
        : call.status === ToolCallStatus.PENDING
          ? { content: diffContent(call.edits, this.deps.session.cwd) }
          : {}),
    });
  }

  private toolStarted(callId: string): void {
    const display = this.tools.get(callId);
    if (!display || display.sent.status === ToolCallStatus.RUNNING) return;
    display.sent = { ...display.sent, status: ToolCallStatus.RUNNING };
    this.send({ sessionUpdate: "tool_call_update", toolCallId: display.acpId, status: "in_progress" });
  }

  private toolOutput(callId: string, chunk: string): void {
    const display = this.tools.get(callId);
    if (!display || display.ended || display.terminalId) return; // the editor's terminal shows it already
    display.output = (display.output + chunk).slice(-SHOWN_OUTPUT_CHARS);
    display.timer ??= setTimeout(() => {
      display.timer = undefined;
      this.sendLive(display, [{ type: "content", content: text(display.output) }]);
    }, OUTPUT_FLUSH_MS);
  }

  /** What the running call shows now (its output so far, its terminal): remembered for its final update. */
  private sendLive(display: ToolDisplay, content: ToolCallContent[]): void {
    display.liveContent = JSON.stringify(content);
    this.send({ sessionUpdate: "tool_call_update", toolCallId: display.acpId, content });
  }

  private toolFinished(callId: string, ok: boolean, result: string, edits: FileEdit[], status: ToolCallStatus): void {
    const display = this.tools.get(callId);
    clearTimeout(display?.timer);
    // Not shown, or its row said already how it ended (refused, denied, interrupted).
    if (!display || display.ended) return;
    display.timer = undefined;
    display.ended = true;
    const diffs = ok ? diffContent(edits, this.deps.session.cwd) : [];
    const content: ToolCallContent[] = display.terminalId
      ? [{ type: "terminal", terminalId: display.terminalId }]
      : diffs.length > 0
        ? diffs
        : [{ type: "content", content: text(result) }];
    // The final status always; the content only when the live updates did not show it already
    // (the client's terminal: its output is the client's, and the terminal was released meanwhile).
    const shown = display.liveContent === JSON.stringify(content);
    this.send({
      sessionUpdate: "tool_call_update",
      toolCallId: display.acpId,
      status: ok ? "completed" : acpStatus(status || ToolCallStatus.FAILED),
      ...(shown ? {} : { content }),
      rawOutput: { ok, result },
    });
  }

  private async onAsk(ask: Ask): Promise<StopReason | undefined> {
    switch (ask.kind) {
      case AskKind.TOOL_APPROVAL:
      case AskKind.COMMAND_APPROVAL:
        await this.approval(ask);
        return undefined;
      case AskKind.FOLLOWUP:
        return this.followup(ask);
      default:
        // Nothing else waits on the client within a turn: the user's next prompt answers it.
        return "end_turn";
    }
  }

  private async requestPermission(params: NonNullable<Parameters<AgentContext["request"]>[1]>) {
    try {
      return await this.deps.client.request(methods.client.session.requestPermission, params as never, {
        cancellationSignal: this.stop.signal,
        stopWaitingOnCancel: true,
      });
    } catch (err) {
      this.deps.logger.warn("session/request_permission failed", { error: (err as Error).message });
      return { outcome: { outcome: "cancelled" as const } };
    }
  }

  private respond(askId: string, approve: boolean, answer: string, reason?: string): void {
    try {
      this.deps.runtime.respond(this.taskId, askId, approve, answer, reason);
    } catch (err) {
      // The question went away meanwhile (cancelled): nothing to answer.
      this.deps.logger.info("ask no longer pending", { taskId: this.taskId, error: (err as Error).message });
    }
  }

  /**
   * Tool and command approvals, as the core's approval rules ask: allow or reject once, or
   * always, for the call's approval kind in this session (the runtime applies the session's
   * answers to its task; other sessions and editors keep asking).
   */
  private async approval(ask: Ask): Promise<void> {
    const display = this.tools.get(ask.toolCallId);
    const acpId = display?.acpId ?? this.acpIdFor(`ask-${ask.askId}`);
    const input = parseDetail(ask.detail);
    const category = approvalCategoryOf(ask.tool, ask.detail);
    const { approvals } = this.deps.session;
    if (category && approvals.rejected.has(category)) {
      // The row turns "failed" with the reason when the core records the denial.
      // Their rule, not words they wrote: the model reads it, the chat does not show it as theirs.
      this.respond(ask.askId, false, "", `They chose to always reject ${alwaysName(category)} in this session.`);
      return;
    }
    const toolCall = {
      toolCallId: acpId,
      title: visible(ask.summary),
      kind: toolKind(ask.tool),
      status: "pending" as const,
      rawInput: input,
      content: diffContent(ask.edits, this.deps.session.cwd),
      locations: toolLocations(input, this.deps.session.cwd),
    };
    if (!display) this.send({ sessionUpdate: "tool_call", ...toolCall });
    await this.sending;
    const command = ask.kind === AskKind.COMMAND_APPROVAL;
    const res = await this.requestPermission({
      sessionId: this.taskId,
      toolCall,
      options: [
        { optionId: "allow", name: command ? "Run" : "Allow", kind: "allow_once" },
        ...(category
          ? [{ optionId: "allow_always", name: `Always allow ${alwaysName(category)}`, kind: "allow_always" as const }]
          : []),
        { optionId: "reject", name: command ? "Don't run" : "Reject", kind: "reject_once" },
        ...(category
          ? [
              {
                optionId: "reject_always",
                name: `Always reject ${alwaysName(category)}`,
                kind: "reject_always" as const,
              },
            ]
          : []),
      ],
    });
    const chosen = res.outcome.outcome === "selected" ? res.outcome.optionId : undefined;
    if (category && chosen === "allow_always") {
      approvals.rejected.delete(category);
      approvals.allowed.add(category);
    } else if (category && chosen === "reject_always") {
      approvals.allowed.delete(category);
      approvals.rejected.add(category);
    }
    if (chosen === "allow" || chosen === "allow_always") this.respond(ask.askId, true, "");
    else if (res.outcome.outcome === "selected") this.respond(ask.askId, false, "");
    else {
      // "cancelled": the client cancelled the turn (session/cancel), or could not ask.
      await this.cancelRun();
    }
  }

  /**
   * A follow-up question: its options are offered as permission choices; a question without
   * options (or "answer in the chat") ends the turn, and the user's next prompt is the answer.
   */
  private async followup(ask: Ask): Promise<StopReason | undefined> {
    if (ask.options.length === 0) return "end_turn";
    const acpId = `ask-${ask.askId}`;
    const toolCall = {
      toolCallId: acpId,
      title: visible(ask.summary),
      kind: "other" as const,
      status: "pending" as const,
      rawInput: { question: ask.summary, options: ask.options },
    };
    this.send({ sessionUpdate: "tool_call", ...toolCall });
    await this.sending;
    const res = await this.requestPermission({
      sessionId: this.taskId,
      toolCall,
      options: [
        ...ask.options.map((name, i) => ({
          optionId: `option-${i}`,
          name: visible(name),
          kind: "allow_once" as const,
        })),
        { optionId: "chat", name: "Answer in the chat", kind: "reject_once" as const },
      ],
    });
    const chosen = res.outcome.outcome === "selected" ? /^option-(\d+)$/.exec(res.outcome.optionId) : null;
    const answer = chosen ? ask.options[Number(chosen[1])] : undefined;
    if (answer !== undefined) {
      this.send({
        sessionUpdate: "tool_call_update",
        toolCallId: acpId,
        status: "completed",
        content: [{ type: "content", content: text(answer) }],
      });
      this.respond(ask.askId, true, answer);
      return undefined;
    }
    this.send({ sessionUpdate: "tool_call_update", toolCallId: acpId, status: "completed" });
    if (res.outcome.outcome === "cancelled" && this.cancelRequested) {
      await this.cancelRun();
      return undefined;
    }
    return "end_turn";
  }
}
