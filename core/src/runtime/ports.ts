import type { ModelProvider, ToolSpec, TokenUsage } from "../agent/providers/types.js";
import type { StoredUiMessage } from "../tasks/message-store.js";
import type { JournalAppend, JournalEntry } from "../tasks/journal-store.js";

/**
 * What the turn loop needs from the rest of the core, as narrow interfaces: the task store's
 * owners (messages.db, journal.db, metrics, history, state.json), the checkpoint manager, the
 * tools and the model. app.ts supplies the real implementations.
 */
export interface MessagesPort {
  append(message: StoredUiMessage): void;
  update(message: StoredUiMessage): void;
  list(): StoredUiMessage[];
}

export interface JournalPort {
  append(entry: JournalAppend): number;
  entries(afterSeq?: number): JournalEntry[];
}

export interface ToolOutcome {
  ok: boolean;
  /** What the model reads as the tool's result. */
  output: string;
  /** Workspace-relative paths the tool wrote or deleted (for checkpoints and restores). */
  editedPaths?: string[];
}

export interface ToolRunContext {
  workspaceRoot: string;
  signal: AbortSignal;
  /** A chunk of output while the tool runs (command output). */
  onOutput(chunk: string): void;
}

export interface RuntimeTool {
  spec: ToolSpec;
  /** Read-only tools never wait for the baseline checkpoint and need no workspace checkpoint. */
  readOnly: boolean;
  /** One line a person reads, e.g. "Edit src/a.ts". */
  summarize(input: Record<string, unknown>): string;
  /** True when this call may run without asking (auto-approval settings, requires_approval). */
  autoApproved(input: Record<string, unknown>): boolean;
  /** Command tools ask with ASK_KIND_COMMAND_APPROVAL. */
  isCommand: boolean;
  run(input: Record<string, unknown>, context: ToolRunContext): Promise<ToolOutcome>;
}

export interface CheckpointPort {
  /** Starts (once) and waits for the task's baseline snapshot. */
  baseline(): Promise<void>;
  /** After a turn that may have modified the workspace; returns the checkpoint id or "" when unavailable. */
  saveTurn(change: { editedPaths: string[]; commandRan: boolean; messageId: string }): Promise<string>;
  saveCompletion(messageId: string): Promise<string>;
}

export interface UsagePort {
  /** Records one model request's usage (metrics.db) and adds it to the task's totals (history). */
  record(usage: TokenUsage, costUsd: number, model: string): void;
}

export interface RunnerModel {
  provider: ModelProvider;
  contextWindow: number;
}
