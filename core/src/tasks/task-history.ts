import * as fs from "node:fs";
import * as path from "node:path";
import type Database from "better-sqlite3";
import type { Logger } from "../logging/logger.js";
import type { SqliteDatabase, SqliteFactory } from "../storage/index.js";
import { DlineError } from "../errors.js";
import { migrateHistory } from "./history-schema.js";
import { buildListQuery, encodePageToken, type HistoryListOptions } from "./history-query.js";
import { HistorySearch, type SearchPlan } from "./history-search.js";
import { withBusyRetry } from "./sqlite-retry.js";
import { newTaskRecord, recordFromRow, type TaskRecord, type TaskRecordInit } from "./task-record.js";

export interface HistoryChange {
  seq: number;
  taskId: string;
  kind: "changed" | "removed";
}

export interface HistoryPage {
  tasks: TaskRecord[];
  nextPageToken: string;
}

/** Columns a listing reads (task_text stays in the database: it is only searched). */
const LIST_COLUMNS =
  "t.id, t.workspace_root, t.title, t.created_at, t.updated_at, t.favorite, t.tokens_in, t.tokens_out, " +
  "t.cache_reads, t.cache_writes, t.cost, t.cost_unknown, t.size_bytes, t.status, t.source, t.damaged_reason";

/** How many change rows are kept for watchers; older ones are pruned (a watcher that fell behind reloads). */
const CHANGES_KEPT = 10_000;

type Patch = Partial<Omit<TaskRecord, "id">>;
const columnOf: Record<keyof Patch, string> = {
  workspaceRoot: "workspace_root",
  title: "title",
  taskText: "task_text",
  createdAt: "created_at",
  updatedAt: "updated_at",
  favorite: "favorite",
  tokensIn: "tokens_in",
  tokensOut: "tokens_out",
  cacheReads: "cache_reads",
  cacheWrites: "cache_writes",
  cost: "cost",
  costUnknown: "cost_unknown",
  sizeBytes: "size_bytes",
  status: "status",
  source: "source",
  damagedReason: "damaged_reason",
};

function sqlValue(value: unknown): unknown {
  return typeof value === "boolean" ? (value ? 1 : 0) : value;
}

/**
 * The task index, tasks/taskHistory.db: the one writer of that file in this process. Several
 * sidecars share it through SQLite WAL; every write also appends to `changes`, which the
 * HistoryWatcher of each sidecar reads to tell its subscribers what changed.
 *
 * Metadata writes (`upsert`, `update`) are queued and applied in order off the caller's path.
 * Each returns a promise of its own outcome, and `flush()` waits for the queue and rejects with
 * every write that failed since the previous flush, so no failure goes unreported.
 */
export class TaskHistory {
  private readonly db: SqliteDatabase;
  private queue: (() => void)[] = [];
  private draining: Promise<void> | undefined;
  private failures: Error[] = [];
  private closed = false;
  private readonly search: HistorySearch;

  private constructor(
    db: SqliteDatabase,
    readonly file: string,
    private readonly logger: Logger,
    searchMatchCap?: number,
  ) {
    this.db = db;
    this.search = new HistorySearch((sql) => this.stmt(sql), LIST_COLUMNS, searchMatchCap);
  }

  /**
   * Opens (creating and migrating) the index. `created` says the file did not exist before.
   * `searchMatchCap`: how many text matches a search reads before it walks the sort index instead.
   */
  static open(
    sqlite: SqliteFactory,
    file: string,
    logger: Logger,
    options: { searchMatchCap?: number } = {},
  ): { history: TaskHistory; created: boolean } {
    const existed = fs.existsSync(file);
    // A busy database fails the migration, and the open is tried again.
    const db = withBusyRetry(() => sqlite.open(file, { firstWrites: migrateHistory }));
    return { history: new TaskHistory(db, file, logger, options.searchMatchCap), created: !existed };
  }

  // ---- reads

  get(id: string): TaskRecord | undefined {
    const row = this.stmt(`SELECT ${LIST_COLUMNS}, t.task_text FROM tasks t WHERE t.id = ?`).get(id);
    return row ? recordFromRow(row as Record<string, unknown>) : undefined;
  }

