import { createHash } from "node:crypto";
import type { Statement } from "better-sqlite3";
import type { SqliteDatabase, SqliteFactory } from "../storage/index.js";
import { dbFileImage, openTaskDb } from "./task-db.js";

/** One committed step of the task runtime. `data` is JSON the runtime defines. */
export interface JournalEntry {
  seq: number;
  kind: string;
  time: number;
  data: string;
  /** Content hash of a large payload stored once in `payloads` ("" when none). */
  payloadId: string;
}

export interface CommandPublication {
  seq: number;
  entrySeq: number;
  command: string;
  data: string;
}

export interface JournalAppend {
  kind: string;
  data: string;
  time?: number;
  payload?: Uint8Array | string;
  publications?: { command: string; data: string }[];
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    time INTEGER NOT NULL,
    data TEXT NOT NULL,
    payload_id TEXT NOT NULL DEFAULT ''
  );
  CREATE TABLE IF NOT EXISTS publications (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_seq INTEGER NOT NULL REFERENCES entries(seq) ON DELETE CASCADE,
    command TEXT NOT NULL,
    data TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS publications_by_entry ON publications(entry_seq);
  CREATE TABLE IF NOT EXISTS payloads (id TEXT PRIMARY KEY, bytes BLOB NOT NULL);
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/**
 * journal.db: the task runtime's commits (entries, the command publications each entry made,
 * and content-addressed payloads). The model conversation is rebuilt by reading the entries
 * back in order. Each append is one transaction, committed (SIGKILL-safe) when it returns.
 */
export class JournalStore {
  /** Prepared on first append (not at open: a read-only journal may lack the tables). */
  private insertEntry: Statement | undefined;
  private insertPublication: Statement | undefined;

  private constructor(private readonly db: SqliteDatabase) {}

  static open(sqlite: SqliteFactory, file: string, options: { readonly?: boolean } = {}): JournalStore {
    return new JournalStore(openTaskDb(sqlite, file, SCHEMA, 1, options));
  }

  /** Appends one entry with its publications and payload atomically; returns its seq. */
  append(entry: JournalAppend): number {
    return this.db.transaction(() => this.appendNow(entry))();
  }

  /**
   * Appends `entry` and removes the entries of `dropKind` after `afterSeq` (scratch the entry
   * makes obsolete) in the same transaction. The seq range keeps the search to the recent rows.
   */
  appendDropping(entry: JournalAppend, dropKind: string, afterSeq: number): number {
    return this.db.transaction(() => {
      this.db.prepare("DELETE FROM entries WHERE seq > ? AND kind = ?").run(afterSeq, dropKind);
      return this.appendNow(entry);
    })();
  }

  appendMany(entries: JournalAppend[]): number[] {
    return this.db.transaction(() => entries.map((e) => this.appendNow(e)))();
  }

  /** Entries with seq greater than `afterSeq`, in commit order. */
  entries(afterSeq = 0): JournalEntry[] {
    return (
      this.db.prepare("SELECT * FROM entries WHERE seq > ? ORDER BY seq").all(afterSeq) as Record<string, unknown>[]
    ).map((r) => ({
      seq: Number(r.seq),
      kind: String(r.kind),
      time: Number(r.time),
      data: String(r.data),
      payloadId: String(r.payload_id),
    }));
  }

  publications(entrySeq?: number): CommandPublication[] {
    const rows = (
      entrySeq === undefined
        ? this.db.prepare("SELECT * FROM publications ORDER BY seq").all()
        : this.db.prepare("SELECT * FROM publications WHERE entry_seq = ? ORDER BY seq").all(entrySeq)
    ) as Record<string, unknown>[];
    return rows.map((r) => ({
      seq: Number(r.seq),
      entrySeq: Number(r.entry_seq),
      command: String(r.command),
      data: String(r.data),
    }));
  }

  payload(id: string): Buffer | undefined {
    const row = this.db.prepare("SELECT bytes FROM payloads WHERE id = ?").get(id) as { bytes: Buffer } | undefined;
    return row?.bytes;
  }

  count(): number {
    return (this.db.prepare("SELECT count(*) AS n FROM entries").get() as { n: number }).n;
  }

  /** Kinds present in the journal (the legacy conversation import checks it holds nothing else). */
  kinds(): string[] {
    return (this.db.prepare("SELECT DISTINCT kind FROM entries").all() as { kind: string }[]).map((r) => r.kind);
  }

  getMeta(key: string): string | undefined {
    return (this.db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string): void {
    this.db
      .prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
      .run(key, value);
  }

  /** Removes every entry after `seq` (and their publications, and payloads nothing refers to any more). */
  truncateAfter(seq: number): number {
    return this.db.transaction(() => {
      const removed = this.db.prepare("DELETE FROM entries WHERE seq > ?").run(seq).changes;
      this.db.prepare("DELETE FROM publications WHERE entry_seq > ?").run(seq);
      this.db.prepare("DELETE FROM payloads WHERE id NOT IN (SELECT payload_id FROM entries)").run();
      return removed;
    })();
  }

  /** Runs `fn` in one transaction (imports that must be all-or-nothing). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /** This database (opened IN_MEMORY) as the bytes of its file (see dbFileImage). */
  image(): Buffer {
    return dbFileImage(this.db);
  }

  close(): void {
    this.db.close();
  }

  private appendNow(entry: JournalAppend): number {
    let payloadId = "";
    if (entry.payload !== undefined) {
      const bytes = typeof entry.payload === "string" ? Buffer.from(entry.payload) : Buffer.from(entry.payload);
      payloadId = createHash("sha256").update(bytes).digest("hex");
      this.db.prepare("INSERT OR IGNORE INTO payloads (id, bytes) VALUES (?, ?)").run(payloadId, bytes);
    }
    this.insertEntry ??= this.db.prepare("INSERT INTO entries (kind, time, data, payload_id) VALUES (?, ?, ?, ?)");
    const seq = Number(
      this.insertEntry.run(entry.kind, entry.time ?? Date.now(), entry.data, payloadId).lastInsertRowid,
    );
    if (entry.publications?.length) {
      this.insertPublication ??= this.db.prepare(
        "INSERT INTO publications (entry_seq, command, data) VALUES (?, ?, ?)",
      );
      for (const p of entry.publications) this.insertPublication.run(seq, p.command, p.data);
    }
    return seq;
  }
}
