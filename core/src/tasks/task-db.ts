import * as fs from "node:fs";
import * as path from "node:path";
import type { SqliteDatabase, SqliteFactory } from "../storage/index.js";
import { DlineError } from "../errors.js";
import { withBusyRetry } from "./sqlite-retry.js";

/** Thrown when a task file cannot be read: the task is listed as damaged with `reason`. */
export class TaskFileDamaged extends DlineError {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super("data_loss", `${path.basename(file)} ${reason}; the file was kept in place.`);
  }
}

const SQLITE_MAGIC = "SQLite format 3\0";

/** Opens a database in memory (an import builds a task's database there and writes its `dbFileImage`). */
export const IN_MEMORY = ":memory:";

/**
 * An in-memory database as the bytes of its file, marked WAL (header bytes 18-19) as
 * SqliteFactory leaves every database it opened, so the first open writes nothing. Whoever
 * writes the bytes replaces the whole file, and removes any -wal/-shm beside it first (they
 * belong to the replaced content).
 */
export function dbFileImage(db: SqliteDatabase): Buffer {
  const image = db.serialize();
  image[18] = 2;
  image[19] = 2;
  return image;
}

/** A file that exists and does not start with SQLite's header is not a database (it may be empty: new). */
export function assertLooksLikeSqlite(file: string): void {
  let fd: number;
  try {
    fd = fs.openSync(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  try {
    const header = Buffer.alloc(16);
    const n = fs.readSync(fd, header, 0, 16, 0);
    if (n > 0 && header.toString("latin1", 0, n) !== SQLITE_MAGIC.slice(0, n)) {
      throw new TaskFileDamaged(file, "is not a SQLite database");
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Opens one per-task database with its schema (versioned with user_version). A file that is
 * not SQLite, or that SQLite finds corrupt, raises TaskFileDamaged; nothing is replaced.
 */
export function openTaskDb(
  sqlite: SqliteFactory,
  file: string,
  schema: string,
  version: number,
  options: { readonly?: boolean } = {},
): SqliteDatabase {
  if (file !== IN_MEMORY) {
    assertLooksLikeSqlite(file);
    if (options.readonly && !fs.existsSync(file)) {
      throw new DlineError("not_found", `${path.basename(file)} does not exist.`);
    }
    // The folder is never made here (its task's creator makes it): a reader or a late writer
    // opening a task deleted meanwhile must fail, not bring its folder back as a "damaged" task.
    if (!options.readonly && !fs.existsSync(path.dirname(file))) {
      throw new DlineError("not_found", `The folder of ${path.basename(file)} is gone: its task was deleted.`);
    }
  }
  let db: SqliteDatabase | undefined;
  try {
    db = withBusyRetry(() =>
      sqlite.open(file, {
        readonly: options.readonly,
        firstWrites: (opened) => migrateTaskDb(opened, file, schema, version, options.readonly ?? false),
      }),
    );
    return db;
  } catch (err) {
    db?.close();
    const code = (err as { code?: unknown }).code;
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
      throw new TaskFileDamaged(file, code === "SQLITE_NOTADB" ? "is not a SQLite database" : "is corrupt");
    }
    throw err;
  }
}

/** Checks the schema's version, and brings an older (or new) database to it unless read-only. */
function migrateTaskDb(db: SqliteDatabase, file: string, schema: string, version: number, readonly: boolean): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > version) {
    throw new DlineError(
      "failed_precondition",
      `${path.basename(file)} was written by a newer Dline (schema ${current}).`,
    );
  }
  // A busy database fails this, and the open that runs it is tried again (withBusyRetry above).
  if (current < version && !readonly)
    db.transaction(() => {
      db.exec(schema);
      db.pragma(`user_version = ${version}`);
    }).immediate();
}