  /**
   * The stored workspace roots that name the same folder as `root`: the same path once resolved
   * (a trailing slash), or the same real location (one opened through a link).
   */
  private spellingsOf(root: string): string[] {
    const resolved = path.resolve(root);
    const real = realpathOrUndefined(resolved);
    // Each distinct root by one seek in tasks_by_workspace (a DISTINCT would read every row).
    const distinctRoots = `WITH RECURSIVE roots(r) AS (
        SELECT min(workspace_root) FROM tasks
        UNION ALL
        SELECT (SELECT min(workspace_root) FROM tasks WHERE workspace_root > roots.r) FROM roots WHERE roots.r IS NOT NULL
      ) SELECT r FROM roots WHERE r IS NOT NULL`;
    const stored = (this.stmt(distinctRoots).all() as { r: unknown }[])
      .map((row) => row.r)
      .filter((r): r is string => typeof r === "string" && r !== "");
    const same = stored.filter(
      (r) => r === resolved || (path.isAbsolute(r) && real !== undefined && realpathOrUndefined(r) === real),
    );
    return [...new Set([resolved, ...same])];
  }

  /** The tasks whose row says they run or wait in this workspace (however its folder is spelled). */
  activeIn(workspaceRoot: string): { id: string; title: string }[] {
    const roots = this.spellingsOf(workspaceRoot);
    const sql = `SELECT id, title FROM tasks WHERE status IN ('running', 'waiting') AND workspace_root IN (${roots
      .map(() => "?")
      .join(", ")})`;
    return (this.stmt(sql).all(...roots) as { id: unknown; title: unknown }[]).map((r) => ({
      id: String(r.id),
      title: typeof r.title === "string" ? r.title : "",
    }));
  }

  count(): number {
    return (this.stmt("SELECT count(*) AS n FROM tasks").get() as { n: number }).n;
  }

  /** One page; a text search is planned by HistorySearch (`plan` forces one plan: same rows, other speed). */
  list(given: HistoryListOptions = {}, plan: SearchPlan = "auto"): HistoryPage {
    const options = given.workspaceRoot
      ? { ...given, workspaceRootSpellings: this.spellingsOf(given.workspaceRoot) }
      : given;
    const q = buildListQuery(options, LIST_COLUMNS);
    // A search may read in several statements: one transaction gives them one snapshot.
    const rows =
      (options.query ? this.db.transaction(() => this.search.rows(options, q, plan))() : undefined) ??
      (this.stmt(q.sql).all(...q.params) as Record<string, unknown>[]);
    const more = rows.length > q.pageSize;
    const page = rows.slice(0, q.pageSize);
    const tasks = page.map(recordFromRow);
    let nextPageToken = "";
    const last = page.at(-1);
    if (more && last) {
      const key = Number(last[q.sortKeyColumn === "cost" ? "cost" : "created_at"]);
      nextPageToken = encodePageToken(options, q.sort, Number.isFinite(key) ? key : 0, String(last.id));
    }
    return { tasks, nextPageToken };
  }

  /** Ids (with workspace and favourite flag) of every task, for "delete everything". */
  allIds(): { id: string; workspaceRoot: string; favorite: boolean }[] {
    return (this.stmt("SELECT id, workspace_root, favorite FROM tasks").all() as Record<string, unknown>[]).map(
      (r) => ({
        id: String(r.id),
        workspaceRoot: typeof r.workspace_root === "string" ? r.workspace_root : "",
        favorite: r.favorite === 1,
      }),
    );
  }

  idsWithStatus(statuses: string[]): string[] {
    const marks = statuses.map(() => "?").join(",");
    return (this.stmt(`SELECT id FROM tasks WHERE status IN (${marks})`).all(...statuses) as { id: string }[]).map(
      (r) => String(r.id),
    );
  }

