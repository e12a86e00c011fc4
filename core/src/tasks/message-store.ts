import type { SqliteDatabase, SqliteFactory } from "../storage/sqlite.js";
import { DlineError } from "../errors.js";
import { openTaskDb } from "./task-db.js";

/** One row of the chat projection; mirrors UiMessage in proto/dline/v1/task.proto. */
export interface StoredUiMessage {
  id: string;
  time: number;
  role: "user" | "assistant" | "tool" | "system" | "unspecified";
  kind: string;
  text: string;
  partial: boolean;
  tool: string;
  detail: string;
  checkpointId: string;
  askId: string;
}

export const UI_MESSAGE_ROLES = ["unspecified", "user", "assistant", "tool", "system"] as const;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    time INTEGER NOT NULL,
    role TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
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

function rowOf(m: StoredUiMessage) {
  return { ...m, partial: m.partial ? 1 : 0 };
}

/**
 * messages.db: the one writer of a task's UI messages.
 *
 * Durability: every `append`/`update` is its own SQLite transaction committed before the call
 * returns. In WAL mode with synchronous=NORMAL a committed transaction survives the process
 * being killed (SIGKILL) at any moment; only an operating-system crash or power loss can lose
 * the last commits (never corrupting the file). `appendMany` commits a batch atomically.
 */
export class MessageStore {
  private constructor(private readonly db: SqliteDatabase) {}

  static open(sqlite: SqliteFactory, file: string, options: { readonly?: boolean } = {}): MessageStore {
    return new MessageStore(openTaskDb(sqlite, file, SCHEMA, 1, options));
  }

  append(message: StoredUiMessage): void {
    this.insert().run(rowOf(message));
  }

  appendMany(messages: StoredUiMessage[]): void {
    const insert = this.insert();
    this.db.transaction(() => {
      for (const m of messages) insert.run(rowOf(m));
    })();
  }

  /** Replaces a message's content (a partial message growing, then finalised). */
  update(message: StoredUiMessage): void {
    const info = this.db
      .prepare(
        `UPDATE messages SET time = @time, role = @role, kind = @kind, text = @text, partial = @partial, tool = @tool,
           detail = @detail, checkpoint_id = @checkpointId, ask_id = @askId WHERE id = @id`,
      )
      .run(rowOf(message));
    if (info.changes === 0) throw new DlineError("not_found", `Message ${message.id} does not exist.`);
  }

  list(): StoredUiMessage[] {
    return (this.db.prepare("SELECT * FROM messages ORDER BY seq").all() as Record<string, unknown>[]).map((r) => ({
      id: String(r.id),
      time: Number(r.time),
      role: (UI_MESSAGE_ROLES as readonly string[]).includes(String(r.role)) ? (r.role as StoredUiMessage["role"]) : "unspecified",
      kind: String(r.kind),
      text: String(r.text),
      partial: r.partial === 1,
      tool: String(r.tool),
      detail: String(r.detail),
      checkpointId: String(r.checkpoint_id),
      askId: String(r.ask_id),
    }));
  }

  count(): number {
    return (this.db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
  }

  has(id: string): boolean {
    return this.db.prepare("SELECT 1 FROM messages WHERE id = ?").get(id) !== undefined;
  }

  /** Removes every message after `messageId` (a restore to that point); returns how many went. */
  truncateAfter(messageId: string): number {
    const row = this.db.prepare("SELECT seq FROM messages WHERE id = ?").get(messageId) as { seq: number } | undefined;
    if (!row) throw new DlineError("not_found", `Message ${messageId} does not exist.`);
    return this.db.prepare("DELETE FROM messages WHERE seq > ?").run(row.seq).changes;
  }

  close(): void {
    this.db.close();
  }

  private insert() {
    return this.db.prepare(
      `INSERT INTO messages (id, time, role, kind, text, partial, tool, detail, checkpoint_id, ask_id)
       VALUES (@id, @time, @role, @kind, @text, @partial, @tool, @detail, @checkpointId, @askId)`,
    );
  }
}
