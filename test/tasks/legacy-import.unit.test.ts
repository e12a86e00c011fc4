import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { JournalStore } from "../../core/src/tasks/journal-store.js";
import { importLegacyConversation, LEGACY_CONVERSATION_KIND } from "../../core/src/tasks/legacy-import.js";
import { MessageStore } from "../../core/src/tasks/message-store.js";
import { MetricsStore } from "../../core/src/tasks/metrics-store.js";
import { ActivityStore } from "../../core/src/tasks/activity-store.js";
import type { TaskStorage } from "../../core/src/tasks/task-storage.js";
import { openStorage, taskEnv, type TaskEnv } from "./helpers.js";
import { nth, entry } from "../helpers/items.js";

const cleanup: TaskStorage[] = [];
afterEach(async () => {
  for (const s of cleanup.splice(0)) await s.close();
});
async function storageFor(env: TaskEnv) {
  const s = await openStorage(env);
  cleanup.push(s);
  return s;
}

const clineMessages = [
  { ts: 1700000000000, type: "say", say: "task", text: "Add a README" },
  {
    ts: 1700000001000,
    type: "say",
    say: "api_req_started",
    text: JSON.stringify({ tokensIn: 10, tokensOut: 5, cost: 0.01 }),
  },
  { ts: 1700000002000, type: "ask", ask: "tool", text: JSON.stringify({ tool: "newFileCreated", path: "README.md" }) },
  { ts: 1700000003000, type: "say", say: "completion_result", text: "Done." },
];

function historyLine(id: string, extra: Record<string, unknown> = {}) {
  return JSON.stringify({
    id,
    ts: 1700000000000,
    task: `Task ${id}\nmore text`,
    tokensIn: 100,
    tokensOut: 50,
    cacheReads: 1,
    cacheWrites: 2,
    totalCost: 0.25,
    size: 1234,
    cwdOnTaskInitialization: "/home/u/proj",
    isFavorited: id === "a",
    ...extra,
  });
}

function writeLegacyTask(env: TaskEnv, id: string, files: Record<string, string>) {
  const dir = env.layout.task(id).dir;
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
}

