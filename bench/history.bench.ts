// Task store benchmarks: ListTasks and text search over 100,000 tasks, durable UI
// message appends, and opening a task of 10,000 messages. Baselines are measured in the same
// run: a raw better-sqlite3 query/insert loop doing the same work without our modules.
// The scaling curve: first page, keyset next page, search and favourites over
// histories of 1k, 100k and 1M tasks (BENCH_HISTORY_SIZES overrides the sizes).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Database from "better-sqlite3";
import { silentLogger } from "../core/src/logging/logger.js";
import { InstanceLayout } from "../core/src/storage/instance-layout.js";
import { SqliteFactory } from "../core/src/storage/sqlite.js";
import { migrateHistory } from "../core/src/tasks/history-schema.js";
import { MessageStore, uiMessage } from "../core/src/tasks/message-store.js";
import { TaskHistory } from "../core/src/tasks/task-history.js";
import { fmtMs, median, ratio, report } from "./helpers.js";

const TASKS = 100_000;
const MESSAGES = 100_000;
const OPEN_MESSAGES = 10_000;
const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-bench-history-"));
const layout = new InstanceLayout({
  dataRoot: path.join(base, "data"),
  homeRoot: path.join(base, "home"),
  documentsRoot: path.join(base, "docs"),
});
const sqlite = new SqliteFactory(() => undefined);
const logger = silentLogger();
const words = [
  "refactor",
  "parser",
  "login",
  "deploy",
  "docs",
  "tests",
  "payment",
  "gateway",
  "cache",
  "render",
  "migrate",
  "schema",
  "fix",
  "bug",
  "feature",
  "review",
];

function sample(n: number, fn: () => void): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
  }
  return out;
}

function taskRow(i: number) {
  const title = `${words[i % 16]} ${words[(i * 7) % 16]} ${words[(i * 13) % 16]} task ${i}`;
  return {
    id: `task-${i}`,
    title,
    taskText: `${title} in module m${i % 997}`,
    workspaceRoot: `/ws/${i % 20}`,
    createdAt: 1_600_000_000_000 + i * 1000,
    cost: (i % 1000) / 100,
    favorite: i % 50 === 0,
  };
}

/**
 * Builds a taskHistory.db of `n` tasks quickly: the core's own schema (migrateHistory), rows
 * inserted in one transaction with a large page cache, and the secondary indexes and the
 * full-text index built in one pass each after the rows (CREATE INDEX, FTS 'rebuild') instead
 * of row by row. Each index and trigger is dropped and put back from its own SQL as the schema
 * created it, so the file is the one the core would have after `n` inserts.
 */
function buildHistoryFile(file: string, n: number): void {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("cache_size = -400000");
  migrateHistory(db);
  const deferred = db
    .prepare(
      "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'tasks' AND sql IS NOT NULL AND (type = 'index' OR (type = 'trigger' AND name = 'tasks_fts_insert'))",
    )
    .all() as { type: "index" | "trigger"; name: string; sql: string }[];
  const insert = db.prepare(
    "INSERT INTO tasks (id, workspace_root, title, task_text, created_at, updated_at, favorite, cost, status, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'completed', 'dline')",
  );
  db.transaction(() => {
    for (const d of deferred) db.exec(`DROP ${d.type === "index" ? "INDEX" : "TRIGGER"} ${d.name}`);
    for (let i = 0; i < n; i++) {
      const r = taskRow(i);
      insert.run(r.id, r.workspaceRoot, r.title, r.taskText, r.createdAt, r.createdAt, r.favorite ? 1 : 0, r.cost);
    }
    db.exec("INSERT INTO tasks_fts(tasks_fts) VALUES ('rebuild')");
    for (const d of deferred) db.exec(d.sql);
  }).immediate();
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
}

const HISTORY_COLUMNS =
  "t.id, t.workspace_root, t.title, t.created_at, t.updated_at, t.favorite, t.tokens_in, t.tokens_out, " +
  "t.cache_reads, t.cache_writes, t.cost, t.size_bytes, t.status, t.source, t.damaged_reason";

