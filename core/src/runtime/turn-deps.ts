import type {
  AutoApprovalSettings,
  IgnoreMatcher,
  ToolDefinition,
  ToolEnvironment,
  ToolGuard,
  EnabledRule,
} from "../agent/index.js";
import type { Logger } from "../logging/logger.js";
import type { AskBroker } from "./ask-broker.js";
import type { CapabilitiesPort } from "./capabilities-port.js";
import type { TaskEventLog } from "./event-log.js";
import type { TaskRunStatus } from "./runtime-events.js";
import type { CheckpointPort, ContextPort, JournalPort, MessagesPort, RunnerModel, UsagePort } from "./ports.js";

/** What one task's turn loop (and its tool turns) is given by the runtime that builds it. */
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
  /** Where a command's output is logged; one log is cut at the task's budget, then the oldest logs go. */
  commandLog: {
    pathFor(callId: string): string;
    maxBytes(): Promise<number>;
    afterCommand(path: string): Promise<void>;
  };
  commandTimeoutMs: () => Promise<number>;
  checkpoints: CheckpointPort | undefined;
  usage: UsagePort;
  /** The task's own loop (not a subagent's): its requests measure the task's context. */
  ownsContext?: boolean;
  /** The system prompt with this turn's enabled rules and tools (`textTools`: tools taught in text, Cline's XML format). */
  systemPrompt: (
    rules: readonly EnabledRule[],
    tools: readonly ToolDefinition[],
    options: { textTools: boolean },
  ) => string;
  /** Rules, workflows, skills, hooks, MCP tools; read at every turn. */
  capabilities: CapabilitiesPort;
  /** Records an activity (activities.db): hook runs and their output, never as the user's words. */
  recordActivity: (kind: string, data: Record<string, unknown>) => void;
  setStatus: (status: TaskRunStatus, reason?: string) => void;
  logger: Logger;
  /** Upper bound of model requests in one run, so a looping model cannot run forever. */
  maxRequestsPerRun?: number;
  context: ContextPort;
  /** Runs a subagent for new_subagent and returns its result (absent: subagents are not available). */
  runSubagent?: (prompt: string, name: string | undefined, signal: AbortSignal) => Promise<string>;
  /** The host editor's file and terminal I/O for this task, read at each tool call (absent: local). */
  environment?: () => ToolEnvironment | undefined;
  /** Files the editor reports as modified and unsaved, read at each edit (absent: none reported). */
  unsavedInEditor?: () => readonly string[];
  /** A tool call id unique in the task, from the model's (models may repeat theirs). */
  uniqueToolCallId: (modelId: string) => string;
}

/** The `mode` setting: in plan mode the agent reads and plans; tools that change anything are refused. */
export type TaskMode = "act" | "plan";
