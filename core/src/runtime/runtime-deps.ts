import type { AutoApprovalSettings, EnabledRule, ToolDefinition, ToolGuard } from "../agent/index.js";
import type { Logger } from "../logging/logger.js";
import type { InstanceLayout, SqliteFactory } from "../storage/index.js";
import type { TaskHistory, TaskOwnership } from "../tasks/index.js";
import type { CapabilitiesPort } from "./capabilities-port.js";
import type { CheckpointPort, RunnerModel } from "./ports.js";
import type { TaskMode } from "./turn-deps.js";

/** What the task runtime is built with (runtime/create-runtime.ts wires it). */
export interface TaskRuntimeDeps {
  layout: InstanceLayout;
  sqlite: SqliteFactory;
  history: TaskHistory;
  ownership: TaskOwnership;
  logger: Logger;
  /** The model of a profile ("" = the default profile), with its key from the secrets store. */
  resolveModel(profileId: string, taskId: string): Promise<RunnerModel>;
  /** The global autoApprovalSettings (read at every decision). */
  autoApproval(): Promise<AutoApprovalSettings>;
  /** The core's own folders (out of the tools' reach) and the stored secrets (redacted from tool output), read at each turn. */
  toolGuard(): Promise<ToolGuard>;
  /** Settings the runtime reads: command timeout and the per-task command-log budget. */
  commandTimeoutMs(): Promise<number>;
  commandLogBudgetBytes(): Promise<number>;
  /** The task's checkpoints, or undefined when checkpoints are off or unavailable there. */
  checkpointsFor(taskId: string, workspaceRoot: string): CheckpointPort | undefined;
  /**
   * A task is about to start in this workspace: its checkpoints may initialize now, while the
   * task is set up, instead of at its first request (never throws).
   */
  prepareCheckpoints?(workspaceRoot: string): void;
  systemPrompt(
    workspaceRoot: string,
    taskId: string,
    rules: readonly EnabledRule[],
    tools: readonly ToolDefinition[],
    options?: { textTools: boolean },
  ): string;
  /** Rules, workflows, skills, subagent definitions, hooks and MCP tools; none when absent. */
  capabilities?: CapabilitiesPort;
  /** Aborted when the sidecar stops: running tasks are left interrupted, not cancelled. */
  shutdownSignal: AbortSignal;
  /** The task's `mode` setting (plan: workspace-modifying tools are refused); absent: act. */
  taskMode?: (taskId: string, workspaceRoot: string) => Promise<TaskMode>;
}