/** History queries at one size: each against the same query written by hand on a raw better-sqlite3 connection to the same file. */
async function historyAtSize(n: number, label: string): Promise<Record<string, number>> {
  const file = path.join(base, `history-${label}.db`);
  const t0 = performance.now();
  buildHistoryFile(file, n);
  const built = performance.now() - t0;
  const { history } = TaskHistory.open(sqlite, file, logger);
  const raw = new Database(file, { readonly: true });
  const results: Record<string, number> = {};
  try {
    if (history.count() !== n) throw new Error(`history of ${label}: ${history.count()} rows, expected ${n}`);
    report(`history ${label}: build (core schema, 1 txn)`, `${(built / 1000).toFixed(1)} s`, "-", "-", "(info)");
    const order = "ORDER BY t.created_at DESC, t.id DESC LIMIT 51";
    const rawFirst = raw.prepare(`SELECT ${HISTORY_COLUMNS} FROM tasks t ${order}`);
    const rawNext = raw.prepare(`SELECT ${HISTORY_COLUMNS} FROM tasks t WHERE (t.created_at, t.id) < (?, ?) ${order}`);
    const rawSearch = raw.prepare(
      `SELECT ${HISTORY_COLUMNS} FROM tasks t WHERE t.seq IN (SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH ?) ${order}`,
    );
    const rawFavorites = raw.prepare(`SELECT ${HISTORY_COLUMNS} FROM tasks t WHERE t.favorite = 1 ${order}`);
    const firstPage = history.list({ pageSize: 50 });
    const last = firstPage.tasks.at(-1);
    if (!last) throw new Error("the first page of the history is empty");
    const cases: [string, () => unknown, () => unknown, string][] = [
      ["first page (50)", () => history.list({ pageSize: 50 }), () => rawFirst.all(), "< 5 ms"],
      [
        "keyset next page",
        () => history.list({ pageSize: 50, pageToken: firstPage.nextPageToken }),
        () => rawNext.all(last.createdAt, last.id),
        "< 5 ms",
      ],
      // The three kinds of search the planner (core/src/tasks/history-search.ts) tells apart:
      // "parser gateway": 1 task in 8 has both words; "task": every task; "payment gateway": no
      // task has both (two long posting lists intersected to nothing). "m123": 1 in 997.
      [
        "search, common words",
        () => history.list({ pageSize: 50, query: "parser gateway" }),
        () => rawSearch.all('"parser"* "gateway"*'),
        "< 50 ms",
      ],
      [
        "search, match-everything word",
        () => history.list({ pageSize: 50, query: "task" }),
        () => rawSearch.all('"task"*'),
        "< 50 ms",
      ],
      [
        "search, no match",
        () => history.list({ pageSize: 50, query: "payment gateway" }),
        () => rawSearch.all('"payment"* "gateway"*'),
        "< 50 ms",
      ],
      [
        "search, rare word",
        () => history.list({ pageSize: 50, query: "m123" }),
        () => rawSearch.all('"m123"*'),
        "< 50 ms",
      ],
      [
        "favourites first page",
        () => history.list({ pageSize: 50, favoritesOnly: true }),
        () => rawFavorites.all(),
        "< 5 ms",
      ],
    ];
    for (const [name, ours, baseline, goal] of cases) {
      // Same answer first: the baseline must do the same work.
      const got = (ours() as { tasks: { id: string }[] }).tasks.map((t) => t.id);
      const want = (baseline() as { id: string }[]).slice(0, 50).map((r) => r.id);
      const mayBeEmpty = name === "search, no match";
      if ((got.length === 0 && !mayBeEmpty) || JSON.stringify(got) !== JSON.stringify(want)) {
        throw new Error(`history ${label} ${name}: empty, or the baseline query answers other rows`);
      }
      // Interleaved, so that a busy machine slows both sides alike.
      const bs: number[] = [];
      const vs: number[] = [];
      const start = performance.now();
      while (bs.length < 200 && (bs.length < 5 || performance.now() - start < 3000)) {
        bs.push(...sample(1, baseline));
        vs.push(...sample(1, ours));
      }
      const b = median(bs);
      const v = median(vs);
      results[name] = v;
      report(`history ${label}: ${name}, p50`, fmtMs(v), fmtMs(b), ratio(v, b), goal);
    }
  } finally {
    raw.close();
    await history.close();
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
  }
  return results;
}

