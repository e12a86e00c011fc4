import {
  decideApproval,
  type ApprovalDecision,
  isCurrent,
  StaleEditError,
  type PreparedEdit,
  planText,
  editsProtectedPath,
  reachesSecretPlaces,
  resolveAllowedPath,
  type ToolGuard,
  prepareToolEdit,
  runTool,
  beingEditedMessage,
  fileBeingEdited,
  ToolError,
  type ApprovalCategory,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
  type IgnoreMatcher,
} from "../agent/index.js";
import type { StoredUiMessage } from "../tasks/index.js";
import type { HookEvent, HookOutcome } from "./capabilities-port.js";
import type { ToolResultsData } from "./conversation.js";
import { boundedOutput, editRecords, type CommandLineRecord, type FileEditRecord } from "./tool-call-record.js";
import { ToolRow } from "./tool-row.js";
import type { ModelToolCall } from "./assistant-stream.js";
import { STOPPED_WHILE_ASKING, type StoppedTurn, type ToolCallProgress } from "./stopped-turn.js";
import { isSidecarStopping, stoppedCallReason } from "./run-stop.js";
import type { TaskMode, TurnLoopDeps } from "./turn-deps.js";
import type { AskKindName, RuntimeAsk } from "./runtime-events.js";
import type { ToolCallStatusName } from "./tool-call-record.js";
import { changedWhileAsked } from "./asked-again.js";

const COMMAND_TOOL = "execute_command";
const SUBAGENT_TOOL = "new_subagent";
/** An edit whose file keeps changing under it is proposed at most this many times. */
const MAX_PROPOSALS = 5;

/** What running a turn's tool calls needs from the turn loop that runs them. */
export interface ToolTurnHost {
  readonly deps: TurnLoopDeps;
  /** This turn's tools: the built-in ones and those capabilities add. */
  readonly tools: readonly ToolDefinition[];
  /** The last UI message added: the anchor of the checkpoint saved at the end of the turn. */
  readonly lastMessageId: string;
  /** That message (its row records the turn's checkpoint). */
  readonly lastMessage: StoredUiMessage | undefined;
  /** Consecutive auto-approved calls, bounded by autoApprovalSettings.maxRequests. */
  autoApprovedInARow: number;
  mode(): Promise<TaskMode>;
  /** `beforeHooks`: awaited first when hooks are configured for the event. */
  hooks(
    event: HookEvent,
    payload: Record<string, unknown>,
    signal?: AbortSignal,
    beforeHooks?: () => Promise<void>,
  ): Promise<HookOutcome>;
  addMessage(init: Partial<StoredUiMessage>): StoredUiMessage;
  finalize(message: StoredUiMessage): void;
  journal(kind: string, data: object): void;
  /** Records a step of one call (stopped-turn.ts): what lets Resume go on with a turn its run stopped in. */
  journalProgress(progress: ToolCallProgress): void;
  /** Records the turn's results, which make its calls' progress records obsolete. */
  journalResults(data: ToolResultsData): void;
  /** The most characters one tool result should take in the context window. */
  readonly maxResultChars?: number;
  /** A tool call id unique in the task, from the model's (models may repeat theirs). */
  uniqueToolCallId(modelId: string): string;
  /** A turn's checkpoint being saved without the loop waiting for it (settled before the run ends). */
  deferSave(saving: Promise<void>): void;
  /** Resolves when the deferred saves have ended. */
  settleSaves(): Promise<void>;
  /** The turns' saves and the task's baseline: what a status that ends the run waits for. */
  settleForEnd(): Promise<void>;
}

/** One line a person reads about a tool call. */
function summarize(tool: string, input: Record<string, unknown> | undefined): string {
  const target = input?.command ?? input?.path ?? input?.question ?? "";
  const text = oneLine(typeof target === "string" ? target : JSON.stringify(target));
  return `${tool}${text ? ` ${text.length > 200 ? `${text.slice(0, 200)}…` : text}` : ""}`;
}

/**
 * A target on one line with its line breaks and other control characters written out: a path
 * named "new\nline.js" or a command's second line is not hidden from the one-line summary.
 */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) =>
    c === "\n"
      ? "\\n"
      : c === "\r"
        ? "\\r"
        : c === "\t"
          ? "\\t"
          : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}

