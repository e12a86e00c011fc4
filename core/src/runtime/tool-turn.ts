import { create } from "@bufbuild/protobuf";
import { AskKind, AskSchema, TaskStatus } from "../gen/dline/v1/task_pb.js";
import { decideApproval } from "../agent/approval.js";
import { planText } from "../agent/tools/plan-tool.js";
import { editsGitInternals } from "../agent/tools/protected-edits.js";
import { runTool } from "../agent/tools/registry.js";
import type { ToolDefinition, ToolResult } from "../agent/tools/types.js";
import type { StoredUiMessage } from "../tasks/message-store.js";
import type { HookEvent, HookOutcome } from "./capabilities-port.js";
import { JOURNAL_KIND, type ToolResultsData } from "./conversation.js";
import type { TaskMode, TurnLoopDeps } from "./turn-loop.js";

const COMMAND_TOOL = "execute_command";
const SUBAGENT_TOOL = "new_subagent";

/** What running a turn's tool calls needs from the turn loop that runs them. */
export interface ToolTurnHost {
  readonly deps: TurnLoopDeps;
  /** This turn's tools: the built-in ones and those capabilities add. */
  readonly tools: readonly ToolDefinition[];
  /** The last UI message added: the anchor of the checkpoint saved at the end of the turn. */
  readonly lastMessageId: string;
  /** Consecutive auto-approved calls, bounded by autoApprovalSettings.maxRequests. */
  autoApprovedInARow: number;
  mode(): Promise<TaskMode>;
  hooks(event: HookEvent, payload: Record<string, unknown>, signal?: AbortSignal): Promise<HookOutcome>;
  addMessage(init: Partial<StoredUiMessage>): StoredUiMessage;
  finalize(message: StoredUiMessage): void;
  journal(kind: string, data: object): void;
  /** The most characters one tool result should take in the context window. */
  readonly maxResultChars?: number;
}

/** One line a person reads about a tool call. */
function summarize(tool: string, input: Record<string, unknown>): string {
  const target = input.command ?? input.path ?? input.question ?? "";
  const text = typeof target === "string" ? target : JSON.stringify(target);
  return `${tool}${text ? ` ${text.split("\n")[0].slice(0, 200)}` : ""}`;
}

/** Asks the editor (approval, follow-up question) and waits; the status is WAITING meanwhile. */
async function ask(deps: TurnLoopDeps, kind: AskKind, tool: string, summary: string, detail: string, options: string[], signal: AbortSignal) {
  const answer = await deps.asks.ask((askId) => {
    deps.events.append({ case: "ask", value: create(AskSchema, { askId, kind, tool, summary, detail, options }) });
    deps.setStatus(TaskStatus.WAITING, summary);
  }, signal);
  deps.events.append({ case: "askResolved", value: { askId: "", approved: answer.approve, text: answer.text } });
  deps.setStatus(TaskStatus.RUNNING);
  return answer;
}

/**
 * Runs the tool calls of one assistant turn in order: refuses unknown tools, bad arguments and
 * (in plan mode) tools that modify; asks for approval unless auto-approved; runs the PreToolUse
 * and PostToolUse hooks; records the results in the journal; saves the turn's checkpoint when a
 * tool may have modified the workspace, and the completion's when the task completed.
 */
