import type { SqliteDatabase, SqliteFactory } from "../storage/sqlite.js";
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
`;

/** activities.db: task activity events (commands run, files touched), the one writer. */
export class ActivityStore {
  private constructor(private readonly db: SqliteDatabase) {}

  static open(sqlite: SqliteFactory, file: string, options: { readonly?: boolean } = {}): ActivityStore {
    return new ActivityStore(openTaskDb(sqlite, file, SCHEMA, 1, options));
  }

  append(activity: Omit<TaskActivity, "seq">): number {
    return Number(this.db.prepare("INSERT INTO activities (time, kind, data) VALUES (?, ?, ?)").run(activity.time, activity.kind, activity.data).lastInsertRowid);
  }

  appendMany(activities: Omit<TaskActivity, "seq">[]): void {
    const insert = this.db.prepare("INSERT INTO activities (time, kind, data) VALUES (?, ?, ?)");
    this.db.transaction(() => {
      for (const a of activities) insert.run(a.time, a.kind, a.data);
    })();
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