interface AskInit {
  kind: AskKindName;
  tool: string;
  summary: string;
  detail: string;
  options?: string[];
  toolCallId?: string;
  edits?: FileEditRecord[];
  command?: CommandLineRecord;
  askedAgainBecause?: string;
}

/**
 * Asks the editor (approval, follow-up question) and waits; the status is WAITING meanwhile.
 * An ask nobody answered (the task was cancelled or its sidecar stopped) is resolved as dropped.
 */
export async function ask(deps: TurnLoopDeps, init: AskInit, signal: AbortSignal) {
  let askId = "";
  // The rows the question is about survive a crash while it waits.
  deps.messages.flush();
  try {
    const answer = await deps.asks.ask((id) => {
      askId = id;
      const value: RuntimeAsk = {
        askId,
        kind: init.kind,
        tool: init.tool,
        summary: init.summary,
        detail: init.detail,
        options: init.options ?? [],
        toolCallId: init.toolCallId ?? "",
        edits: init.edits ?? [],
        command: init.command,
        ...(init.askedAgainBecause ? { askedAgainBecause: init.askedAgainBecause } : {}),
      };
      deps.events.append({ case: "ask", value });
      deps.setStatus("waiting", init.summary);
    }, signal);
    deps.events.append({ case: "askResolved", value: { askId, approved: answer.approve, text: answer.text } });
    deps.setStatus("running");
    return answer;
  } catch (err) {
    if (askId) deps.events.append({ case: "askResolved", value: { askId, approved: false, text: "", dropped: true } });
    throw err;
  }
}

type Proposal =
  | { kind: "run"; prepared: PreparedEdit | undefined; feedback?: string }
  | { kind: "denied"; feedback: string; reason?: string }
  | { kind: "refused"; message: string };

/**
 * Runs the tool calls of one assistant turn in order: refuses unknown tools, bad arguments and
 * (in plan mode) tools that modify; computes an edit's exact change and a command's exact
 * command line before asking for approval (unless auto-approved); runs the PreToolUse and
 * PostToolUse hooks; records the results in the journal; saves the turn's checkpoint when a
 * tool may have modified the workspace, and the completion's when the task completed. Every
 * call the model made shows as a chat row with its status: refused and failed calls, denied
 * ones (the model hears the denial and the person's feedback, and answers), interrupted ones.
 */
export async function runToolCalls(
  host: ToolTurnHost,
  calls: ModelToolCall[],
  assistantMessageId: string,
  signal: AbortSignal,
  stopped?: Pick<StoppedTurn, "results" | "feedback">,
): Promise<"continue" | "completed"> {
  return new ToolTurn(host, signal, stopped).run(calls, assistantMessageId);
}

class ToolTurn {
  private readonly results: ToolResultsData["results"] = [];
  private feedback: string | undefined;
  private denied = false;
  /** A tool that may modify the workspace started. */
  private modified = false;
  /**
   * The turn holds a call of a tool outside the read-only list, run or not (refused, denied, an
   * edit whose SEARCH matched nothing): its checkpoint is saved all the same, as the spec says.
   */
  private callsModifyingTool = false;
  private commandRan = false;
  private completion: StoredUiMessage | undefined;
  private readonly edited = new Set<string>();
  private agentIgnore!: IgnoreMatcher;
  private guard!: ToolGuard;

  /** `stopped`: the results (and feedback) of the calls of this turn that ended before its run stopped. */
  constructor(
    private readonly host: ToolTurnHost,
    private readonly signal: AbortSignal,
    stopped?: Pick<StoppedTurn, "results" | "feedback">,
  ) {
    if (stopped) {
      this.results.push(...stopped.results);
      this.feedback = stopped.feedback;
    }
  }

  private get deps(): TurnLoopDeps {
    return this.host.deps;
  }

  private result(call: ModelToolCall, content: string, isError = false): void {
    this.results.push({ toolUseId: call.id, content, isError });
    this.host.journalProgress({ toolUseId: call.id, step: "ended", content, isError });
  }

