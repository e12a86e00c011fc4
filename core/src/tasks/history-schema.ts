import type { SqliteDatabase } from "../storage/index.js";
import { DlineError } from "../errors.js";

/**
 * The schema of tasks/taskHistory.db and its migrations. `user_version` holds the schema
 * version; each migration runs in one immediate transaction, so two sidecars starting at once
 * never both apply it, and an interrupted one is rolled back and applied again.
 */
export const HISTORY_SCHEMA_VERSION = 2;

const migrations: { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE IF NOT EXISTS tasks (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        workspace_root TEXT NOT NULL DEFAULT '',
        title TEXT NOT NULL DEFAULT '',
        task_text TEXT NOT NULL DEFAULT '',
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        favorite INTEGER NOT NULL DEFAULT 0,
        tokens_in INTEGER NOT NULL DEFAULT 0,
        tokens_out INTEGER NOT NULL DEFAULT 0,
        cache_reads INTEGER NOT NULL DEFAULT 0,
        cache_writes INTEGER NOT NULL DEFAULT 0,
        cost REAL NOT NULL DEFAULT 0,
        size_bytes INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'completed',
        source TEXT NOT NULL DEFAULT 'dline',
        damaged_reason TEXT NOT NULL DEFAULT ''
      );
      CREATE INDEX IF NOT EXISTS tasks_by_created ON tasks(created_at, id);
      CREATE INDEX IF NOT EXISTS tasks_by_workspace ON tasks(workspace_root, created_at, id);
      CREATE INDEX IF NOT EXISTS tasks_by_cost ON tasks(cost, id);
      CREATE INDEX IF NOT EXISTS tasks_by_favorite ON tasks(favorite, created_at, id);
      CREATE INDEX IF NOT EXISTS tasks_by_status ON tasks(status);
      CREATE VIRTUAL TABLE IF NOT EXISTS tasks_fts USING fts5(
        title, task_text, content='tasks', content_rowid='seq', tokenize='unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER IF NOT EXISTS tasks_fts_insert AFTER INSERT ON tasks BEGIN
        INSERT INTO tasks_fts(rowid, title, task_text) VALUES (new.seq, new.title, new.task_text);
      END;
      CREATE TRIGGER IF NOT EXISTS tasks_fts_delete AFTER DELETE ON tasks BEGIN
        INSERT INTO tasks_fts(tasks_fts, rowid, title, task_text) VALUES ('delete', old.seq, old.title, old.task_text);
      END;
      CREATE TRIGGER IF NOT EXISTS tasks_fts_update AFTER UPDATE OF title, task_text ON tasks BEGIN
        INSERT INTO tasks_fts(tasks_fts, rowid, title, task_text) VALUES ('delete', old.seq, old.title, old.task_text);
        INSERT INTO tasks_fts(rowid, title, task_text) VALUES (new.seq, new.title, new.task_text);
      END;
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      -- Created with the database: the legacy taskHistory.jsonl is imported only into a new database.
      INSERT OR IGNORE INTO meta (key, value) VALUES ('legacy_history_import', 'pending');
      -- Every change, in order: watchers in any sidecar read what changed since their last seq.
      CREATE TABLE IF NOT EXISTS changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('changed', 'removed')),
        at INTEGER NOT NULL
      );
    `,
  },
  {
    // Whether part of a task's requests had no known price (its cost then counts the others only).
    version: 2,
    sql: "ALTER TABLE tasks ADD COLUMN cost_unknown INTEGER NOT NULL DEFAULT 0;",
  },
];

export function migrateHistory(db: SqliteDatabase): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > HISTORY_SCHEMA_VERSION) {
    throw new DlineError(
      "failed_precondition",
      `taskHistory.db has schema version ${current}, newer than this Dline (${HISTORY_SCHEMA_VERSION}); update Dline.`,
    );
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      // Re-read inside the write lock: another sidecar may have migrated meanwhile.
      const now = db.pragma("user_version", { simple: true }) as number;
      if (now >= migration.version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
}
