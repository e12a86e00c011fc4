/** What every tool is: a name and JSON schema for native tool calling, flags the runtime needs, and execute. */
import { DlineError } from "../../errors.js";
import type { PreparedEdit } from "./prepared-edit.js";
import type { IgnoreMatcher } from "./ignore-matcher.js";
import type { ToolGuard } from "./tool-guard.js";

/** The autoApprovalSettings switch that covers a tool call (useMcp: for MCP tools, none yet). */
export type ApprovalCategory = "readFiles" | "editFiles" | "executeSafeCommands" | "executeAllCommands" | "useMcp";

export interface ToolContext {
  /** Absolute path of the workspace; every file tool stays inside it. */
  workspaceRoot: string;
  /** Aborts a running tool (Cancel); execute_command kills its process group. */
  signal: AbortSignal;
  /** `.agentignore` of the workspace: paths it matches are neither read nor written. */
  agentIgnore: IgnoreMatcher;
  /** The core's own folders (never reached) and the stored secrets (redacted from every output). */
  guard: ToolGuard;
  /** Records a workspace-relative path an editing tool touched (for checkpoints). */
  recordEditedPath(relativePath: string): void;
  /** Called by an editing tool before it changes a workspace-relative path (checkpoints keep what it was). */
  beforeEdit?(relativePath: string): Promise<void>;
  /** Receives output chunks as they come (execute_command). */
  onOutput?(chunk: string): void;
  /** execute_command appends its output here (the task's tmp/command-logs/ file). */
  commandLogPath?: string;
  /** A single command's log is cut at this size (default: 200 MiB, the task's default budget). */
  commandLogMaxBytes?: number;
  /** execute_command timeout; default 10 minutes. */
  commandTimeoutMs?: number;
  /** Shell for execute_command; default $SHELL, else /bin/sh. */
  shell?: string;
  /** The most characters one result should take (a share of the context window): read_file reads no more at once. */
  maxResultChars?: number;
  /** The id of the tool call being run (lets an environment tie its work to the call). */
  toolCallId?: string;
  /**
   * Where file and command I/O happens when not on this machine's disk and shell directly,
   * e.g. an ACP editor's buffers and terminals. Absent: the tools use the local file system.
   */
  environment?: ToolEnvironment;
  /**
   * Files the editor reports as open with unsaved changes (absolute or workspace-relative):
   * edits to them are refused. Absent: the client reports none.
   */
  unsavedInEditor?: () => readonly string[];
  /**
   * The edit as it was prepared (and approved): an edit tool writes exactly this, or refuses
   * with StaleEditError when a file changed since. Absent: the tool prepares it itself.
   */
  preparedEdit?: PreparedEdit;
}

/**
 * I/O a host editor offers in place of the local one. Each method is optional: a tool uses it
 * when present and its own local implementation otherwise. Paths are absolute and have passed
 * the workspace and .agentignore checks already.
 */
export interface ToolEnvironment {
  /** The file as the editor sees it, unsaved changes included. */
  readTextFile?(absolutePath: string, signal: AbortSignal): Promise<string>;
  /** Writes the whole file through the editor (which persists it to disk). */
  writeTextFile?(absolutePath: string, content: string, signal: AbortSignal): Promise<void>;
  /** Runs execute_command's command line (in the editor's terminal); same result shape as the local run. */
  runCommand?(command: string, ctx: ToolContext): Promise<ToolResult>;
}

/** One step of the model's plan (update_plan). */
export interface PlanStep {
  step: string;
  status: "pending" | "in_progress" | "completed";
  priority: "high" | "medium" | "low";
}

/** Tools whose effect is a question to the person: the runtime turns them into an ask (a plan: into a plan message). */
export type ToolInteraction =
  | { kind: "followup"; question: string; options: string[] }
  | { kind: "completion"; result: string }
  | { kind: "subagent"; prompt: string; name?: string }
  | { kind: "plan"; steps: PlanStep[]; explanation?: string };

export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
}

export interface ToolResult {
  /** The text given back to the model. */
  content: string;
  isError: boolean;
  interaction?: ToolInteraction;
  command?: CommandOutcome;
}

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** In the read-only list of docs/checkpoints.md: a turn of only such tools saves no checkpoint. */
  readOnly: boolean;
  /** The approval switch for this call, or undefined when the tool needs no approval (questions). */
  approvalCategory(input: Record<string, unknown>): ApprovalCategory | undefined;
  /**
   * Edit tools: computes the exact change before anything is written (the ask shows it, the
   * commit writes it). Throws ToolError when the edit cannot be made.
   */
  prepareEdit?(input: Record<string, unknown>, ctx: ToolContext): Promise<PreparedEdit>;
  execute(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/** A refusal or bad input that the model should read and correct; not a crash. */
export class ToolError extends DlineError {
  constructor(
    message: string,
    code: "invalid_argument" | "permission_denied" | "not_found" | "failed_precondition" = "invalid_argument",
  ) {
    super(code, message);
    this.name = "ToolError";
  }
}

export function ok(content: string): ToolResult {
  return { content, isError: false };
}