  async run(calls: ModelToolCall[], assistantMessageId: string): Promise<"continue" | "completed"> {
    const { deps } = this;
    this.agentIgnore = await deps.agentIgnore();
    this.guard = await deps.toolGuard();
    for (const call of calls) {
      if (this.host.tools.find((t) => t.name === call.name)?.readOnly === false) this.callsModifyingTool = true;
      if (this.denied || this.completion) {
        this.result(call, "Not run: an earlier tool call in this turn was denied or completed the task.", true);
        continue;
      }
      await this.runCall(call);
    }
    this.host.journalResults({ results: this.results, feedback: this.feedback });
    if (this.modified || this.callsModifyingTool) this.saveTurnCheckpoint(assistantMessageId);
    if (this.completion) {
      await this.complete(this.completion);
      return "completed";
    }
    // A denial continues the run: the model reads it (and the person's feedback) and answers.
    return "continue";
  }

  /**
   * The turn's checkpoint, after a call of a tool that may modify the workspace (when none of
   * them ran, the newest snapshot is reused if nothing else may have changed). The loop does not
   * wait for it: the next model request runs meanwhile (a task's first turn may end before its
   * baseline's scan does). Nothing changes the workspace before it is saved: every tool that
   * may, and every hook, waits for the task's saves (CheckpointPort); the run settles it before
   * its status says it ended.
   */
  private saveTurnCheckpoint(assistantMessageId: string): void {
    const { deps } = this;
    const checkpoints = deps.checkpoints;
    if (!checkpoints) return;
    // The checkpoint follows the whole turn: it is anchored on the turn's last message.
    const last = this.host.lastMessage;
    const anchor = this.host.lastMessageId || assistantMessageId;
    const saving = checkpoints
      .saveTurn({
        editedPaths: [...this.edited],
        commandRan: this.commandRan,
        messageId: anchor,
        nothingRan: !this.modified,
      })
      .then((id) => {
        // Recorded on the message too, so a reopened task shows it where the live one did.
        if (id && last?.id === anchor) attachCheckpoint(deps, last, id, "CHECKPOINT_KIND_TURN");
        else if (id)
          deps.events.append({
            case: "checkpointSaved",
            value: { checkpointId: id, messageId: anchor, kind: "CHECKPOINT_KIND_TURN" },
          });
      })
      .catch((err: Error) => deps.logger.warn("recording a turn's checkpoint failed", { error: err.message }));
    this.host.deferSave(saving);
  }

  /** The model completed the task: the completion's checkpoint, the TaskComplete hook, the status. */
  private async complete(completion: StoredUiMessage): Promise<void> {
    const { deps } = this;
    if (deps.checkpoints)
      attachCheckpoint(
        deps,
        completion,
        await deps.checkpoints.saveCompletion(completion.id),
        "CHECKPOINT_KIND_COMPLETION",
      );
    await this.host.hooks("TaskComplete", { result: completion.text });
    await this.host.settleForEnd();
    deps.setStatus("completed", "the task is complete");
  }

  /**
   * A refused call: a failed row, and the reason as the model's tool result. The row's reason is
   * what a person reads (in a reopened task too): the message's first sentence, as the live event's.
   */
  private refuse(call: ModelToolCall, toolCallId: string, message: string): void {
    new ToolRow(
      this.host,
      { toolCallId, tool: call.name, status: "failed", input: call.input, output: message, reason: firstLine(message) },
      summarize(call.name, call.input),
    );
    this.ended(toolCallId, "failed", message);
    this.result(call, message, true);
  }

  /** Every tool call shown ends with tool_finished, also one that never ran (refused, denied, interrupted). */
  private ended(toolCallId: string, status: ToolCallStatusName, message: string): void {
    this.deps.events.append({
      case: "toolFinished",
      value: { toolCallId, ok: false, result: message, status, reason: firstLine(message) },
    });
  }

  /** A call that did not run: its row (shown already, or new) fails; the model reads the whole message. */
  private fail(call: ModelToolCall, toolCallId: string, row: ToolRow | undefined, message: string): void {
    if (!row) return this.refuse(call, toolCallId, message);
    row.update({ status: "failed", output: message, reason: firstLine(message) });
    this.ended(toolCallId, "failed", message);
    this.result(call, message, true);
  }

