import type { SqliteDatabase, SqliteFactory } from "../storage/index.js";
import { openTaskDb } from "./task-db.js";

export interface TaskActivity {
  seq: number;
  time: number;
  kind: string;
  /** JSON of the event. */
  data: string;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS activities (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    time INTEGER NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS imports (name TEXT PRIMARY KEY, rows INTEGER NOT NULL);
`;

/** activities.db: task activity events (commands run, files touched), the one writer. */
export class ActivityStore {
  private constructor(private readonly db: SqliteDatabase) {}

  static open(sqlite: SqliteFactory, file: string, options: { readonly?: boolean } = {}): ActivityStore {
    return new ActivityStore(openTaskDb(sqlite, file, SCHEMA, 1, options));
  }

  append(activity: Omit<TaskActivity, "seq">): number {
    return Number(
      this.db
        .prepare("INSERT INTO activities (time, kind, data) VALUES (?, ?, ?)")
        .run(activity.time, activity.kind, activity.data).lastInsertRowid,
    );
  }

  appendMany(activities: Omit<TaskActivity, "seq">[]): void {
    const insert = this.db.prepare("INSERT INTO activities (time, kind, data) VALUES (?, ?, ?)");
    this.db.transaction(() => {
      for (const a of activities) insert.run(a.time, a.kind, a.data);
    })();
  }

  /** Imports rows once under `name` (atomic with its marker); returns the row count recorded for that import. */
  importOnce(name: string, activities: Omit<TaskActivity, "seq">[]): number {
    return this.db
      .transaction(() => {
        const done = this.db.prepare("SELECT rows FROM imports WHERE name = ?").get(name) as
          { rows: number } | undefined;
        if (done) return done.rows;
        const insert = this.db.prepare("INSERT INTO activities (time, kind, data) VALUES (?, ?, ?)");
        for (const a of activities) insert.run(a.time, a.kind, a.data);
        this.db.prepare("INSERT INTO imports (name, rows) VALUES (?, ?)").run(name, activities.length);
        return activities.length;
      })
      .immediate();
  }

  importedRows(name: string): number | undefined {
    return (this.db.prepare("SELECT rows FROM imports WHERE name = ?").get(name) as { rows: number } | undefined)?.rows;
  }

  list(): TaskActivity[] {
    return (this.db.prepare("SELECT * FROM activities ORDER BY seq").all() as Record<string, unknown>[]).map((r) => ({
      seq: Number(r.seq),
      time: Number(r.time),
      kind: String(r.kind),
      data: String(r.data),
    }));
  }

  count(): number {
    return (this.db.prepare("SELECT count(*) AS n FROM activities").get() as { n: number }).n;
  }

  close(): void {
    this.db.close();
  }
}
