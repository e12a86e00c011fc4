import * as fs from "node:fs";
import * as path from "node:path";
import type { Logger } from "../logging/logger.js";
import type { TaskLayout, SqliteFactory } from "../storage/index.js";
import { ActivityStore } from "./activity-store.js";
import { JournalStore } from "./journal-store.js";
import {
  metricsFromLegacyLine,
  parseJsonLines,
  parseLegacyActivities,
  parseLegacyHistory,
  parseLegacyUiMessages,
} from "./legacy-parsers.js";
import { MessageStore } from "./message-store.js";
import { MetricsStore, metricsFingerprint } from "./metrics-store.js";
import { StateFile } from "./state-file.js";
import { TaskFileDamaged } from "./task-db.js";
import type { TaskHistory } from "./task-history.js";

/** Renames an imported file to `<name>.migrated` (only after its rows were committed and read back). */
function markMigrated(file: string): void {
  fs.renameSync(file, `${file}.migrated`);
}

function exists(file: string): boolean {
  return fs.existsSync(file);
}

/**
 * taskHistory.jsonl -> taskHistory.db, only for a database created by this version (the
 * schema marks a new database "pending"); the rows and the "done" mark commit together, so an
 * interrupted import runs again and a finished one never does. The .jsonl file is left as is.
 */
export function importLegacyHistory(history: TaskHistory, legacyFile: string, logger: Logger): number {
  if (history.getMeta("legacy_history_import") !== "pending") return 0;
  if (!exists(legacyFile)) {
    history.importMany([], "legacy_history_import", "none");
    return 0;
  }
  const { records, unreadable } = parseLegacyHistory(legacyFile);
  const added = history.importMany(records, "legacy_history_import", "done");
  logger.info("imported legacy taskHistory.jsonl", { rows: added, unreadable });
  return added;
}

export interface LegacyImportOutcome {
  imported: string[];
  /** Files that could not be imported, with the reason; they stay where they are. */
  damaged: { file: string; reason: string }[];
}

/**
 * The per-task legacy imports run when a task is first opened by a sidecar that owns it. Each
 * step is idempotent and retried after an interruption; a malformed file is reported (the task
 * is listed as damaged) and left in place, while the other steps still run.
 */
export function importLegacyTaskFiles(sqlite: SqliteFactory, task: TaskLayout, logger: Logger): LegacyImportOutcome {
  const outcome: LegacyImportOutcome = { imported: [], damaged: [] };
  const step = (name: string, fn: () => boolean) => {
    try {
      if (fn()) outcome.imported.push(name);
    } catch (err) {
      if (err instanceof TaskFileDamaged) outcome.damaged.push({ file: path.basename(err.file), reason: err.message });
      else
        outcome.damaged.push({
          file: name,
          reason: `${name} could not be imported: ${(err as Error).message.slice(0, 200)}`,
        });
      logger.warn("legacy import step failed", { dir: task.dir, step: name, error: (err as Error).message });
    }
  };
  step("metrics.db", () => moveLegacyMetricsDb(task, logger));
  step("ui messages", () => importUiMessages(sqlite, task));
  step("activities.json", () => importActivities(sqlite, task));
  step("api_rate_metrics.jsonl", () => importRateMetrics(sqlite, task));
  step("snapshot.json", () => importSnapshotQueue(task));
  return outcome;
}

/** A legacy `<task-id>.db` (and its WAL) becomes metrics.db once; an existing metrics.db is never overwritten. */
function moveLegacyMetricsDb(task: TaskLayout, logger: Logger): boolean {
  const legacy = task.legacy.metricsDbByTaskId;
  if (!exists(legacy)) return false;
  if (exists(task.metricsDb)) {
    logger.warn("legacy metrics database left in place: metrics.db already exists", { file: legacy });
    return false;
  }
  // WAL first: a crash between the renames leaves the db to move next time, next to its WAL.
  if (exists(`${legacy}-wal`) && !exists(`${task.metricsDb}-wal`))
    fs.renameSync(`${legacy}-wal`, `${task.metricsDb}-wal`);
  fs.rmSync(`${legacy}-shm`, { force: true });
  fs.renameSync(legacy, task.metricsDb);
  return true;
}