  /**
   * Whether a call may be considered at all: a known tool, arguments that are a JSON object and
   * that the tool accepts, and (in plan mode) a tool that changes nothing. Answers the tool and
   * its approval category, or the reason the call is refused.
   */
  private async admit(
    call: ModelToolCall,
  ): Promise<
    | { tool: ToolDefinition; input: Record<string, unknown>; category: ApprovalCategory | undefined }
    | { refused: string }
  > {
    const { host } = this;
    const tool = host.tools.find((t) => t.name === call.name);
    if (!tool)
      return { refused: `Unknown tool "${call.name}". Available tools: ${host.tools.map((t) => t.name).join(", ")}.` };
    if (!call.input)
      return { refused: `The arguments of ${call.name} are not a JSON object: ${call.parseError ?? "unparseable"}.` };
    const input = call.input;
    let category: ApprovalCategory | undefined;
    try {
      category = tool.approvalCategory(input);
    } catch (err) {
      if (err instanceof ToolError) return { refused: err.message };
      throw err;
    }
    // A read the tool would refuse (outside the workspace, through a link leading out, Dline's
    // storage, .agentignore) is refused before anyone is asked to approve it.
    if (category === "readFiles" && typeof input.path === "string" && input.path) {
      try {
        await resolveAllowedPath(
          { workspaceRoot: this.deps.workspaceRoot, guard: this.guard, agentIgnore: this.agentIgnore },
          input.path,
          tool.name,
          tool.name !== "read_file",
        );
      } catch (err) {
        // Any other failure (a 300-character name) is the tool's to report when it runs.
        if (err instanceof ToolError) return { refused: err.message };
      }
    }
    // A subagent runs in its task's mode, so in plan mode it only explores: it may start.
    if (!tool.readOnly && tool.name !== SUBAGENT_TOOL && (await host.mode()) === "plan") {
      return {
        refused: `${call.name} was not run: the task is in plan mode, where only read-only tools run. Present the change as part of your plan instead.`,
      };
    }
    return { tool, input, category };
  }

  private async runCall(call: ModelToolCall): Promise<void> {
    const { host, deps } = this;
    const toolCallId = host.uniqueToolCallId(call.id);
    const admitted = await this.admit(call);
    if ("refused" in admitted) return this.refuse(call, toolCallId, admitted.refused);
    const { tool, input } = admitted;
    // A plain command that reads where secrets are (/proc, the stored keys) is never "safe".
    const category =
      admitted.category === "executeSafeCommands" &&
      typeof input.command === "string" &&
      reachesSecretPlaces(input.command, deps.workspaceRoot, this.guard.protectedPaths, process.env)
        ? "executeAllCommands"
        : admitted.category;
    const summary = summarize(call.name, input);
    const isCommand = tool.name === COMMAND_TOOL;
    const command =
      isCommand && typeof input.command === "string"
        ? { command: input.command, workingDirectory: deps.workspaceRoot }
        : undefined;
    // Edits of what runs unasked later (.git, .agents/hooks, .agents/mcp) are always asked, whatever the settings allow.
    const alwaysAsk = await editsProtectedPath(tool, input, deps.workspaceRoot);
    const decision = decideApproval(category, await deps.autoApproval(), host.autoApprovedInARow, { alwaysAsk });
    if (decision.kind === "auto_approved") host.autoApprovedInARow++;
    // Questions, plans, completions and subagents have rows of their own: no tool row.
    const visible = category !== undefined;
    const row: { current?: ToolRow } = {};
    try {
      const proposal = await this.propose(tool, call, { toolCallId, summary, visible, command, decision }, row);
      if (proposal.kind === "refused") return this.fail(call, toolCallId, row.current, proposal.message);
      if (proposal.kind === "denied") {
        this.denied = true;
        const words =
          (proposal.feedback ? ` Their feedback: ${proposal.feedback}` : "") +
          (proposal.reason ? ` ${proposal.reason}` : "");
        if (row.current) {
          row.current.update({ status: "denied", feedback: proposal.feedback, reason: proposal.reason ?? "" });
          this.ended(toolCallId, "denied", `Denied by the user.${words}`);
        }
        if (proposal.feedback)
          host.addMessage({ role: "user", kind: "denied", text: proposal.feedback, tool: call.name });
        this.result(
          call,
          `The user denied this operation.${words} Answer them: change your approach or ask what they want.`,
          true,
        );
        return;
      }
      host.journalProgress({ toolUseId: call.id, step: "started", feedback: proposal.feedback });
      await this.execute(tool, call, proposal.prepared, row.current, { toolCallId, summary, isCommand, command });
    } catch (err) {
      if (this.signal.aborted && row.current && !row.current.over) {
        const waited = row.current.record.status === "pending";
        const reason =
          isSidecarStopping(this.signal.reason) && waited
            ? STOPPED_WHILE_ASKING
            : stoppedCallReason(this.signal.reason, waited);
        row.current.update({ status: "interrupted", reason });
        this.ended(toolCallId, "interrupted", reason);
      }
      throw err;
    }
  }