try {
  fs.mkdirSync(layout.tasksDir, { recursive: true });
  const { history } = TaskHistory.open(sqlite, layout.taskHistoryDb, logger);
  let t0 = performance.now();
  const batch = 5000;
  for (let start = 0; start < TASKS; start += batch) {
    history.putMany(
      Array.from({ length: batch }, (_, j) => {
        const i = start + j;
        const title = `${words[i % 16]} ${words[(i * 7) % 16]} ${words[(i * 13) % 16]} task ${i}`;
        return {
          id: `task-${i}`,
          title,
          taskText: `${title} in module m${i % 997}`,
          workspaceRoot: `/ws/${i % 20}`,
          createdAt: 1_600_000_000_000 + i * 1000,
          cost: (i % 1000) / 100,
          favorite: i % 50 === 0,
        };
      }),
    );
  }
  console.log(`seeded ${TASKS} tasks in ${fmtMs(performance.now() - t0)}`);

  const raw = new Database(layout.taskHistoryDb, { readonly: true });
  const rawPage = raw.prepare("SELECT * FROM tasks ORDER BY created_at DESC, id DESC LIMIT 51");
  const base1 = median(sample(200, () => rawPage.all()));
  const first = median(sample(200, () => history.list({ pageSize: 50 })));
  report("ListTasks first page (50), p50", fmtMs(first), fmtMs(base1), ratio(first, base1), "< 5 ms");
  const ws = median(sample(200, () => history.list({ pageSize: 50, workspaceRoot: "/ws/7" })));
  report("ListTasks workspace first page, p50", fmtMs(ws), fmtMs(base1), ratio(ws, base1), "< 5 ms");
  const costly = median(sample(200, () => history.list({ pageSize: 50, sort: "most_expensive" })));
  report("ListTasks most expensive page, p50", fmtMs(costly), fmtMs(base1), ratio(costly, base1), "< 5 ms");
  let token = history.list({ pageSize: 50 }).nextPageToken;
  for (let i = 0; i < 500; i++) token = history.list({ pageSize: 50, pageToken: token }).nextPageToken;
  const deep = median(sample(200, () => history.list({ pageSize: 50, pageToken: token })));
  report("ListTasks page 500 (cursor), p50", fmtMs(deep), fmtMs(base1), ratio(deep, base1), "< 5 ms");

  const rawFts = raw.prepare("SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH ? LIMIT 51");
  // No task has both words: this measures intersecting two long posting lists to an empty page.
  const baseFts = median(sample(50, () => rawFts.all('"payment"* "gateway"*')));
  const search = median(sample(50, () => history.list({ pageSize: 50, query: "payment gateway" })));
  report("text search 'payment gateway', p50", fmtMs(search), fmtMs(baseFts), ratio(search, baseFts), "< 50 ms");
  const rare = median(sample(50, () => history.list({ pageSize: 50, query: "m123" })));
  report("text search rare term 'm123', p50", fmtMs(rare), fmtMs(baseFts), ratio(rare, baseFts), "< 50 ms");
  raw.close();
  await history.close();

  // Durable appends: each append is a committed transaction when it returns.
  const rawFile = path.join(base, "raw-messages.db");
  const rawDb = new Database(rawFile);
  rawDb.pragma("journal_mode = WAL");
  rawDb.pragma("synchronous = NORMAL");
  rawDb.exec("CREATE TABLE m (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, time INTEGER, role TEXT, text TEXT)");
  const rawInsert = rawDb.prepare("INSERT INTO m (id, time, role, text) VALUES (?, ?, ?, ?)");
  t0 = performance.now();
  for (let i = 0; i < MESSAGES; i++) rawInsert.run(`m${i}`, Date.now(), "assistant", `message ${i} with some text`);
  const rawRate = MESSAGES / ((performance.now() - t0) / 1000);
  rawDb.close();
  const durableStore = MessageStore.open(sqlite, layout.task("bench-durable").messagesDb);
  t0 = performance.now();
  for (let i = 0; i < MESSAGES; i++)
    durableStore.append(uiMessage({ id: `m${i}`, text: `message ${i} with some text` }), { durable: true });
  const durableRate = MESSAGES / ((performance.now() - t0) / 1000);
  durableStore.close();
  report(
    "append UI messages, committed per call, /s",
    durableRate.toFixed(0),
    rawRate.toFixed(0),
    ratio(durableRate, rawRate),
    ">= 20,000/s",
  );
  // Group commit: durable within MESSAGE_FLUSH_INTERVAL_MS; the clock stops when the last one is committed.
  const store = MessageStore.open(sqlite, layout.task("bench-task").messagesDb);
  t0 = performance.now();
  for (let i = 0; i < MESSAGES; i++) store.append(uiMessage({ id: `m${i}`, text: `message ${i} with some text` }));
  store.flush();
  const rate = MESSAGES / ((performance.now() - t0) / 1000);
  store.close();
  report(
    "append UI messages, group-committed, /s",
    rate.toFixed(0),
    rawRate.toFixed(0),
    ratio(rate, rawRate),
    ">= 20,000/s",
  );

  // Opening a task of 10,000 messages: open messages.db, read every message, close.
  const openFile = layout.task("open-task").messagesDb;
  const seedStore = MessageStore.open(sqlite, openFile);
  seedStore.appendMany(
    Array.from({ length: OPEN_MESSAGES }, (_, i) =>
      uiMessage({ id: `m${i}`, text: `message ${i} `.repeat(10), role: i % 2 ? "assistant" : "user" }),
    ),
  );
  seedStore.close();
  const baseOpen = median(
    sample(30, () => {
      const d = new Database(openFile);
      d.prepare("SELECT * FROM messages ORDER BY seq").all();
      d.close();
    }),
  );
  const opened = median(
    sample(30, () => {
      const s = MessageStore.open(sqlite, openFile);
      s.list();
      s.close();
    }),
  );
  report("open a task of 10,000 messages, p50", fmtMs(opened), fmtMs(baseOpen), ratio(opened, baseOpen), "< 50 ms");

  // Scaling curve: the same queries over 1k, 100k and 1M tasks; then the growth from the
  // smallest to the largest history (value at the largest, baseline at the smallest).
  const sizes = (process.env.BENCH_HISTORY_SIZES ?? "1000,100000,1000000").split(",").map(Number);
  const label = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));
  const curve = new Map<number, Record<string, number>>();
  for (const n of sizes) curve.set(n, await historyAtSize(n, label(n)));
  const smallest = Math.min(...sizes);
  const largest = Math.max(...sizes);
  if (largest > smallest) {
    for (const [name, v] of Object.entries(curve.get(largest)!)) {
      const b = curve.get(smallest)?.[name];
      if (b === undefined) continue;
      report(
        `history ${label(largest)} vs ${label(smallest)}: ${name}`,
        fmtMs(v),
        fmtMs(b),
        ratio(v, b),
        "(info: flat is best)",
      );
    }
  }
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
