import type { SqliteDatabase, SqliteFactory } from "../storage/index.js";
import { DlineError } from "../errors.js";
import { dbFileImage, openTaskDb } from "./task-db.js";

/** One row of the chat projection; mirrors UiMessage in proto/dline/v1/task.proto. */
export interface StoredUiMessage {
  id: string;
  time: number;
  role: "user" | "assistant" | "tool" | "system" | "unspecified";
  kind: string;
  text: string;
  partial: boolean;
  /** An answer stopped midway (a Cancel, a stopping sidecar): its text ends where the stream stopped. */
  cutOff?: boolean;
  tool: string;
  detail: string;
  checkpointId: string;
  askId: string;
}

export const UI_MESSAGE_ROLES = ["unspecified", "user", "assistant", "tool", "system"] as const;

const SCHEMA = `
  -- seq orders messages; no AUTOINCREMENT (it costs a second page write per append), so a seq
  -- freed by truncateAfter may be used again: nothing outside this file refers to seq.
  CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    time INTEGER NOT NULL,
    role TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    -- 0: complete; 1: still streaming; 2: cut off (an answer stopped midway, kept as it was).
    partial INTEGER NOT NULL DEFAULT 0,
    tool TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL DEFAULT '',
    ask_id TEXT NOT NULL DEFAULT ''
  );
`;

export function uiMessage(init: Partial<StoredUiMessage> & { id: string }): StoredUiMessage {
  return {
    time: Date.now(),
    role: "assistant",
    kind: "text",
    text: "",
    partial: false,
    tool: "",
    detail: "",
    checkpointId: "",
    askId: "",
    ...init,
  };
}

/**
 * No stored message may be larger than an answer can carry (GetTask and Subscribe would fail
 * for the task for good): text past this is cut with a note, and a detail past it (JSON of a
 * tool's input or output) is replaced by a JSON note of its size. The writers bound what they
 * write far below this; this is the store's own guarantee.
 */
export const MAX_STORED_FIELD_CHARS = 1024 * 1024;

function boundedText(text: string): string {
  return text.length <= MAX_STORED_FIELD_CHARS
    ? text
    : `${text.slice(0, MAX_STORED_FIELD_CHARS)}\n\n[Cut: the text was ${text.length} characters long.]`;
}

function boundedDetail(detail: string): string {
  return detail.length <= MAX_STORED_FIELD_CHARS ? detail : JSON.stringify({ truncated: true, chars: detail.length });
}

/** The `partial` column: whether the message still streams, or was cut off (see SCHEMA). */
function partialColumn(m: StoredUiMessage): number {
  return m.partial ? 1 : m.cutOff ? 2 : 0;
}

function rowOf(m: StoredUiMessage) {
  return { ...m, text: boundedText(m.text), detail: boundedDetail(m.detail), partial: partialColumn(m) };
}

/** A buffered append is committed at most this long after the call (or sooner, see MAX_BUFFERED). */
export const MESSAGE_FLUSH_INTERVAL_MS = 20;
/** A buffer of this many appends is committed at once, without waiting for the interval. */
export const MAX_BUFFERED_MESSAGES = 256;

/**
 * messages.db: the one writer of a task's UI messages.
 *
 * Durability contract (WAL, synchronous=NORMAL: a committed transaction survives the process
 * being killed at any moment; an OS crash or power loss may lose the last commits, never
 * corrupting the file):
 * - `append(m, { durable: true })` commits before it returns.
 * - `append(m)` is group-committed: durable within MESSAGE_FLUSH_INTERVAL_MS (20 ms) of the call,
 *   or at once when MAX_BUFFERED_MESSAGES are waiting. `onCommitted` listeners learn which ids
 *   became durable (that is when a message counts as acknowledged), and every read, update,
 *   truncation, `flush()` and `close()` commits the buffer first. A commit that failed in the
 *   background is thrown by the next `flush()`/`close()`.
 */
