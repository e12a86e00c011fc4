import type { RequestMetrics, StoredUiMessage } from "../tasks/index.js";

/** Connect-free model of Cline data found on disk (docs/cline-import.md). */
export type ClineItemKind = "legacy_task" | "session";

/** Why an item is listed but not importable. */
export type SkipCode = "duplicate" | "imported_elsewhere" | "subagent_file" | "malformed" | "no_messages" | "migrated";

export interface UsageTotals {
  tokensIn: number;
  tokensOut: number;
  cacheReads: number;
  cacheWrites: number;
  cost: number;
}

export function emptyUsage(): UsageTotals {
  return { tokensIn: 0, tokensOut: 0, cacheReads: 0, cacheWrites: 0, cost: 0 };
}

/** One legacy task or SDK session as discovery reports it. */
export interface ClineItem {
  sourceKey: string;
  kind: ClineItemKind;
  /** The Cline root it was found under. */
  root: string;
  /** Its folder (tasks/<id>/ or sessions/<id>/), or the file for a subagent/teammate file. */
  path: string;
  /** The Dline task id it is (or would be) imported as ("" for items never importable). */
  taskId: string;
  title: string;
  startedAt: number;
  updatedAt: number;
  /** Exact path as recorded ("" when there is none; see workspaceNote). */
  workspaceRoot: string;
  workspaceNote: string;
  models: string[];
  messageCount: number;
  usage: UsageTotals;
  skip?: { code: SkipCode; reason: string };
}

/** One model request's usage, keyed so that a re-import never counts it twice. */
export interface ImportedRequest {
  /** `cline:<taskId>:<index>` (legacy tasks), `cline:session:<sessionId>:<index>` (sessions). */
  key: string;
  metrics: RequestMetrics;
}

/** Everything an import writes for one item, parsed from Cline's files (read-only). */
export interface ParsedClineItem {
  item: ClineItem;
  taskText: string;
  status: "completed" | "interrupted";
  /** Cline's favourite (star) flag. */
  favorite: boolean;
  messages: StoredUiMessage[];
  /** Anthropic-shaped `{role, content}` JSON lines for journal.db (the conversation to continue). */
  conversation: string[];
  requests: ImportedRequest[];
  /** What could not be carried over, one sentence each. */
  notCarriedOver: string[];
  /** What the import makes of the item when that is not plain (a legacy task and its session imported as one). */
  detail?: string;
  /** Extra facts for task_metadata.json (Cline's own metadata, files in context...). */
  metadata: Record<string, unknown>;
}

/** Thrown by the parsers for a file that cannot be read as its format says. */
export class MalformedClineFile extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file} ${reason}`);
  }
}

/** What happened to one item of an import request. */
export type ImportOutcome =
  "imported" | "would_import" | "refreshed" | "would_refresh" | "already_imported" | "skipped" | "failed";

export interface ImportItemResult {
  sourceKey: string;
  taskId: string;
  outcome: ImportOutcome;
  notCarriedOver: string[];
  error: string;
  /** A short code for the error: "unknown_source_key" when the key names nothing under the Cline roots. */
  errorCode?: string;
  /** What happened, when the outcome alone does not say (why a task was refreshed, or left as it was). */
  detail?: string;
  item?: ClineItem;
}