  private toolContext(extra: Partial<ToolContext> = {}): ToolContext {
    return {
      workspaceRoot: this.deps.workspaceRoot,
      signal: this.signal,
      agentIgnore: this.agentIgnore,
      guard: this.guard,
      recordEditedPath: (p) => this.edited.add(p),
      beforeEdit: async (p) => {
        await this.deps.checkpoints?.beforeEdit([p]);
      },
      environment: this.deps.environment?.(),
      unsavedInEditor: this.deps.unsavedInEditor,
      ...extra,
    };
  }

  /**
   * Proposes the call: computes an edit's exact change, shows the row, asks for approval unless
   * auto-approved, and makes sure an edit's files did not change meanwhile (else computes the
   * change again and asks again), so what runs is exactly what was approved.
   */
  private async propose(
    tool: ToolDefinition,
    call: ModelToolCall,
    o: {
      toolCallId: string;
      summary: string;
      visible: boolean;
      command: CommandLineRecord | undefined;
      decision: ApprovalDecision;
    },
    row: { current?: ToolRow },
  ): Promise<Proposal> {
    const input = call.input!;
    let approvedWith: string | undefined;
    let askedAgainBecause: string | undefined;
    for (let attempt = 1; ; attempt++) {
      let prepared: PreparedEdit | undefined;
      if (tool.prepareEdit) {
        const outcome = await prepareToolEdit(tool, input, this.toolContext());
        if (outcome.failure !== undefined) return { kind: "refused", message: outcome.failure };
        prepared = outcome.edit;
        // A file the person is editing (unsaved in their editor) is not proposed at all.
        const busy = this.beingEdited(prepared);
        if (busy) return { kind: "refused", message: busy };
      }
      const edits = editRecords(prepared);
      const status = o.decision.kind === "ask" ? "pending" : "running";
      if (o.visible) {
        if (!row.current)
          row.current = new ToolRow(
            this.host,
            { toolCallId: o.toolCallId, tool: call.name, status, input, edits, command: o.command },
            o.summary,
          );
        else row.current.update({ status, edits });
      }
      if (o.decision.kind === "ask") {
        const kind = o.command ? "command_approval" : "tool_approval";
        this.host.journalProgress({ toolUseId: call.id, step: "asked" });
        const answer = await ask(
          this.deps,
          {
            kind,
            tool: call.name,
            summary: o.summary,
            detail: JSON.stringify(input),
            toolCallId: o.toolCallId,
            edits,
            command: o.command,
            askedAgainBecause,
          },
          this.signal,
        );
        this.host.autoApprovedInARow = 0;
        if (!answer.approve) return { kind: "denied", feedback: answer.text, reason: answer.reason };
        if (answer.text) {
          this.feedback = `The user approved with feedback: ${answer.text}`;
          approvedWith = this.feedback;
          row.current?.update({ feedback: answer.text });
        }
        // They may have started editing the file while the question waited.
        const busy = prepared && this.beingEdited(prepared);
        if (busy) return { kind: "refused", message: busy };
      }
      // Auto-approved: nothing waited since the preparation (the commit checks once more).
      if (!prepared || o.decision.kind !== "ask" || (await isCurrent(prepared, this.toolContext())))
        return { kind: "run", prepared, feedback: approvedWith };
      if (attempt >= MAX_PROPOSALS) {
        return {
          kind: "refused",
          message: `${call.name}: the file kept changing while the edit was proposed; nothing was written. Read it again before editing.`,
        };
      }
      this.deps.logger.info("an edit's file changed before it was written: proposing it again", {
        tool: call.name,
        attempt,
      });
      askedAgainBecause = changedWhileAsked(edits.map((e) => e.path));
    }
  }

