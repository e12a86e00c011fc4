// Task store benchmarks (issue 4): ListTasks and text search over 100,000 tasks, durable UI
// message appends, and opening a task of 10,000 messages. Baselines are measured in the same
// run: a raw better-sqlite3 query/insert loop doing the same work without our modules.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Database from "better-sqlite3";
import { silentLogger } from "../core/src/logging/logger.js";
import { InstanceLayout } from "../core/src/storage/instance-layout.js";
import { SqliteFactory } from "../core/src/storage/sqlite.js";
import { MessageStore, uiMessage } from "../core/src/tasks/message-store.js";
import { TaskHistory } from "../core/src/tasks/task-history.js";
import { fmtMs, median, ratio, report } from "./helpers.js";

const TASKS = 100_000;
const MESSAGES = 100_000;
const OPEN_MESSAGES = 10_000;
const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-bench-history-"));
const layout = new InstanceLayout({ dataRoot: path.join(base, "data"), homeRoot: path.join(base, "home"), documentsRoot: path.join(base, "docs") });
const sqlite = new SqliteFactory(() => undefined);
const logger = silentLogger();
const words = ["refactor", "parser", "login", "deploy", "docs", "tests", "payment", "gateway", "cache", "render", "migrate", "schema", "fix", "bug", "feature", "review"];

function sample(n: number, fn: () => void): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
  }
  return out;
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
        return { id: `task-${i}`, title, taskText: `${title} in module m${i % 997}`, workspaceRoot: `/ws/${i % 20}`, createdAt: 1_600_000_000_000 + i * 1000, cost: (i % 1000) / 100, favorite: i % 50 === 0 };
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
  for (let i = 0; i < MESSAGES; i++) durableStore.append(uiMessage({ id: `m${i}`, text: `message ${i} with some text` }), { durable: true });
  const durableRate = MESSAGES / ((performance.now() - t0) / 1000);
  durableStore.close();
  report("append UI messages, committed per call, /s", durableRate.toFixed(0), rawRate.toFixed(0), ratio(durableRate, rawRate), ">= 20,000/s");
  // Group commit: durable within MESSAGE_FLUSH_INTERVAL_MS; the clock stops when the last one is committed.
  const store = MessageStore.open(sqlite, layout.task("bench-task").messagesDb);
  t0 = performance.now();
  for (let i = 0; i < MESSAGES; i++) store.append(uiMessage({ id: `m${i}`, text: `message ${i} with some text` }));
  store.flush();
  const rate = MESSAGES / ((performance.now() - t0) / 1000);
  store.close();
  report("append UI messages, group-committed, /s", rate.toFixed(0), rawRate.toFixed(0), ratio(rate, rawRate), ">= 20,000/s");

  // Opening a task of 10,000 messages: open messages.db, read every message, close.
  const openFile = layout.task("open-task").messagesDb;
  const seedStore = MessageStore.open(sqlite, openFile);
  seedStore.appendMany(Array.from({ length: OPEN_MESSAGES }, (_, i) => uiMessage({ id: `m${i}`, text: `message ${i} `.repeat(10), role: i % 2 ? "assistant" : "user" })));
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
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
