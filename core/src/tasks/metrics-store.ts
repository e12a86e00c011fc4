import { createHash } from "node:crypto";
import type { Statement } from "better-sqlite3";
import type { SqliteDatabase, SqliteFactory } from "../storage/index.js";
import { dbFileImage, openTaskDb } from "./task-db.js";

/** Usage of one model request. */
export interface RequestMetrics {
  time: number;
  tokensIn: number;
  tokensOut: number;
  cacheReads: number;
  cacheWrites: number;
  cost: number;
  /** JSON with anything else known about the request (model, latency, status). */
  data: string;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS requests (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT NOT NULL UNIQUE,
    time INTEGER NOT NULL,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    cache_reads INTEGER NOT NULL DEFAULT 0,
    cache_writes INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    data TEXT NOT NULL DEFAULT '{}'
  );
`;

export function metricsFingerprint(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * metrics.db: per-request usage rows. Every row has a unique fingerprint, so importing the same
 * legacy line twice (an import retried after an interruption) stores it once.
 */
export class MetricsStore {
  private insert: Statement | undefined;

  private constructor(private readonly db: SqliteDatabase) {}

  static open(sqlite: SqliteFactory, file: string, options: { readonly?: boolean } = {}): MetricsStore {
    return new MetricsStore(openTaskDb(sqlite, file, SCHEMA, 1, options));
  }

  /** Records one request; `fingerprint` defaults to a fresh unique value. Returns false if already present. */
  record(
    m: RequestMetrics,
    fingerprint = metricsFingerprint(`${process.pid}:${Date.now()}:${Math.random()}`),
  ): boolean {
    // Prepared on first use (not at open: a read-only metrics.db may lack the table).
    this.insert ??= this.db.prepare(
      `INSERT OR IGNORE INTO requests (fingerprint, time, tokens_in, tokens_out, cache_reads, cache_writes, cost, data)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    return (
      this.insert.run(fingerprint, m.time, m.tokensIn, m.tokensOut, m.cacheReads, m.cacheWrites, m.cost, m.data)
        .changes > 0
    );
  }

  recordMany(rows: { metrics: RequestMetrics; fingerprint: string }[]): number {
    return this.db.transaction(() => rows.reduce((n, r) => n + (this.record(r.metrics, r.fingerprint) ? 1 : 0), 0))();
  }

  /** Replaces every row with these, in one transaction (an imported task refreshed from its changed source). */
  replaceAll(rows: { metrics: RequestMetrics; fingerprint: string }[]): void {
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM requests").run();
      for (const r of rows) this.record(r.metrics, r.fingerprint);
    })();
  }

  hasFingerprints(fingerprints: string[]): boolean {
    const q = this.db.prepare("SELECT 1 FROM requests WHERE fingerprint = ?");
    return fingerprints.every((f) => q.get(f) !== undefined);
  }

  /** Sums of every request; `costUnknown` counts the requests whose data says no price was known. */
  totals(): Omit<RequestMetrics, "time" | "data"> & { requests: number; costUnknown: number } {
    const r = this.db
      .prepare(
        `SELECT count(*) AS requests, coalesce(sum(tokens_in),0) AS tokensIn, coalesce(sum(tokens_out),0) AS tokensOut,
           coalesce(sum(cache_reads),0) AS cacheReads, coalesce(sum(cache_writes),0) AS cacheWrites, coalesce(sum(cost),0) AS cost,
           coalesce(sum(CASE WHEN json_valid(data) AND json_extract(data, '$.costUnknown') = 1 THEN 1 ELSE 0 END),0) AS costUnknown
         FROM requests`,
      )
      .get() as Omit<RequestMetrics, "time" | "data"> & { requests: number; costUnknown: number };
    return r;
  }

  /**
   * The task's own last request (one recorded with its context window; subagents' are not)
   * whose usage the server reported: its whole size (prompt, cache reads and writes, answer)
   * and the window it was made under.
   */
  lastContext(): { tokens: number; window: number } | undefined {
    const r = this.db
      .prepare(
        `SELECT tokens_in + cache_reads + cache_writes + tokens_out AS tokens, json_extract(data, '$.contextWindow') AS window
         FROM requests WHERE json_valid(data) AND json_extract(data, '$.contextWindow') > 0 AND tokens_in + cache_reads + cache_writes + tokens_out > 0
         ORDER BY seq DESC LIMIT 1`,
      )
      .get() as { tokens: number; window: number } | undefined;
    return r ? { tokens: Number(r.tokens), window: Number(r.window) } : undefined;
  }

  /** This database (opened IN_MEMORY) as the bytes of its file (see dbFileImage). */
  image(): Buffer {
    return dbFileImage(this.db);
  }

  close(): void {
    this.db.close();
  }
}