  /** Why `edit` must not be written now: a file of it is unsaved in the editor; undefined when none is. */
  private beingEdited(edit: PreparedEdit): string | undefined {
    const busy = fileBeingEdited(edit, this.deps.unsavedInEditor?.() ?? [], this.deps.workspaceRoot);
    return busy === undefined ? undefined : beingEditedMessage(busy);
  }

  private async execute(
    tool: ToolDefinition,
    call: ModelToolCall,
    prepared: PreparedEdit | undefined,
    row: ToolRow | undefined,
    o: { toolCallId: string; summary: string; isCommand: boolean; command: CommandLineRecord | undefined },
  ): Promise<void> {
    const { host, deps } = this;
    const input = call.input!;
    // A hook is a command: what it changes is the task's, so the baseline is taken before it runs.
    const baselineFirst = async () => {
      await deps.checkpoints?.beforeTool();
    };
    const pre = await host.hooks("PreToolUse", { tool: call.name, input }, this.signal, baselineFirst);
    if (pre.blocked)
      return this.fail(call, o.toolCallId, row, `A PreToolUse hook blocked ${call.name}: ${pre.blocked}`);
    if (!tool.readOnly) {
      // An edit announces each file before writing it (commitEdit calls beforeEdit, which waits
      // for the baseline and keeps what the file was): no wait here.
      if (!(tool.prepareEdit && prepared)) await baselineFirst();
      this.modified = true;
    }
    // A command that runs a while gets the workspace watched meanwhile: the save after it then
    // stages only what changed.
    if (o.isCommand) deps.checkpoints?.commandStarting();
    if (row) {
      if (row.record.status !== "running") row.update({ status: "running" });
      // The row is on disk before the call runs: a sidecar killed meanwhile reopens it interrupted, not gone.
      deps.messages.flush();
      deps.events.append({
        case: "toolStarted",
        value: {
          toolCallId: o.toolCallId,
          tool: call.name,
          summary: o.summary,
          detail: JSON.stringify(input),
          command: o.command,
          messageId: row.message.id,
        },
      });
    }
    const logPath = o.isCommand
      ? deps.commandLog.pathFor(o.toolCallId.replace(/[^A-Za-z0-9._-]/g, "_") || "command")
      : undefined;
    let outcome: ToolResult;
    try {
      outcome = await runTool(
        tool,
        input,
        this.toolContext({
          onOutput: (chunk) => deps.events.append({ case: "toolOutput", value: { toolCallId: o.toolCallId, chunk } }),
          commandLogPath: logPath,
          commandLogMaxBytes: logPath ? await deps.commandLog.maxBytes() : undefined,
          commandTimeoutMs: o.isCommand ? await deps.commandTimeoutMs() : undefined,
          toolCallId: o.toolCallId,
          preparedEdit: prepared,
          maxResultChars: host.maxResultChars,
        }),
      );
    } catch (err) {
      // The file changed at the last moment (after the check above): nothing was written.
      if (!(err instanceof StaleEditError) || this.signal.aborted) throw err;
      outcome = { content: `${err.message} Read the file again before editing it.`, isError: true };
    } finally {
      if (logPath)
        await deps.commandLog
          .afterCommand(logPath)
          .catch((err: Error) => deps.logger.warn("command log budget", { error: err.message }));
    }
    if (o.isCommand) this.commandRan = true;
    await host.hooks(
      "PostToolUse",
      { tool: call.name, input, ok: !outcome.isError, output: outcome.content.slice(0, 16 * 1024) },
      this.signal,
      baselineFirst,
    );
    if (row) {
      const ok = !outcome.isError;
      // A command stopped by a cancel reports it in its result: the call was interrupted.
      const interrupted = !ok && outcome.command?.cancelled === true && this.signal.aborted;
      const shown = boundedOutput(outcome.content);
      const applied = ok ? editRecords(prepared) : [];
      const status = ok ? "done" : interrupted ? "interrupted" : "failed";
      const reason = ok
        ? ""
        : interrupted
          ? stoppedCallReason(this.signal.reason)
          : // A command's result starts with its output and ends with how it ended ("Exit code: 3").
            outcome.command
            ? firstLine(outcome.content, "end")
            : firstLine(outcome.content);
      deps.events.append({
        case: "toolFinished",
        value: { toolCallId: o.toolCallId, ok, result: shown.text, edits: applied, status, reason },
      });
      row.update({
        status,
        output: shown.text,
        outputTruncated: shown.truncated,
        edits: ok ? applied : row.record.edits,
        reason,
      });
    }
    await this.interaction(call, outcome);
  }

