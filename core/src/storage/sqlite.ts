import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { narrowMode, PRIVATE_FILE_MODE } from "./private-mode.js";

export type SqliteDatabase = Database.Database;

export interface OpenDatabaseOptions {
  readonly?: boolean;
  /** Fail instead of creating a missing file. */
  fileMustExist?: boolean;
  /**
   * The database's first writes (its schema, a migration), run once it is in WAL mode. On a file
   * this open created they are written without a flush each (see open); an error closes the
   * database and is thrown.
   */
  firstWrites?: (db: SqliteDatabase) => void;
}

/**
 * Opens SQLite databases with the right native binding (see native/sqlite-addon.ts) and the
 * settings every Dline database shares: WAL, a busy timeout so that a second sidecar waits
 * instead of surfacing SQLITE_BUSY, and foreign keys. Constructed once in main.ts.
 */
export class SqliteFactory {
  private binding: { value: object | undefined } | undefined;

  constructor(
    /** Loads the native binding on first use, so a sidecar that opens no database never maps it. */
    private readonly loadNativeBinding: () => object | undefined,
    private readonly busyTimeoutMs = 5000,
  ) {}

  private get nativeBinding(): object | undefined {
    this.binding ??= { value: this.loadNativeBinding() };
    return this.binding.value;
  }

  open(file: string, options: OpenDatabaseOptions = {}): SqliteDatabase {
    const created =
      !options.readonly && file !== ":memory:" && privateDatabaseFiles(file, options.fileMustExist ?? false);
    let db: SqliteDatabase;
    try {
      db = new Database(file, {
        readonly: options.readonly ?? false,
        fileMustExist: options.fileMustExist ?? false,
        timeout: this.busyTimeoutMs,
        ...(this.nativeBinding ? { nativeBinding: this.nativeBinding as unknown as string } : {}),
      });
    } catch (err) {
      throw diskFullAsSuch(err, file);
    }
    try {
      if (!options.readonly) {
        // A new file holds nothing to lose: its switch to WAL (a rollback-journal transaction)
        // and its first writes (the schema, the WAL's header) go unflushed, where SQLite would
        // flush the journal, the file, the WAL and their folder six times in all, three new
        // databases each task. Once they are written the database is set to NORMAL like any
        // other, and its first checkpoint flushes what they wrote.
        if (created) db.pragma("synchronous = OFF");
        db.pragma("journal_mode = WAL");
        if (!created) db.pragma("synchronous = NORMAL");
      }
      db.pragma("foreign_keys = ON");
      options.firstWrites?.(db);
      if (created) db.pragma("synchronous = NORMAL");
    } catch (err) {
      db.close();
      throw diskFullAsSuch(err, file);
    }
    return db;
  }
}

/**
 * SQLite reports a full disk met while it opens a WAL database as a generic I/O error: the
 * shared-memory file (`-shm`, created by the first connection) cannot be given its size, which
 * is SQLITE_IOERR_SHMSIZE, or another write of the open fails. Such an error is turned into
 * SQLITE_FULL (the code a full disk has everywhere else), so that the caller answers
 * `resource_exhausted` "The disk is full." instead of an internal error.
 */
function diskFullAsSuch(err: unknown, file: string): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("SQLITE_IOERR")) return err;
  if (code !== "SQLITE_IOERR_SHMSIZE" && !fileSystemFull(path.dirname(file))) return err;
  const full = new Database.SqliteError(`database or disk is full (opening ${path.basename(file)})`, "SQLITE_FULL");
  (full as Error).cause = err;
  return full;
}

function fileSystemFull(dir: string): boolean {
  try {
    return fs.statfsSync(dir).bavail === 0;
  } catch {
    return false;
  }
}

/**
 * A database is created 0600 before SQLite opens it (SQLite would create it 0644, and its WAL
 * and shared-memory files take the database's mode); an older one left open to others is
 * narrowed, its WAL and shared-memory files too.
 */
function privateDatabaseFiles(file: string, mustExist: boolean): boolean {
  let created = false;
  if (!mustExist) {
    try {
      fs.closeSync(
        fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, PRIVATE_FILE_MODE),
      );
      created = true;
    } catch (err) {
      // An empty file is as new (made by an open that went no further); anything else SQLite
      // reports when it opens the path.
      if ((err as NodeJS.ErrnoException).code === "EEXIST") created = sizeOf(file) === 0;
    }
  }
  for (const suffix of ["", "-wal", "-shm"]) narrowMode(file + suffix, PRIVATE_FILE_MODE);
  return created;
}

function sizeOf(file: string): number | undefined {
  try {
    return fs.statSync(file).size;
  } catch {
    return undefined;
  }
}