export class MessageStore {
  private readonly insertStatement;
  private buffer: StoredUiMessage[] = [];
  private timer: NodeJS.Timeout | undefined;
  private backgroundError: Error | undefined;
  private readonly committedListeners = new Set<(ids: string[]) => void>();

  private constructor(private readonly db: SqliteDatabase) {
    this.insertStatement = db.prepare(
      "INSERT INTO messages (id, time, role, kind, text, partial, tool, detail, checkpoint_id, ask_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
  }

  /** Positional binding: measurably cheaper than named parameters on the append path. */
  private insertRow(m: StoredUiMessage): void {
    this.insertStatement.run(
      m.id,
      m.time,
      m.role,
      m.kind,
      boundedText(m.text),
      partialColumn(m),
      m.tool,
      boundedDetail(m.detail),
      m.checkpointId,
      m.askId,
    );
  }

  static open(sqlite: SqliteFactory, file: string, options: { readonly?: boolean } = {}): MessageStore {
    return new MessageStore(openTaskDb(sqlite, file, SCHEMA, 1, options));
  }

  append(message: StoredUiMessage, options: { durable?: boolean } = {}): void {
    if (options.durable) {
      this.commitBuffer();
      this.insertRow(message);
      this.emitCommitted([message.id]);
      return;
    }
    this.buffer.push(message);
    if (this.buffer.length >= MAX_BUFFERED_MESSAGES) this.commitBuffer();
    else this.timer ??= setTimeout(() => this.backgroundCommit(), MESSAGE_FLUSH_INTERVAL_MS);
  }

  /** Called with the ids of every commit, in order (buffered and durable appends alike). */
  onCommitted(listener: (ids: string[]) => void): () => void {
    this.committedListeners.add(listener);
    return () => this.committedListeners.delete(listener);
  }

  /** Commits buffered appends now; throws a background commit's failure once. */
  flush(): void {
    this.commitBuffer();
    const err = this.backgroundError;
    this.backgroundError = undefined;
    if (err) throw err;
  }

  appendMany(messages: StoredUiMessage[]): void {
    this.commitBuffer();
    this.db.transaction(() => {
      for (const m of messages) this.insertRow(m);
    })();
    this.emitCommitted(messages.map((m) => m.id));
  }

  /** Inserts messages whose id is not stored yet, in one transaction (retried imports add nothing twice). */
  importMany(messages: StoredUiMessage[]): void {
    this.commitBuffer();
    const insert = this.db.prepare(
      "INSERT OR IGNORE INTO messages (id, time, role, kind, text, partial, tool, detail, checkpoint_id, ask_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.db
      .transaction(() => {
        for (const m of messages)
          insert.run(m.id, m.time, m.role, m.kind, m.text, partialColumn(m), m.tool, m.detail, m.checkpointId, m.askId);
      })
      .immediate();
  }

  /** Replaces every message with these, in one transaction (an imported task refreshed from its changed source). */
  replaceAll(messages: StoredUiMessage[]): void {
    this.commitBuffer();
    this.db
      .transaction(() => {
        this.db.prepare("DELETE FROM messages").run();
        for (const m of messages) this.insertRow(m);
      })
      .immediate();
    this.emitCommitted(messages.map((m) => m.id));
  }

  /** How many of these ids are stored (an import reads its rows back before renaming its source). */
  countIds(ids: string[]): number {
    this.commitBuffer();
    const q = this.db.prepare("SELECT 1 FROM messages WHERE id = ?");
    return ids.reduce((n, id) => n + (q.get(id) ? 1 : 0), 0);
  }

  /** Replaces a message's content (a partial message growing, then finalised). */
  update(message: StoredUiMessage): void {
    this.commitBuffer();
    const info = this.db
      .prepare(
        `UPDATE messages SET time = @time, role = @role, kind = @kind, text = @text, partial = @partial, tool = @tool,
           detail = @detail, checkpoint_id = @checkpointId, ask_id = @askId WHERE id = @id`,
      )
      .run(rowOf(message));
    if (info.changes === 0) {
      // A row whose buffered append failed in the background (a full disk): that failure is the cause.
      const failed = this.backgroundError;
      this.backgroundError = undefined;
      throw failed ?? new DlineError("not_found", `Message ${message.id} does not exist.`);
    }
  }

  /** The ids of the messages, without reading their texts (which checkpoints are still offered). */
  ids(): Set<string> {
    this.commitBuffer();
    return new Set(this.db.prepare("SELECT id FROM messages").pluck().all() as string[]);
  }

  list(): StoredUiMessage[] {
    this.commitBuffer();
    // Rows as arrays (half the cost of row objects for a long task), in a fixed column order.
    const rows = this.db
      .prepare(
        "SELECT id, time, role, kind, text, partial, tool, detail, checkpoint_id, ask_id FROM messages ORDER BY seq",
      )
      .raw()
      .all() as unknown[][];
    const out = new Array<StoredUiMessage>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      out[i] = {
        id: String(r[0]),
        time: Number(r[1]),
        role: (UI_MESSAGE_ROLES as readonly string[]).includes(r[2] as string)
          ? (r[2] as StoredUiMessage["role"])
          : "unspecified",
        kind: String(r[3]),
        text: String(r[4]),
        partial: r[5] === 1,
        cutOff: r[5] === 2,
        tool: String(r[6]),
        detail: String(r[7]),
        checkpointId: String(r[8]),
        askId: String(r[9]),
      };
    }
    return out;
  }

  count(): number {
    this.commitBuffer();
    return (this.db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
  }

  has(id: string): boolean {
    this.commitBuffer();
    return this.db.prepare("SELECT 1 FROM messages WHERE id = ?").get(id) !== undefined;
  }

  /** Removes every message (a restore to before the first one); returns how many went. */
  clear(): number {
    return this.db.prepare("DELETE FROM messages").run().changes;
  }

  /** Removes every message after `messageId` (a restore to that point); returns how many went. */
  truncateAfter(messageId: string): number {
    this.commitBuffer();
    const row = this.db.prepare("SELECT seq FROM messages WHERE id = ?").get(messageId) as { seq: number } | undefined;
    if (!row) throw new DlineError("not_found", `Message ${messageId} does not exist.`);
    return this.db.prepare("DELETE FROM messages WHERE seq > ?").run(row.seq).changes;
  }

  /** This database (opened IN_MEMORY) as the bytes of its file (see dbFileImage). */
  image(): Buffer {
    this.flush();
    return dbFileImage(this.db);
  }

  close(): void {
    try {
      this.flush();
    } finally {
      clearTimeout(this.timer);
      this.db.close();
    }
  }

  /**
   * Commits the buffer in one transaction. If that fails (one bad row, e.g. a duplicate id),
   * rows are committed one by one so that only the bad ones fail; the first failure is thrown.
   */
  private commitBuffer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    try {
      this.db.transaction(() => {
        for (const m of batch) this.insertRow(m);
      })();
      this.emitCommitted(batch.map((m) => m.id));
      return;
    } catch {
      // fall through: isolate the failing rows
    }
    let first: Error | undefined;
    const ok: string[] = [];
    for (const m of batch) {
      try {
        this.insertRow(m);
        ok.push(m.id);
      } catch (err) {
        first ??= err as Error;
      }
    }
    if (ok.length) this.emitCommitted(ok);
    if (first) throw first;
  }

  private backgroundCommit(): void {
    this.timer = undefined;
    try {
      this.commitBuffer();
    } catch (err) {
      this.backgroundError ??= err as Error;
    }
  }

  private emitCommitted(ids: string[]): void {
    for (const listener of this.committedListeners) listener(ids);
  }
}