describe("legacy imports", () => {
  it("imports taskHistory.jsonl into a new database, malformed lines as damaged tasks, never again later", async () => {
    const env = taskEnv();
    fs.mkdirSync(env.layout.tasksDir, { recursive: true });
    fs.writeFileSync(
      env.layout.legacyTaskHistoryJsonl,
      [
        historyLine("a"),
        historyLine("b", { tokensIn: "many" }),
        '{"id": "c", "ts": 17000',
        "not json at all",
        historyLine("d"),
      ].join("\n") + "\n",
    );
    let s = await openStorage(env);
    const tasks = Object.fromEntries(s.history.list().tasks.map((t) => [t.id, t]));
    expect(Object.keys(tasks).sort()).toEqual(["a", "b", "c", "d"]);
    expect(tasks.a).toMatchObject({
      title: "Task a",
      workspaceRoot: "/home/u/proj",
      favorite: true,
      tokensIn: 100,
      cost: 0.25,
      sizeBytes: 1234,
      status: "completed",
    });
    expect(entry(tasks, "b", "task").status).toBe("damaged");
    expect(entry(tasks, "b", "task").damagedReason).toMatch(/tokensIn/);
    expect(entry(tasks, "c", "task").status).toBe("damaged");
    expect(s.history.list({ query: "more" }).tasks).toHaveLength(3); // task text is searchable
    s.history.remove(["d"]);
    await s.close();
    // The database exists now: the legacy file is not imported again.
    s = await storageFor(env);
    expect(s.history.get("d")).toBeUndefined();
    expect(fs.existsSync(env.layout.legacyTaskHistoryJsonl)).toBe(true);
  });

  it("imports ui_messages.json, activities.json, api_rate_metrics.jsonl, <id>.db and snapshot.json on first open", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    s.history.put({ id: "old1", title: "legacy" });
    const metrics = [
      '{"ts":1,"tokensIn":10,"tokensOut":2,"cost":0.1}',
      '{"ts":2,"tokensIn":20,"tokensOut":4,"cost":0.2}',
    ];
    writeLegacyTask(env, "old1", {
      "ui_messages.json": JSON.stringify(clineMessages),
      "activities.json": JSON.stringify([{ ts: 5, kind: "command", command: "ls" }]),
      "api_rate_metrics.jsonl": metrics.join("\n") + "\n",
      "snapshot.json": JSON.stringify({ inputQueue: ["queued prompt"], completed: true }),
    });
    const legacyDb = new Database(env.layout.task("old1").legacy.metricsDbByTaskId);
    legacyDb.exec("CREATE TABLE legacy_rows (x); INSERT INTO legacy_rows VALUES (42);");
    legacyDb.close();

    const view = s.store.get("old1");
    expect(view.record.status).toBe("completed");
    expect(view.messages.map((m) => [m.role, m.kind, m.text.slice(0, 12)])).toEqual([
      ["user", "text", "Add a README"],
      ["system", "api_req_started", "API request:"],
      ["tool", "tool", "created READ"],
      ["assistant", "completion", "Done."],
    ]);
    expect(nth(view.messages, 2, "message").tool).toBe("newFileCreated");
    // What Cline stored stays in the detail.
    expect(JSON.parse(nth(view.messages, 1, "message").detail).tokensIn).toBeGreaterThan(0);
    const t = env.layout.task("old1");
    expect(fs.existsSync(`${t.legacy.uiMessagesJson}.migrated`)).toBe(true);
    expect(fs.existsSync(t.legacy.uiMessagesJson)).toBe(false);
    expect(fs.existsSync(`${t.legacy.activitiesJson}.migrated`)).toBe(true);
    expect(fs.existsSync(`${t.legacy.apiRateMetricsJsonl}.migrated`)).toBe(true);
    const a = ActivityStore.open(env.sqlite, t.activitiesDb);
    expect(a.list().map((x) => x.kind)).toEqual(["command"]);
    a.close();
    const m = MetricsStore.open(env.sqlite, t.metricsDb);
    expect(m.totals()).toMatchObject({ requests: 2, tokensIn: 30, tokensOut: 6 });
    // The legacy metrics database became metrics.db (its tables are kept), and the snapshot's queue moved into state.json.
    const raw = new Database(t.metricsDb, { readonly: true });
    expect(raw.prepare("SELECT x FROM legacy_rows").get()).toEqual({ x: 42 });
    raw.close();
    m.close();
    expect(fs.existsSync(t.legacy.metricsDbByTaskId)).toBe(false);
    expect(JSON.parse(fs.readFileSync(t.stateJson, "utf8"))).toEqual({
      inputQueue: ["queued prompt"],
      legacySnapshotImported: true,
    });
    // A second open imports nothing twice.
    s.store.get("old1");
    const store = MessageStore.open(env.sqlite, t.messagesDb);
    expect(store.count()).toBe(4);
    store.close();
  });

  it("an import interrupted after its commit (file not yet renamed) is retried without duplicates", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    s.history.put({ id: "old2" });
    const lines = clineMessages.map((m) => JSON.stringify(m)).join("\n") + "\n";
    writeLegacyTask(env, "old2", { "ui_messages.jsonl": lines, "api_rate_metrics.jsonl": '{"ts":1,"tokensIn":7}\n' });
    s.store.get("old2");
    const t = env.layout.task("old2");
    // Simulate the crash window: rows committed, rename not done.
    fs.renameSync(`${t.legacy.uiMessagesJsonl}.migrated`, t.legacy.uiMessagesJsonl);
    fs.renameSync(`${t.legacy.apiRateMetricsJsonl}.migrated`, t.legacy.apiRateMetricsJsonl);
    expect(s.store.get("old2").messages).toHaveLength(4);
    expect(fs.existsSync(t.legacy.uiMessagesJsonl)).toBe(false);
    const m = MetricsStore.open(env.sqlite, t.metricsDb);
    expect(m.totals().requests).toBe(1);
    m.close();
  });

  it("a legacy <id>.db move cut between its two renames is finished on the next open", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    s.history.put({ id: "old4" });
    const t = env.layout.task("old4");
    fs.mkdirSync(t.dir, { recursive: true });
    const legacy = new Database(t.legacy.metricsDbByTaskId);
    legacy.pragma("journal_mode = WAL");
    legacy.pragma("wal_autocheckpoint = 0");
    legacy.exec("CREATE TABLE r (x); INSERT INTO r VALUES (1), (2);");
    // Copy the files while the WAL holds the rows (as a crash would leave them), then close.
    const dbBytes = fs.readFileSync(t.legacy.metricsDbByTaskId);
    const walBytes = fs.readFileSync(`${t.legacy.metricsDbByTaskId}-wal`);
    legacy.close();
    fs.writeFileSync(t.legacy.metricsDbByTaskId, dbBytes);
    fs.rmSync(`${t.legacy.metricsDbByTaskId}-shm`, { force: true });
    // The WAL was already moved when the process died.
    fs.writeFileSync(`${t.metricsDb}-wal`, walBytes);
    fs.rmSync(`${t.legacy.metricsDbByTaskId}-wal`, { force: true });
    s.store.get("old4");
    expect(fs.existsSync(t.legacy.metricsDbByTaskId)).toBe(false);
    const raw = new Database(t.metricsDb, { readonly: true });
    expect(raw.prepare("SELECT count(*) AS n FROM r").get()).toEqual({ n: 2 });
    raw.close();
  });

  it("never overwrites an existing metrics.db with a legacy <id>.db", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    s.history.put({ id: "old3" });
    writeLegacyTask(env, "old3", { "claude_messages.json": JSON.stringify(clineMessages.slice(0, 1)) });
    const t = env.layout.task("old3");
    const current = MetricsStore.open(env.sqlite, t.metricsDb);
    current.record(
      { time: 1, tokensIn: 1, tokensOut: 1, cacheReads: 0, cacheWrites: 0, cost: 0, data: "{}" },
      "current",
    );
    current.close();
    fs.writeFileSync(t.legacy.metricsDbByTaskId, "legacy bytes");
    expect(s.store.get("old3").messages.map((x) => x.text)).toEqual(["Add a README"]);
    expect(fs.readFileSync(t.legacy.metricsDbByTaskId, "utf8")).toBe("legacy bytes");
    const m = MetricsStore.open(env.sqlite, t.metricsDb);
    expect(m.hasFingerprints(["current"])).toBe(true);
    m.close();
  });

  it("malformed legacy files or a non-SQLite messages.db mark only that task damaged; files kept", async () => {
    const env = taskEnv();
    const s = await storageFor(env);
    for (const id of ["good", "torn", "types", "notdb"]) s.history.put({ id, title: id, createdAt: 1000 });
    writeLegacyTask(env, "good", { "ui_messages.json": JSON.stringify(clineMessages) });
    writeLegacyTask(env, "torn", { "ui_messages.json": JSON.stringify(clineMessages).slice(0, 50) });
    writeLegacyTask(env, "types", { "ui_messages.json": JSON.stringify([{ ts: "yesterday", type: "say", text: 5 }]) });
    writeLegacyTask(env, "notdb", { "messages.db": "plain text, not SQLite" });
    for (const id of ["good", "torn", "types", "notdb"]) s.store.get(id);
    const list = Object.fromEntries(s.history.list().tasks.map((t) => [t.id, t]));
    expect(entry(list, "good", "task").status).toBe("completed");
    expect(list.torn).toMatchObject({
      status: "damaged",
      damagedReason: expect.stringMatching(/ui_messages\.json is not valid JSON/),
    });
    expect(list.types).toMatchObject({ status: "damaged", damagedReason: expect.stringMatching(/ts/) });
    expect(list.notdb).toMatchObject({
      status: "damaged",
      damagedReason: expect.stringMatching(/messages\.db is not a SQLite database/),
    });
    expect(fs.readFileSync(env.layout.task("torn").legacy.uiMessagesJson, "utf8")).toBe(
      JSON.stringify(clineMessages).slice(0, 50),
    );
    expect(fs.readFileSync(env.layout.task("notdb").messagesDb, "utf8")).toBe("plain text, not SQLite");
    expect(s.store.get("good").messages).toHaveLength(4);
  });

  it("imports api_conversation_history.jsonl into journal.db once, only while the journal holds nothing else", async () => {
    const env = taskEnv();
    const t = env.layout.task("conv");
    const conv = [
      { role: "user", content: [{ type: "text", text: "hi" }] },
      { role: "assistant", content: "hello" },
    ];
    writeLegacyTask(env, "conv", {
      "api_conversation_history.jsonl": conv.map((c) => JSON.stringify(c)).join("\n") + "\n",
    });
    expect(importLegacyConversation(env.sqlite, t)).toBe(2);
    expect(importLegacyConversation(env.sqlite, t)).toBe(0);
    const j = JournalStore.open(env.sqlite, t.journalDb);
    expect(j.entries().map((e) => [e.kind, JSON.parse(e.data).role])).toEqual([
      [LEGACY_CONVERSATION_KIND, "user"],
      [LEGACY_CONVERSATION_KIND, "assistant"],
    ]);
    j.close();
    expect(fs.existsSync(t.legacy.apiConversationHistoryJsonl)).toBe(true); // left unchanged

    const t2 = env.layout.task("conv2");
    writeLegacyTask(env, "conv2", { "api_conversation_history.jsonl": JSON.stringify(conv[0]) + "\n" });
    const j2 = JournalStore.open(env.sqlite, t2.journalDb);
    j2.append({ kind: "user_message", data: "{}" });
    j2.close();
    expect(importLegacyConversation(env.sqlite, t2)).toBe(0); // the runtime already wrote: never touched
  });

  it("rebuilds the index from task folders when taskHistory.db is not a database (kept aside)", async () => {
    const env = taskEnv();
    let s = await openStorage(env);
    const w = s.store.create({ id: "kept", title: "Important work", workspaceRoot: "/ws" });
    w.release();
    fs.mkdirSync(env.layout.task("nometa").dir);
    await s.close();
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(env.layout.taskHistoryDb + suffix, { force: true });
    fs.writeFileSync(env.layout.taskHistoryDb, "garbage that is not sqlite");
    s = await storageFor(env);
    const list = Object.fromEntries(s.history.list().tasks.map((t) => [t.id, t]));
    expect(list.kept).toMatchObject({ title: "Important work", workspaceRoot: "/ws" });
    expect(entry(list, "nometa", "task").status).toBe("damaged");
    const aside = fs.readdirSync(env.layout.tasksDir).filter((n) => n.startsWith("taskHistory.db.corrupt-"));
    expect(aside).toHaveLength(1);
    expect(fs.readFileSync(path.join(env.layout.tasksDir, nth(aside, 0, "file kept aside")), "utf8")).toBe(
      "garbage that is not sqlite",
    );
  });
});