function importUiMessages(sqlite: SqliteFactory, task: TaskLayout): boolean {
  const source = [task.legacy.uiMessagesJsonl, task.legacy.uiMessagesJson, task.legacy.claudeMessagesJson].find(exists);
  if (!source) return false;
  const messages = parseLegacyUiMessages(source);
  const store = MessageStore.open(sqlite, task.messagesDb);
  try {
    store.importMany(messages);
    const readBack = store.countIds(messages.map((m) => m.id));
    if (readBack !== messages.length) throw new Error(`read back ${readBack} of ${messages.length} messages`);
  } finally {
    store.close();
  }
  markMigrated(source);
  return true;
}

function importActivities(sqlite: SqliteFactory, task: TaskLayout): boolean {
  const source = task.legacy.activitiesJson;
  if (!exists(source)) return false;
  const rows = parseLegacyActivities(source);
  const store = ActivityStore.open(sqlite, task.activitiesDb);
  try {
    store.importOnce("activities.json", rows);
    if (store.importedRows("activities.json") === undefined) throw new Error("the import marker was not read back");
  } finally {
    store.close();
  }
  markMigrated(source);
  return true;
}

function importRateMetrics(sqlite: SqliteFactory, task: TaskLayout): boolean {
  const source = task.legacy.apiRateMetricsJsonl;
  if (!exists(source)) return false;
  const { values, lines } = parseJsonLines(source);
  // A line's fingerprint is its position and its bytes: the same line imported twice is stored once.
  const rows = values.map((v, i) => ({
    metrics: metricsFromLegacyLine(v),
    fingerprint: metricsFingerprint(`api_rate_metrics:${i}:${lines[i]}`),
  }));
  const store = MetricsStore.open(sqlite, task.metricsDb);
  try {
    store.recordMany(rows);
    if (!store.hasFingerprints(rows.map((r) => r.fingerprint))) throw new Error("imported metrics were not read back");
  } finally {
    store.close();
  }
  markMigrated(source);
  return true;
}

/** snapshot.json of earlier versions: only its input queue is carried into state.json, once. */
function importSnapshotQueue(task: TaskLayout): boolean {
  if (!exists(task.legacy.snapshotJson)) return false;
  const state = new StateFile(task.stateJson, task.stateJsonBak);
  const current = state.read().value ?? {};
  if (current.legacySnapshotImported === true) return false;
  let snapshot: unknown;
  try {
    snapshot = JSON.parse(fs.readFileSync(task.legacy.snapshotJson, "utf8"));
  } catch (err) {
    throw new TaskFileDamaged(task.legacy.snapshotJson, `is not valid JSON (${(err as Error).message.slice(0, 80)})`);
  }
  const queue = (snapshot as { inputQueue?: unknown } | null)?.inputQueue;
  if (queue !== undefined && !Array.isArray(queue))
    throw new TaskFileDamaged(task.legacy.snapshotJson, "has an inputQueue that is not an array");
  state.write({ ...current, inputQueue: queue ?? [], legacySnapshotImported: true });
  return true;
}

/**
 * The first time a task from an earlier version is continued, api_conversation_history.jsonl
 * is imported into journal.db, while the journal holds nothing but that import (so an
 * interrupted import is redone and a journal the runtime already wrote is never touched).
 * The legacy file is left unchanged. Returns how many entries were imported (0: nothing to do).
 * The runtime calls this before rebuilding the conversation, holding the task's claim.
 */
export function importLegacyConversation(sqlite: SqliteFactory, task: TaskLayout): number {
  const source = task.legacy.apiConversationHistoryJsonl;
  if (!exists(source)) return 0;
  const journal = JournalStore.open(sqlite, task.journalDb);
  try {
    if (journal.getMeta("legacy_conversation_imported") === "1") return 0;
    const kinds = journal.kinds();
    if (kinds.some((k) => k !== LEGACY_CONVERSATION_KIND)) return 0;
    const { values, lines } = parseJsonLines(source);
    values.forEach((v, i) => {
      const role = (v as { role?: unknown } | null)?.role;
      if (role !== "user" && role !== "assistant")
        throw new TaskFileDamaged(source, `line ${i + 1} has no user/assistant role`);
    });
    journal.transaction(() => {
      journal.truncateAfter(0);
      journal.appendMany(lines.map((line) => ({ kind: LEGACY_CONVERSATION_KIND, data: line })));
      journal.setMeta("legacy_conversation_imported", "1");
    });
    return lines.length;
  } finally {
    journal.close();
  }
}

export const LEGACY_CONVERSATION_KIND = "legacy_conversation_message";
