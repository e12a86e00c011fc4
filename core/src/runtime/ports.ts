import type { ModelProvider, TokenUsage } from "../agent/index.js";
import type { StoredUiMessage, JournalAppend, JournalEntry } from "../tasks/index.js";

/**
 * What the turn loop needs from the rest of the core, as narrow interfaces: the task store's
 * owners (messages.db, journal.db, metrics, history, state.json), the checkpoint manager and
 * the model. app.ts supplies the real implementations.
 */
export interface MessagesPort {
  append(message: StoredUiMessage): void;
  update(message: StoredUiMessage): void;
  list(): StoredUiMessage[];
  /** Removes the messages after this one (a failed attempt's partial answer). */
  truncateAfter(messageId: string): number;
  clear(): number;
  /** Commits buffered appends now (before a question: what it is about is on disk first). */
  flush(): void;
}

export interface JournalPort {
  append(entry: JournalAppend): number;
  /** Appends `entry` and removes the entries of `dropKind` after `afterSeq`, in one transaction. */
  appendDropping(entry: JournalAppend, dropKind: string, afterSeq: number): number;
  entries(afterSeq?: number): JournalEntry[];
}

export interface CheckpointPort {
  /**
   * Starts (once) and waits for the task's baseline snapshot, anchored on the task's first
   * message, and for the task's saves under way. Answers the baseline's id ("" when unavailable).
   */
  baseline(messageId?: string): Promise<string>;
  /**
   * A tool that may modify the workspace and is not an edit (a command, a subagent, an MCP tool),
   * or a hook, is about to run: waits as baseline() does, and until the task's next scan or
   * edit its completion (and a turn whose tools did not run) scans rather than reuse the snapshot.
   */
  beforeTool(): Promise<void>;
  /**
   * A later run of the task starts (a message sent after an earlier run, a Resume): what the
   * workspace holds when its first tool that may modify it runs is saved first (anchored on
   * `messageId`), so that the person's own changes since the task's last checkpoint are never
   * taken for the task's. Returns at once; `saved` hears of that checkpoint once it is saved.
   */
  runStarting(messageId: string, saved?: (checkpointId: string) => void): void;
  /**
   * Before an edit tool changes these workspace-relative files: waits for the baseline, then
   * keeps what the checkpoints would otherwise lose (and waits for the turns' saves that read them).
   */
  beforeEdit(paths: string[]): Promise<void>;
  /**
   * After a turn that called a tool that may modify the workspace; returns the checkpoint id or
   * "" when unavailable. `nothingRan`: none of those calls ran (refused, denied). The saves of a
   * task run in order; the loop need not wait for one (whatever may change the workspace next
   * waits for it: baseline(), beforeEdit()).
   */
  saveTurn(change: {
    editedPaths: string[];
    commandRan: boolean;
    messageId: string;
    nothingRan?: boolean;
  }): Promise<string>;
  /** A command is about to run (after baseline()): the checkpoints may watch it. Returns at once. */
  commandStarting(): void;
  saveCompletion(messageId: string): Promise<string>;
  /** A compaction checkpoint: no file snapshot, only "task only" restores. */
  saveCompaction(messageId: string): Promise<string>;
}

/** context.json and context_history.jsonl of a task (context management records). */
export interface ContextPort {
  /** context.json as last written (undefined when absent or unreadable). */
  read(): Record<string, unknown> | undefined;
  write(value: Record<string, unknown>): void;
  appendHistory(record: Record<string, unknown>): void;
}

export interface UsagePort {
  /**
   * Records one model request's usage (metrics.db) and adds it to the task's totals (history).
   * `costUsd` undefined: no price is known for the model (the cost is unknown, not $0).
   * `contextWindow`: set for the task's own requests (not a subagent's), whose size tells how
   * full the task's context is.
   */
  record(usage: TokenUsage, costUsd: number | undefined, model: string, contextWindow?: number): void;
}

export interface RunnerModel {
  provider: ModelProvider;
  contextWindow: number;
  /** The profile this model came from (kept in state.json so a resume uses the same one). */
  profileId: string;
  /** The profile's output limit (0 or absent: the default, raised after an answer is cut). */
  maxOutputTokens?: number;
  /** The most output tokens the model allows, when known (the limit is never raised past it). */
  modelMaxOutputTokens?: number;
  /** Anthropic extended thinking budget (0: off); max_tokens must exceed it. */
  thinkingBudgetTokens?: number;
  /** "xml": tools are offered in text (Cline's format); else natively, with a switch to text if the server refuses tools. */
  toolCallFormat?: "native" | "xml";
}
