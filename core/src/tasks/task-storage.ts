import * as fs from "node:fs";
import type { Logger } from "../logging/logger.js";
import { DiskReserve, type InstanceLayout, type SqliteFactory, moveAsideSync, mkdirPrivate } from "../storage/index.js";
import { TaskDeletionCoordinator } from "./deletion-coordinator.js";
import type { TaskDeletionHook } from "./deletion-hooks.js";
import { indexOrphanFolders } from "./folder-index.js";
import { HistoryWatcher } from "./history-watcher.js";
import { importLegacyHistory } from "./legacy-import.js";
import { assertLooksLikeSqlite, TaskFileDamaged } from "./task-db.js";
import { TaskHistory } from "./task-history.js";
import { TaskOwnership } from "./task-ownership.js";
import { TaskStore } from "./task-store.js";

/** Everything under <documents-root>/tasks/, constructed once by createApp. */
export interface TaskStorage {
  history: TaskHistory;
  watcher: HistoryWatcher;
  ownership: TaskOwnership;
  store: TaskStore;
  deletion: TaskDeletionCoordinator;
  /** Waits for queued history writes; rejects with every failed one. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

function isDamagedDb(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return err instanceof TaskFileDamaged || code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT";
}

/**
 * Opens the task index and runs the start-up recovery, in this order: a damaged
 * taskHistory.db is kept aside and rebuilt from the task folders (never an empty history);
 * the legacy taskHistory.jsonl is imported into a new database; interrupted deletions are
 * finished; tasks left running by a dead sidecar become interrupted.
 */
export async function openTaskStorage(deps: {
  layout: InstanceLayout;
  sqlite: SqliteFactory;
  logger: Logger;
  /** Registered before interrupted deletions are finished, so those reach every owner too. */
  deletionHooks?: TaskDeletionHook[];
}): Promise<TaskStorage> {
  const { layout, sqlite, logger } = deps;
  mkdirPrivate(layout.tasksDir);
  // On a full disk the index cannot open (its `-shm` and WAL need room): the reserve makes it.
  const reserve = new DiskReserve(layout.spaceReserveFile);
  reserve.releaseIfLow();
  let history: TaskHistory;
  let rebuild = false;
  try {
    assertLooksLikeSqlite(layout.taskHistoryDb);
    history = TaskHistory.open(sqlite, layout.taskHistoryDb, logger).history;
  } catch (err) {
    if (!isDamagedDb(err)) throw err;
    const aside = moveAsideSync(layout.taskHistoryDb);
    for (const suffix of ["-wal", "-shm"]) {
      if (fs.existsSync(layout.taskHistoryDb + suffix)) fs.renameSync(layout.taskHistoryDb + suffix, aside + suffix);
    }
    logger.error("taskHistory.db was damaged: kept aside, rebuilding the index from the task folders", {
      keptAside: aside,
    });
    history = TaskHistory.open(sqlite, layout.taskHistoryDb, logger).history;
    rebuild = true;
  }
  let imported = 0;
  try {
    imported = importLegacyHistory(history, layout.legacyTaskHistoryJsonl, logger);
  } catch (err) {
    // Still "pending" in the database: retried on the next start. The index stays usable.
    logger.error("importing the legacy taskHistory.jsonl failed; it will be retried", {
      error: (err as Error).message,
    });
  }
  const ownership = new TaskOwnership(layout, logger);
  const store = new TaskStore(layout, sqlite, history, ownership, logger);
  const deletion = new TaskDeletionCoordinator(layout, history, ownership, logger, reserve);
  for (const hook of deps.deletionHooks ?? []) deletion.registerHook(hook);
  await deletion.resume();
  // Folders without a row: after a rebuilt or imported index, every one gets a row. At every
  // start, so do the folders of tasks whose sidecar was killed while creating them (folder
  // made, row not yet written); not those of a Cline import (`cline-...`), whose missing row
  // means "not imported yet" and which the next import redoes (import/import-committer.ts).
  const indexAll = rebuild || imported > 0;
  indexOrphanFolders(
    layout,
    history,
    logger,
    (id) => ownership.owner(id) !== undefined || (!indexAll && id.startsWith("cline-")),
  );
  store.recoverInterrupted();
  const watcher = new HistoryWatcher(history, logger);
  watcher.start();
  // After the start-up's own writes, off the way of the first calls.
  setImmediate(() => reserve.ensure());
  return {
    history,
    watcher,
    ownership,
    store,
    deletion,
    flush: () => history.flush(),
    async close() {
      watcher.stop();
      ownership.releaseAll();
      await history.close();
    },
  };
}
