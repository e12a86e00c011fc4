import { randomUUID } from "node:crypto";
import {
  withOverlay,
  type ApprovalOverlay,
  loadAgentIgnore,
  builtinTools,
  type ToolEnvironment,
} from "../agent/index.js";
import { type TaskLayout, mkdirPrivate } from "../storage/index.js";
import { CommandLogs, ActivityStore, JournalStore, MessageStore, TaskJsonFiles } from "../tasks/index.js";
import type { AskBroker } from "./ask-broker.js";
import { noCapabilities, restrictCapabilityTools, toolAllowed } from "./capabilities-port.js";
import type { TaskEventLog } from "./event-log.js";
import type { CheckpointPort, JournalPort, MessagesPort, RunnerModel, UsagePort } from "./ports.js";
import type { TaskRuntimeDeps } from "./runtime-deps.js";
import { TurnLoop } from "./turn-loop.js";
import type { TaskMode } from "./turn-deps.js";
import type { TaskRunStatus } from "./runtime-events.js";

/** Subagents may start subagents, to this depth. */
const MAX_SUBAGENT_DEPTH = 3;

/** Where one turn loop reads and writes: a task, or one of its (nested) subagents. */
export interface LoopScope {
  taskId: string;
  workspaceRoot: string;
  files: TaskLayout;
  /** A task and its subagents share one event stream and one pending question. */
  events: TaskEventLog;
  /** The tool call ids used in the task's rows (subagents' too), so every new one is unique. */
  toolCallIds: Set<string>;
  asks: AskBroker;
  messages: MessagesPort;
  journal: JournalPort;
  /** Usage is counted on the top task (metrics and history totals), subagents included. */
  usage: UsagePort;
  setStatus(status: TaskRunStatus, reason?: string): void;
  depth: number;
  /** "Always" answers of the task's session (subagents share them); absent: the global settings alone. */
  approvalOverlay?: () => ApprovalOverlay | undefined;
  /** The host editor's file and terminal I/O for the task (subagents share it); absent: local. */
  environment?: () => ToolEnvironment | undefined;
  /** Files the editor reports as modified and unsaved (subagents share them). */
  unsavedInEditor?: () => readonly string[];
  /**
   * The task's mode (absent: act), read at every request and tool call. Subagents share their
   * task's, so one started or running while the task is in plan mode runs read-only tools only.
   */
  mode?: () => Promise<TaskMode>;
}

export function buildTurnLoop(
  deps: TaskRuntimeDeps,
  scope: LoopScope,
  model: RunnerModel,
  checkpoints: CheckpointPort | undefined,
  /** A subagent definition's allowed tools (undefined = all). */
  allowedTools?: readonly string[],
): TurnLoop {
  const tools = (
    scope.depth < MAX_SUBAGENT_DEPTH ? builtinTools : builtinTools.filter((t) => t.name !== "new_subagent")
  ).filter((t) => toolAllowed(t.name, allowedTools));
  const loop = new TurnLoop({
    taskId: scope.taskId,
    workspaceRoot: scope.workspaceRoot,
    events: scope.events,
    asks: scope.asks,
    messages: scope.messages,
    journal: scope.journal,
    model,
    tools,
    autoApproval: async () => withOverlay(await deps.autoApproval(), scope.approvalOverlay?.()),
    agentIgnore: () => loadAgentIgnore(scope.workspaceRoot),
    toolGuard: () => deps.toolGuard(),
    commandLog: {
      pathFor: (callId: string) => {
        mkdirPrivate(scope.files.commandLogsDir);
        return new CommandLogs(scope.files.commandLogsDir).logPath(callId);
      },
      maxBytes: () => deps.commandLogBudgetBytes(),
      afterCommand: async (file: string) => {
        new CommandLogs(scope.files.commandLogsDir, await deps.commandLogBudgetBytes()).enforceBudget(file);
      },
    },
    commandTimeoutMs: () => deps.commandTimeoutMs(),
    checkpoints,
    usage: scope.usage,
    ownsContext: scope.depth === 0,
    systemPrompt: (rules, tools, options) =>
      deps.systemPrompt(scope.workspaceRoot, scope.taskId, rules, tools, options),
    // The allow-list restricts every tool: built-in ones above, and those capabilities add.
    capabilities: restrictCapabilityTools(deps.capabilities ?? noCapabilities, allowedTools),
    recordActivity: activityRecorder(deps, scope.files),
    context: {
      read: () => new TaskJsonFiles(scope.files).readContext(),
      write: (value) => new TaskJsonFiles(scope.files).writeContext(value),
      appendHistory: (record) => new TaskJsonFiles(scope.files).appendContextHistory(record),
    },
    setStatus: (status, reason) => scope.setStatus(status, reason),
    runSubagent: (prompt, name, signal) => runSubagent(deps, scope, model, checkpoints, prompt, name, signal),
    logger: deps.logger,
    environment: scope.environment,
    unsavedInEditor: scope.unsavedInEditor,
    uniqueToolCallId: (modelId) => uniqueId(scope.toolCallIds, modelId),
  });
  if (scope.mode) loop.setModeSource(scope.mode);
  return loop;
}