  /** Changes after `afterSeq`, and the oldest seq still kept (to detect a watcher that fell behind). */
  changesSince(afterSeq: number, limit = 1000): { changes: HistoryChange[]; oldestKept: number; latest: number } {
    const bounds = this.stmt("SELECT min(seq) AS lo, max(seq) AS hi FROM changes").get() as {
      lo: number | null;
      hi: number | null;
    };
    const changes = (
      this.stmt("SELECT seq, task_id, kind FROM changes WHERE seq > ? ORDER BY seq LIMIT ?").all(afterSeq, limit) as {
        seq: number;
        task_id: string;
        kind: "changed" | "removed";
      }[]
    ).map((r) => ({ seq: r.seq, taskId: r.task_id, kind: r.kind }));
    return { changes, oldestKept: bounds.lo ?? 0, latest: bounds.hi ?? 0 };
  }

  latestChangeSeq(): number {
    return (this.stmt("SELECT max(seq) AS hi FROM changes").get() as { hi: number | null }).hi ?? 0;
  }

  // ---- immediate writes (the caller waits for the answer)

  /** Inserts or replaces a task's row now (imports, tests, the runtime creating a task). */
  put(init: TaskRecordInit): TaskRecord {
    const record = newTaskRecord(init);
    this.write(() => this.putNow(record));
    return record;
  }

  /** Many rows in one transaction (legacy import, benchmarks). */
  putMany(inits: TaskRecordInit[]): void {
    this.write(() => {
      for (const init of inits) this.putNow(newTaskRecord(init));
    });
  }

  /** Rows for the tasks that have none yet, in one transaction; the ids that were added. */
  putManyIfAbsent(inits: TaskRecordInit[]): string[] {
    return this.write(() => {
      const exists = this.stmt("SELECT 1 FROM tasks WHERE id = ?");
      const added: string[] = [];
      for (const init of inits) {
        if (exists.get(init.id)) continue;
        this.putNow(newTaskRecord(init));
        added.push(init.id);
      }
      return added;
    });
  }

  /** Every task id in the index (start-up checks against the task folders). */
  ids(): Set<string> {
    return new Set(this.stmt("SELECT id FROM tasks").pluck().all() as string[]);
  }

