import * as fs from "node:fs";
import type { TaskLayout, SqliteFactory } from "../storage/index.js";
import {
  JournalStore,
  LEGACY_CONVERSATION_KIND,
  MessageStore,
  MetricsStore,
  metricsFingerprint,
  TaskJsonFiles,
  type TaskHistory,
  type TaskRecord,
} from "../tasks/index.js";
import type { ParsedClineItem } from "./import-types.js";
import type { ImportRecord } from "./import-record.js";
import { importedMetadata, importedRow, JOURNAL_IMPORT_META } from "./imported-task-writer.js";

/** Ids the import gives messages (legacy tasks, sessions); the runtime's own messages have others. */
const IMPORTED_MESSAGE_ID = /^(legacy|cline4)-/;

/**
 * True when the Dline copy of an imported task was changed in Dline since the import: continued
 * (the runtime journaled its own turns, added messages) or rewound (fewer messages or entries
 * than the import wrote). Such a task is never refreshed from its source: that would overwrite
 * the user's work.
 */
export function changedInDline(sqlite: SqliteFactory, task: TaskLayout, record: ImportRecord | undefined): boolean {
  if (fs.existsSync(task.messagesDb)) {
    const messages = MessageStore.open(sqlite, task.messagesDb);
    try {
      const ids = messages.list().map((m) => m.id);
      if (ids.some((id) => !IMPORTED_MESSAGE_ID.test(id))) return true;
      if (record && record.messageCount >= 0 && ids.length !== record.messageCount) return true;
    } finally {
      messages.close();
    }
  }
  if (fs.existsSync(task.journalDb)) {
    const journal = JournalStore.open(sqlite, task.journalDb);
    try {
      if (journal.kinds().some((k) => k !== LEGACY_CONVERSATION_KIND)) return true;
      if (record && record.journalEntries >= 0 && journal.count() !== record.journalEntries) return true;
    } finally {
      journal.close();
    }
  }
  return false;
}

function sizeOf(files: string[]): number {
  return files.reduce((n, f) => n + (fs.existsSync(f) ? fs.statSync(f).size : 0), 0);
}

/**
 * Rewrites an imported task from its changed source, through the owners and in place: each
 * database's content is replaced in one transaction of its own (readers in other sidecars see
 * the old content or the new, never a file being swapped), then task_metadata.json with the new
 * import record, then the history row. Interrupted between two of these, the task still
 * records the old content hash, so the next import refreshes it again. The caller holds the
 * task's claim and checked that it was not changed in Dline.
 */
export function refreshImportedTask(
  deps: { sqlite: SqliteFactory; history: TaskHistory },
  task: TaskLayout,
  row: TaskRecord,
  parsed: ParsedClineItem,
  importedAt: number,
  record: ImportRecord,
  /** Set Cline's favourite flag too (an earlier import did not carry it); otherwise the row's stays. */
  carryFavorite: boolean,
): void {
  const { sqlite } = deps;
  const metrics = MetricsStore.open(sqlite, task.metricsDb);
  try {
    metrics.replaceAll(parsed.requests.map((r) => ({ metrics: r.metrics, fingerprint: metricsFingerprint(r.key) })));
  } finally {
    metrics.close();
  }
  const messages = MessageStore.open(sqlite, task.messagesDb);
  try {
    messages.replaceAll(parsed.messages);
  } finally {
    messages.close();
  }
  if (parsed.conversation.length > 0 || fs.existsSync(task.journalDb)) {
    const journal = JournalStore.open(sqlite, task.journalDb);
    try {
      const time = parsed.item.startedAt || importedAt;
      journal.transaction(() => {
        journal.truncateAfter(0);
        journal.appendMany(parsed.conversation.map((data) => ({ kind: LEGACY_CONVERSATION_KIND, data, time })));
        journal.setMeta(JOURNAL_IMPORT_META, parsed.item.sourceKey);
      });
    } finally {
      journal.close();
    }
  }
  new TaskJsonFiles(task).writeMetadata(importedMetadata(row.id, parsed, importedAt, record));
  const fresh = importedRow(
    row.id,
    parsed,
    importedAt,
    sizeOf([task.messagesDb, task.journalDb, task.metricsDb, task.metadataJson]),
  );
  deps.history.updateNow(row.id, {
    ...fresh,
    // What the user set in Dline stays: a workspace given on resume, the favourite flag.
    workspaceRoot: row.workspaceRoot || fresh.workspaceRoot,
    favorite: row.favorite || (carryFavorite && parsed.favorite),
  });
}