  /** What a question, a subagent, a plan or a completion does after its tool ran. */
  private async interaction(call: ModelToolCall, outcome: ToolResult): Promise<void> {
    const { host, deps } = this;
    const interaction = outcome.interaction;
    if (interaction?.kind === "followup") {
      host.addMessage({
        role: "assistant",
        kind: "followup",
        text: interaction.question,
        detail: JSON.stringify({ options: interaction.options }),
      });
      const answer = await ask(
        deps,
        {
          kind: "followup",
          tool: call.name,
          summary: interaction.question,
          detail: JSON.stringify(call.input),
          options: interaction.options,
        },
        this.signal,
      );
      host.autoApprovedInARow = 0;
      host.addMessage({ role: "user", kind: "text", text: answer.text });
      return this.result(call, `<answer>\n${answer.text}\n</answer>`);
    }
    if (interaction?.kind === "subagent") {
      if (!deps.runSubagent) return this.result(call, "Subagents are not available here.", true);
      return this.result(call, await deps.runSubagent(interaction.prompt, interaction.name, this.signal));
    }
    if (interaction?.kind === "plan") {
      // The plan as a chat message: its text a checklist, its detail the steps (clients show the latest).
      host.addMessage({
        role: "assistant",
        kind: "plan",
        text: planText(interaction.steps),
        detail: JSON.stringify({ steps: interaction.steps, explanation: interaction.explanation ?? "" }),
      });
      return this.result(call, outcome.content);
    }
    if (interaction?.kind === "completion") {
      // The earlier turns' checkpoints are told first: a client lists them before the result, not
      // under it as if the completion had saved them.
      await host.settleSaves();
      this.completion = host.addMessage({ role: "assistant", kind: "completion", text: interaction.result });
      return this.result(call, "The user was shown the result.");
    }
    this.result(call, outcome.content, outcome.isError);
  }
}

/** A reason longer than this (a command's output without line breaks) is cut, and says so. */
const MAX_REASON_CHARS = 400;

/**
 * The line a person reads of why a call failed: the first (or last) line with something on it,
 * and of a tool's error only its first sentence, which says what happened; the sentences after
 * it tell the model what to do instead ("Do not try to write it again now: tell the user…").
 * Never cut mid-word without saying so: a long line ends with "…".
 */
function firstLine(text: string, from: "start" | "end" = "start"): string {
  const lines = text.split("\n");
  let line = (from === "start" ? lines.find((l) => l.trim()) : lines.findLast((l) => l.trim()))?.trim() ?? "";
  if (from === "start") line = firstSentence(line);
  return line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS)}…` : line;
}

/** Up to the first full stop (or ! or ?) followed by a space and a word or a quote ("read_file …" too). */
function firstSentence(line: string): string {
  const end = /[.!?]["')\]]?(?=\s+["'(]?[A-Za-z_])/.exec(line);
  return end ? line.slice(0, end.index + end[0].length) : line;
}

/** Records a checkpoint saved at `message` on the message and tells subscribers; nothing when none was saved. */
export function attachCheckpoint(
  deps: Pick<TurnLoopDeps, "messages" | "events">,
  message: StoredUiMessage,
  checkpointId: string | undefined,
  kind:
    "CHECKPOINT_KIND_BASELINE" | "CHECKPOINT_KIND_TURN" | "CHECKPOINT_KIND_COMPLETION" | "CHECKPOINT_KIND_COMPACTION",
): void {
  if (!checkpointId) return;
  message.checkpointId = checkpointId;
  deps.messages.update(message);
  deps.events.append({ case: "checkpointSaved", value: { checkpointId, messageId: message.id, kind } });
}
