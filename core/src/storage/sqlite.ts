import Database from "better-sqlite3";

export type SqliteDatabase = Database.Database;

export interface OpenDatabaseOptions {
  readonly?: boolean;
  /** Fail instead of creating a missing file. */
  fileMustExist?: boolean;
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
    const db = new Database(file, {
      readonly: options.readonly ?? false,
      fileMustExist: options.fileMustExist ?? false,
      timeout: this.busyTimeoutMs,
      ...(this.nativeBinding ? { nativeBinding: this.nativeBinding as unknown as string } : {}),
    });
    if (!options.readonly) {
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
    }
    db.pragma("foreign_keys = ON");
    return db;
  }
}