export async function runToolCalls(
  host: ToolTurnHost,
  calls: { id: string; name: string; input: Record<string, unknown> | undefined; parseError?: string }[],
  assistantMessageId: string,
  signal: AbortSignal,
): Promise<"continue" | "completed"> {
  const { deps } = host;
  const results: ToolResultsData["results"] = [];
  let feedback: string | undefined;
  let denied = false;
  let modified = false;
  let commandRan = false;
  let completion: StoredUiMessage | undefined;
  const edited = new Set<string>();
  const agentIgnore = await deps.agentIgnore();
  const guard = await deps.toolGuard();
  for (const call of calls) {
    const result = (content: string, isError = false) => results.push({ toolUseId: call.id, content, isError });
    if (denied || completion) {
      result("Not run: an earlier tool call in this turn was denied or completed the task.", true);
      continue;
    }
    const tool = host.tools.find((t) => t.name === call.name);
    if (!tool) {
      result(`Unknown tool "${call.name}". Available tools: ${host.tools.map((t) => t.name).join(", ")}.`, true);
      continue;
    }
    if (!call.input) {
      result(`The arguments of ${call.name} are not a JSON object: ${call.parseError ?? "unparseable"}.`, true);
      continue;
    }
    const input = call.input;
    // A subagent runs in its task's mode, so in plan mode it only explores: it may start.
    if (!tool.readOnly && tool.name !== SUBAGENT_TOOL && (await host.mode()) === "plan") {
      result(`${call.name} was not run: the task is in plan mode, where only read-only tools run. Present the change as part of your plan instead.`, true);
      continue;
    }
    const summary = summarize(call.name, input);
    const isCommand = tool.name === COMMAND_TOOL;
    const alwaysAsk = await editsGitInternals(tool, input, deps.workspaceRoot);
    const decision = decideApproval(tool.approvalCategory(input), await deps.autoApproval(), host.autoApprovedInARow, { alwaysAsk });
    if (decision.kind === "auto_approved") host.autoApprovedInARow++;
    if (decision.kind === "ask") {
      const kind = isCommand ? AskKind.COMMAND_APPROVAL : AskKind.TOOL_APPROVAL;
      const answer = await ask(deps, kind, call.name, summary, JSON.stringify(input), [], signal);
      host.autoApprovedInARow = 0;
      if (!answer.approve) {
        denied = true;
        host.addMessage({ role: "user", kind: "denied", text: answer.text, tool: call.name });
        result(`The user denied this operation.${answer.text ? ` Their feedback: ${answer.text}` : ""}`, true);
        continue;
      }
      if (answer.text) feedback = `The user approved with feedback: ${answer.text}`;
    }
    const pre = await host.hooks("PreToolUse", { tool: call.name, input }, signal);
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
      ? host.addMessage({ role: "tool", kind: isCommand ? "command" : "tool", tool: call.name, text: summary, detail: JSON.stringify(input), partial: true })
      : undefined;
    if (visible) deps.events.append({ case: "toolStarted", value: { toolCallId: call.id, tool: call.name, summary, detail: JSON.stringify(input) } });
    const logPath = isCommand ? deps.commandLog.pathFor(call.id.replace(/[^A-Za-z0-9._-]/g, "_") || "command") : undefined;
    let outcome: ToolResult;
    try {
      outcome = await runTool(tool, input, {
        workspaceRoot: deps.workspaceRoot,
        signal,
        agentIgnore,
        guard,
        recordEditedPath: (p) => edited.add(p),
        beforeEdit: async (p) => {
          await deps.checkpoints?.beforeEdit([p]);
        },
        onOutput: (chunk) => deps.events.append({ case: "toolOutput", value: { toolCallId: call.id, chunk } }),
        commandLogPath: logPath,
        commandTimeoutMs: isCommand ? await deps.commandTimeoutMs() : undefined,
        toolCallId: call.id,
        environment: deps.environment?.(),
        maxResultChars: host.maxResultChars,
      });
    } finally {
      if (logPath) await deps.commandLog.afterCommand(logPath).catch((err: Error) => deps.logger.warn("command log budget", { error: err.message }));
    }
    if (isCommand) commandRan = true;
    await host.hooks("PostToolUse", { tool: call.name, input, ok: !outcome.isError, output: outcome.content.slice(0, 16 * 1024) }, signal);
    if (toolMessage) {
      deps.events.append({ case: "toolFinished", value: { toolCallId: call.id, ok: !outcome.isError, result: outcome.content.slice(0, 64 * 1024) } });
      toolMessage.partial = false;
      toolMessage.detail = JSON.stringify({ input, ok: !outcome.isError, output: outcome.content.slice(0, 64 * 1024) });
      host.finalize(toolMessage);
    }
    const interaction = outcome.interaction;
    if (interaction?.kind === "followup") {
      host.addMessage({ role: "assistant", kind: "followup", text: interaction.question, detail: JSON.stringify({ options: interaction.options }) });
      const answer = await ask(deps, AskKind.FOLLOWUP, call.name, interaction.question, JSON.stringify(input), interaction.options, signal);
      host.autoApprovedInARow = 0;
      host.addMessage({ role: "user", kind: "text", text: answer.text });
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
      host.addMessage({ role: "assistant", kind: "plan", text: planText(interaction.steps), detail: JSON.stringify({ steps: interaction.steps, explanation: interaction.explanation ?? "" }) });
      result(outcome.content);
      continue;
    }
    if (interaction?.kind === "completion") {
      completion = host.addMessage({ role: "assistant", kind: "completion", text: interaction.result });
      result("The user was shown the result.");
      continue;
    }
    result(outcome.content, outcome.isError);
  }
  host.journal(JOURNAL_KIND.toolResults, { results, feedback } satisfies ToolResultsData);
  if (modified && deps.checkpoints) {
    // The checkpoint follows the whole turn: it is anchored on the turn's last message.
    const anchor = host.lastMessageId || assistantMessageId;
    const id = await deps.checkpoints.saveTurn({ editedPaths: [...edited], commandRan, messageId: anchor });
    if (id) deps.events.append({ case: "checkpointSaved", value: { checkpointId: id, messageId: anchor, kind: "CHECKPOINT_KIND_TURN" } });
  }
  if (completion) {
    if (deps.checkpoints) attachCheckpoint(deps, completion, await deps.checkpoints.saveCompletion(completion.id), "CHECKPOINT_KIND_COMPLETION");
    await host.hooks("TaskComplete", { result: completion.text });
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

/** Records a checkpoint saved at `message` on the message and tells subscribers; nothing when none was saved. */
export function attachCheckpoint(
  deps: Pick<TurnLoopDeps, "messages" | "events">,
  message: StoredUiMessage,
  checkpointId: string | undefined,
  kind: "CHECKPOINT_KIND_COMPLETION" | "CHECKPOINT_KIND_COMPACTION",
): void {
  if (!checkpointId) return;
  message.checkpointId = checkpointId;
  deps.messages.update(message);
  deps.events.append({ case: "checkpointSaved", value: { checkpointId, messageId: message.id, kind } });
}