  getMeta(key: string): string | undefined {
    return (this.stmt("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined)?.value;
  }

  /** Inserts rows that are not there yet and sets a meta key, in one transaction (an import that is all or nothing). */
  importMany(inits: TaskRecordInit[], metaKey: string, metaValue: string): number {
    return this.write(() => {
      let added = 0;
      const exists = this.stmt("SELECT 1 FROM tasks WHERE id = ?");
      for (const init of inits) {
        if (exists.get(init.id)) continue;
        this.putNow(newTaskRecord(init));
        added++;
      }
      this.stmt(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      ).run(metaKey, metaValue);
      return added;
    });
  }

  /** Sets the favourite flag; false when there is no such task. */
  setFavorite(id: string, favorite: boolean): boolean {
    return this.write(() => this.updateNow(id, { favorite, updatedAt: Date.now() }));
  }

  /** Applies a patch now; false when there is no such task. */
  updateNow(id: string, patch: Patch): boolean {
    const entries = Object.entries(patch).filter(([k, v]) => v !== undefined && k in columnOf) as [
      keyof Patch,
      unknown,
    ][];
    if (entries.length === 0) return this.get(id) !== undefined;
    return this.write(() => {
      const sets = entries.map(([k]) => `${columnOf[k]} = ?`).join(", ");
      const info = this.stmt(`UPDATE tasks SET ${sets} WHERE id = ?`).run(...entries.map(([, v]) => sqlValue(v)), id);
      if (info.changes > 0) this.noteChange(id, "changed");
      return info.changes > 0;
    });
  }

  /**
   * Applies a patch before returning, after the writes queued before it: for what another sidecar
   * must read as soon as this one announces it (a task's status). False when the row is missing.
   */
  updateAfterQueued(id: string, patch: Patch): boolean {
    this.applyQueued();
    return this.updateNow(id, patch);
  }

  /** Removes rows (the deletion coordinator's step); returns the ids that existed. */
  remove(ids: string[]): string[] {
    return this.write(() => {
      const removed: string[] = [];
      const del = this.stmt("DELETE FROM tasks WHERE id = ?");
      for (const id of ids) {
        if (del.run(id).changes === 0) continue;
        removed.push(id);
        this.noteChange(id, "removed");
      }
      return removed;
    });
  }

  // ---- queued metadata writes

  /** Queues an insert-or-replace; resolves when applied, rejects with the write's error. */
  upsert(init: TaskRecordInit): Promise<void> {
    return this.enqueue(() => {
      this.write(() => this.putNow(newTaskRecord(init)));
    });
  }

  /** Queues a patch of an existing row (usage, title, status...). A missing row is an error. */
  update(id: string, patch: Patch): Promise<void> {
    return this.enqueue(() => {
      if (!this.updateNow(id, patch)) throw new DlineError("not_found", `Task ${id} is not in the history.`);
    });
  }

  /**
   * Waits until every queued write settled. Rejects with an AggregateError holding every write
   * that failed since the previous flush (each failure is reported once, here, even if its own
   * promise was also observed).
   */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
    const failures = this.failures;
    this.failures = [];
    if (failures.length > 0) {
      throw new AggregateError(
        failures,
        `${failures.length} task history write(s) failed: ${failures.map((f) => f.message).join("; ")}`,
      );
    }
  }

  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      if (!this.closed) {
        this.closed = true;
        this.db.close();
      }
    }
  }

  // ---- internals

  private enqueue(op: () => void): Promise<void> {
    if (this.closed) return Promise.reject(new DlineError("unavailable", "The task history is closed."));
    return new Promise<void>((resolve, reject) => {
      this.queue.push(() => {
        try {
          op();
          resolve();
        } catch (err) {
          const error = err instanceof Error ? err : new Error(String(err));
          this.failures.push(error);
          this.logger.warn("task history write failed", { error: error.message });
          reject(error);
        }
      });
      if (!this.draining) this.draining = this.drain();
    });
  }

  private async drain(): Promise<void> {
    // Let the caller's synchronous work finish first: metadata writes never block a turn.
    await new Promise<void>((r) => setImmediate(r));
    this.applyQueued();
    this.draining = undefined;
  }

  private applyQueued(): void {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      for (const op of batch) op();
    }
  }

  /** Prepared statements by SQL text (a handful of shapes: the list filters combine in few ways). */
  private readonly statements = new Map<string, Database.Statement<unknown[]>>();
  private stmt(sql: string): Database.Statement<unknown[]> {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      if (this.statements.size < 200) this.statements.set(sql, s);
    }
    return s;
  }

  private write<T>(fn: () => T): T {
    if (this.closed) throw new DlineError("unavailable", "The task history is closed.");
    return withBusyRetry(() => this.db.transaction(fn).immediate());
  }

  private putNow(r: TaskRecord): void {
    this.stmt(
      `INSERT INTO tasks (id, workspace_root, title, task_text, created_at, updated_at, favorite, tokens_in, tokens_out,
         cache_reads, cache_writes, cost, cost_unknown, size_bytes, status, source, damaged_reason)
       VALUES (@id, @workspaceRoot, @title, @taskText, @createdAt, @updatedAt, @favorite, @tokensIn, @tokensOut,
         @cacheReads, @cacheWrites, @cost, @costUnknown, @sizeBytes, @status, @source, @damagedReason)
       ON CONFLICT(id) DO UPDATE SET workspace_root = excluded.workspace_root, title = excluded.title,
         task_text = excluded.task_text, created_at = excluded.created_at, updated_at = excluded.updated_at,
         favorite = excluded.favorite, tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out,
         cache_reads = excluded.cache_reads, cache_writes = excluded.cache_writes, cost = excluded.cost, cost_unknown = excluded.cost_unknown,
         size_bytes = excluded.size_bytes, status = excluded.status, source = excluded.source,
         damaged_reason = excluded.damaged_reason`,
    ).run({ ...r, favorite: r.favorite ? 1 : 0, costUnknown: r.costUnknown ? 1 : 0 });
    this.noteChange(r.id, "changed");
  }

  private noteChange(taskId: string, kind: "changed" | "removed"): void {
    const info = this.stmt("INSERT INTO changes (task_id, kind, at) VALUES (?, ?, ?)").run(taskId, kind, Date.now());
    const seq = Number(info.lastInsertRowid);
    if (seq % 500 === 0) this.stmt("DELETE FROM changes WHERE seq <= ?").run(seq - CHANGES_KEPT);
  }
}

function realpathOrUndefined(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}
