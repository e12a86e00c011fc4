import * as fs from "node:fs";
import * as path from "node:path";
import type { TaskLayout, SqliteFactory } from "../storage/index.js";
import {
  JournalStore,
  LEGACY_CONVERSATION_KIND,
  MessageStore,
  MetricsStore,
  metricsFingerprint,
  IN_MEMORY,
  TaskJsonFiles,
  type TaskRecordInit,
} from "../tasks/index.js";
import type { ParsedClineItem } from "./import-types.js";
import type { ImportRecord } from "./import-record.js";
import { importSource } from "./source-keys.js";

/** Journal meta key naming the source whose conversation the journal holds. */
export const JOURNAL_IMPORT_META = "cline_import_source";

/** One file of a built task: its path and its whole content. */
export interface FileImage {
  path: string;
  bytes: Buffer;
}

/** A task built in memory, to be written whole, synced, and then made a task by its history row. */
export interface BuiltTask {
  taskId: string;
  dir: string;
  files: FileImage[];
  row: TaskRecordInit;
}

/** Builds one owner's database in memory and returns its file image. */
function built<S extends { image(): Buffer; close(): void }>(store: S, fill: (store: S) => void): Buffer {
  try {
    fill(store);
    return store.image();
  } finally {
    store.close();
  }
}

/**
 * Builds one parsed item as the files of a Dline task folder, each through its owner:
 * messages.db, journal.db and metrics.db are built in memory by their stores (no WAL file, no
 * per-file sync), task_metadata.json is encoded by TaskJsonFiles. Nothing is written here: the
 * ImportCommitter writes the files of many tasks, fsyncs them at once, and then commits their
 * history rows, the commit point. Until its row exists the folder is not a task, and the next
 * import redoes it (see clearInterruptedAttempt). The caller holds the task's claim.
 */
export function buildImportedTask(
  sqlite: SqliteFactory,
  task: TaskLayout,
  taskId: string,
  parsed: ParsedClineItem,
  importedAt: number,
  record: ImportRecord,
): BuiltTask {
  const { item } = parsed;
  const files: FileImage[] = [];
  files.push({
    path: task.messagesDb,
    bytes: built(MessageStore.open(sqlite, IN_MEMORY), (s) => s.importMany(parsed.messages)),
  });

  if (parsed.conversation.length > 0) {
    const time = item.startedAt || importedAt;
    const bytes = built(JournalStore.open(sqlite, IN_MEMORY), (journal) =>
      journal.transaction(() => {
        // The runtime rebuilds the model conversation from these (runtime/conversation.ts).
        journal.appendMany(parsed.conversation.map((data) => ({ kind: LEGACY_CONVERSATION_KIND, data, time })));
        journal.setMeta(JOURNAL_IMPORT_META, item.sourceKey);
      }),
    );
    files.push({ path: task.journalDb, bytes });
  }

  if (parsed.requests.length > 0) {
    const rows = parsed.requests.map((r) => ({ metrics: r.metrics, fingerprint: metricsFingerprint(r.key) }));
    files.push({ path: task.metricsDb, bytes: built(MetricsStore.open(sqlite, IN_MEMORY), (s) => s.recordMany(rows)) });
  }

  files.push({
    path: task.metadataJson,
    bytes: TaskJsonFiles.metadataBytes(importedMetadata(taskId, parsed, importedAt, record)),
  });
  const row = importedRow(
    taskId,
    parsed,
    importedAt,
    files.reduce((n, f) => n + f.bytes.length, 0),
  );
  return { taskId, dir: task.dir, files, row: { ...row, favorite: parsed.favorite } };
}

/** task_metadata.json of an imported task: what the index is rebuilt from, and where the task came from. */
export function importedMetadata(
  taskId: string,
  parsed: ParsedClineItem,
  importedAt: number,
  record: ImportRecord,
): Record<string, unknown> {
  const { item } = parsed;
  return {
    id: taskId,
    workspaceRoot: item.workspaceRoot,
    title: item.title,
    createdAt: item.startedAt || importedAt,
    source: importSource(item.sourceKey),
    importedFrom: {
      sourceKey: item.sourceKey,
      kind: item.kind,
      root: item.root,
      path: item.path,
      importedAt,
      models: item.models,
      workspaceNote: item.workspaceNote,
      notCarriedOver: parsed.notCarriedOver,
      record,
    },
    ...parsed.metadata,
  };
}

/** The history row of an imported task (the favourite flag is the caller's to set). */
export function importedRow(
  taskId: string,
  parsed: ParsedClineItem,
  importedAt: number,
  sizeBytes: number,
): TaskRecordInit {
  const { item } = parsed;
  const createdAt = item.startedAt || importedAt;
  return {
    id: taskId,
    workspaceRoot: item.workspaceRoot,
    title: item.title,
    taskText: parsed.taskText.slice(0, 10_000),
    createdAt,
    updatedAt: Math.max(item.updatedAt, createdAt),
    tokensIn: item.usage.tokensIn,
    tokensOut: item.usage.tokensOut,
    cacheReads: item.usage.cacheReads,
    cacheWrites: item.usage.cacheWrites,
    cost: item.usage.cost,
    sizeBytes,
    status: parsed.status,
    source: importSource(item.sourceKey),
  };
}

/**
 * Removes what an interrupted attempt left in a task folder that has no history row (the
 * caller checked, and holds the claim): partly written files, a stale -wal that must never be
 * replayed over a new database, a database this attempt will not write. Only the claim stays.
 */
export function clearInterruptedAttempt(task: TaskLayout): void {
  const claim = path.basename(task.ownerLock);
  for (const name of fs.readdirSync(task.dir)) {
    if (name !== claim) fs.rmSync(path.join(task.dir, name), { recursive: true, force: true });
  }
}
