import * as fs from "node:fs";
import * as path from "node:path";
import type { TaskLayout } from "../storage/instance-layout.js";
import type { SqliteFactory } from "../storage/sqlite.js";
import { JournalStore } from "../tasks/journal-store.js";
import { LEGACY_CONVERSATION_KIND } from "../tasks/legacy-import.js";
import { MessageStore } from "../tasks/message-store.js";
import { MetricsStore, metricsFingerprint } from "../tasks/metrics-store.js";
import { TaskJsonFiles } from "../tasks/task-json-files.js";
import type { TaskHistory } from "../tasks/task-history.js";
import type { ParsedClineItem } from "./import-types.js";
import { importSource } from "./source-keys.js";

/** Journal meta key naming the source whose conversation the journal holds. */
const JOURNAL_IMPORT_META = "cline_import_source";

function folderSize(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += folderSize(p);
    else if (e.isFile()) total += fs.statSync(p).size;
  }
  return total;
}

/**
 * Writes one parsed item into a Dline task folder through each file's owner: messages.db, then
 * journal.db, metrics.db and task_metadata.json, and the history row last. The row is the
 * commit point: until it exists the import is "not done", and every step before it is
 * idempotent (message ids, the journal's import mark, metrics fingerprints), so an import
 * interrupted at any point is simply done again. The caller holds the task's claim.
 */
export function writeImportedTask(deps: { sqlite: SqliteFactory; history: TaskHistory }, task: TaskLayout, taskId: string, parsed: ParsedClineItem, importedAt: number): void {
  const { item } = parsed;
  fs.mkdirSync(task.dir, { recursive: true });

  const messages = MessageStore.open(deps.sqlite, task.messagesDb);
  try {
    messages.importMany(parsed.messages);
  } finally {
    messages.close();
  }

  if (parsed.conversation.length > 0) {
    const journal = JournalStore.open(deps.sqlite, task.journalDb);
    try {
      if (journal.getMeta(JOURNAL_IMPORT_META) !== item.sourceKey) {
        journal.transaction(() => {
          journal.truncateAfter(0);
          // The runtime rebuilds the model conversation from these (runtime/conversation.ts).
          journal.appendMany(parsed.conversation.map((data) => ({ kind: LEGACY_CONVERSATION_KIND, data, time: item.startedAt || importedAt })));
          journal.setMeta(JOURNAL_IMPORT_META, item.sourceKey);
        });
      }
    } finally {
      journal.close();
    }
  }

  if (parsed.requests.length > 0) {
    const metrics = MetricsStore.open(deps.sqlite, task.metricsDb);
    try {
      metrics.recordMany(parsed.requests.map((r) => ({ metrics: r.metrics, fingerprint: metricsFingerprint(r.key) })));
    } finally {
      metrics.close();
    }
  }

  const createdAt = item.startedAt || importedAt;
  new TaskJsonFiles(task).writeMetadata({
    id: taskId,
    workspaceRoot: item.workspaceRoot,
    title: item.title,
    createdAt,
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
    },
    ...parsed.metadata,
  });

  deps.history.put({
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
    sizeBytes: folderSize(task.dir),
    status: parsed.status,
    source: importSource(item.sourceKey),
  });
}
