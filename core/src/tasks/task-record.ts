/** The task index's view of one task (one row of taskHistory.db). Connect-free. */
export const TASK_STATUSES = [
  "running",
  "waiting",
  "completed",
  "cancelled",
  "interrupted",
  "failed",
  "damaged",
] as const;
export type TaskStatusName = (typeof TASK_STATUSES)[number];

export interface TaskRecord {
  id: string;
  workspaceRoot: string;
  title: string;
  /** The task's text (first prompt), searched with the title; not sent in listings. */
  taskText: string;
  createdAt: number;
  updatedAt: number;
  favorite: boolean;
  tokensIn: number;
  tokensOut: number;
  cacheReads: number;
  cacheWrites: number;
  cost: number;
  /** Part of the task's requests had no known price: `cost` counts the others only. */
  costUnknown: boolean;
  sizeBytes: number;
  status: TaskStatusName;
  /** "dline", or "cline-import:<source key>". */
  source: string;
  /** Set when status is "damaged": why the task's files or row could not be read. */
  damagedReason: string;
}

export type TaskRecordInit = Partial<TaskRecord> & { id: string };

export function newTaskRecord(init: TaskRecordInit, now = Date.now()): TaskRecord {
  return {
    workspaceRoot: "",
    title: "",
    taskText: "",
    createdAt: now,
    updatedAt: now,
    favorite: false,
    tokensIn: 0,
    tokensOut: 0,
    cacheReads: 0,
    cacheWrites: 0,
    cost: 0,
    costUnknown: false,
    sizeBytes: 0,
    status: "completed",
    source: "dline",
    damagedReason: "",
    // An explicit `undefined` means "not given": it must not erase a default.
    ...(Object.fromEntries(Object.entries(init).filter(([, v]) => v !== undefined)) as TaskRecordInit),
  };
}

/** Raw row as stored; typed `unknown` because another tool (or a bad write) may have put anything there. */
export type HistoryRow = Record<string, unknown>;

const intFields = [
  ["created_at", "createdAt"],
  ["updated_at", "updatedAt"],
  ["tokens_in", "tokensIn"],
  ["tokens_out", "tokensOut"],
  ["cache_reads", "cacheReads"],
  ["cache_writes", "cacheWrites"],
  ["size_bytes", "sizeBytes"],
] as const;

/**
 * Maps a row to a record without ever throwing: a row with wrong types is listed as damaged
 * with the reason, so one bad row never empties the history.
 */
export function recordFromRow(row: HistoryRow): TaskRecord {
  const problems: string[] = [];
  const str = (name: string): string => {
    const v = row[name];
    if (typeof v === "string") return v;
    if (v !== null && v !== undefined) problems.push(`${name} is ${typeof v}`);
    else problems.push(`${name} is missing`);
    return v === null || v === undefined ? "" : String(v);
  };
  const num = (name: string, integer: boolean): number => {
    const v = row[name];
    if (typeof v === "number" && Number.isFinite(v) && (!integer || Number.isInteger(v))) return v;
    if (typeof v === "bigint") return Number(v);
    problems.push(`${name} is ${v === null ? "null" : typeof v === "number" ? "not an integer" : typeof v}`);
    return 0;
  };
  const record = newTaskRecord({ id: typeof row.id === "string" ? row.id : String(row.id ?? "") }, 0);
  if (typeof row.id !== "string") problems.push("id is not text");
  record.workspaceRoot = str("workspace_root");
  record.title = str("title");
  if ("task_text" in row) record.taskText = str("task_text");
  for (const [column, field] of intFields) record[field] = num(column, true);
  record.cost = num("cost", false);
  record.costUnknown = row.cost_unknown === 1 || row.cost_unknown === 1n;
  const favorite = row.favorite;
  if (favorite === 0 || favorite === 1) record.favorite = favorite === 1;
  else problems.push("favorite is not 0 or 1");
  record.source = str("source");
  const status = str("status");
  record.damagedReason = typeof row.damaged_reason === "string" ? row.damaged_reason : "";
  if ((TASK_STATUSES as readonly string[]).includes(status)) record.status = status as TaskStatusName;
  else problems.push(`status "${status.slice(0, 40)}" is unknown`);
  if (problems.length > 0) {
    record.status = "damaged";
    const reason = `history row: ${problems.join(", ")}`;
    record.damagedReason = record.damagedReason ? `${record.damagedReason}; ${reason}` : reason;
  }
  return record;
}