/** `wanted` (or "call"), suffixed when the set has it already; the id is added to the set. */
function uniqueId(used: Set<string>, wanted: string): string {
  const base = wanted || "call";
  let id = base;
  for (let n = 2; used.has(id); n++) id = `${base}#${n}`;
  used.add(id);
  return id;
}

/** Appends to a task's (or subagent's) activities.db; rare events, so the file is opened per write. */
export function activityRecorder(deps: Pick<TaskRuntimeDeps, "sqlite">, files: TaskLayout) {
  return (kind: string, data: Record<string, unknown>): void => {
    const activities = ActivityStore.open(deps.sqlite, files.activitiesDb);
    try {
      activities.append({ time: Date.now(), kind, data: JSON.stringify(data) });
    } finally {
      activities.close();
    }
  };
}

/**
 * Runs a subagent to its end: its own messages and journal under `subagents/<id>/` (nested to
 * any depth), the task's event stream and approvals, the task's checkpoints and usage. Returns
 * what the parent model reads: the subagent's completion result, or why there is none.
 */
async function runSubagent(
  deps: TaskRuntimeDeps,
  parent: LoopScope,
  model: RunnerModel,
  checkpoints: CheckpointPort | undefined,
  prompt: string,
  name: string | undefined,
  signal: AbortSignal,
): Promise<string> {
  const definition = name
    ? await (deps.capabilities ?? noCapabilities).subagent(name, {
        taskId: parent.taskId,
        workspaceRoot: parent.workspaceRoot,
      })
    : undefined;
  if (name && !definition)
    return `There is no subagent named "${name}". Call new_subagent without "subagent" for a general one.`;
  const subModel = definition?.profileId ? await deps.resolveModel(definition.profileId, parent.taskId) : model;
  const id = `sub-${Date.now()}-${randomUUID().slice(0, 8)}`;
  const files = parent.files.subagent(id);
  mkdirPrivate(files.dir);
  const meta = new TaskJsonFiles(files);
  meta.writeMetadata({
    kind: "subagent",
    id,
    name: name ?? "",
    parentDir: parent.files.dir,
    taskId: parent.taskId,
    prompt,
    startedAt: Date.now(),
  });
  const messages = MessageStore.open(deps.sqlite, files.messagesDb);
  const journal = JournalStore.open(deps.sqlite, files.journalDb);
  try {
    const loop = buildTurnLoop(
      deps,
      {
        ...parent,
        files,
        messages,
        journal,
        depth: parent.depth + 1,
        // Only "waiting for an answer" and back concern the task; the subagent's end does not.
        setStatus: (status, reason) => {
          if (status === "waiting" || status === "running") parent.setStatus(status, reason);
        },
      },
      subModel,
      checkpoints,
      definition?.tools,
    );
    await loop.addUserMessage(definition?.instructions ? `${definition.instructions}\n\n${prompt}` : prompt);
    const outcome = await loop.run(signal);
    signal.throwIfAborted();
    const all = messages.list();
    const completion = [...all].reverse().find((m) => m.kind === "completion");
    meta.writeMetadata({ kind: "subagent", id, taskId: parent.taskId, prompt, outcome, endedAt: Date.now() });
    if (completion) return `Subagent ${id} finished:\n${completion.text}`;
    const last = [...all].reverse().find((m) => m.role === "assistant" && m.text);
    return `Subagent ${id} ended without a result (${outcome}).${last ? ` Its last words: ${last.text.slice(0, 2000)}` : ""}`;
  } finally {
    messages.close();
    journal.close();
  }
}
