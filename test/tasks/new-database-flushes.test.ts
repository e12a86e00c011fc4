// A task's databases are created with every new task (messages, journal, activities, metrics).
// Their creation holds nothing to lose, so it flushes nothing: SQLite's own way (switch to WAL
// through a rollback journal, then the WAL's header) flushed the journal, the file, the WAL and
// their folder six times a database, each flush waiting behind whatever else the disk had to
// write (a checkpoint's git status rewriting its index, on a task's way to its first answer).
// Counted with strace on a separate process; then the databases are checked to be whole WAL
// databases in NORMAL mode that keep what is written to them.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { uiMessage } from "../../core/src/tasks/message-store.js";
import { TaskFiles } from "../../core/src/tasks/task-files.js";
import { buildChild, taskEnv } from "./helpers.js";
import { repoRoot } from "../helpers/sidecar.js";

const DATABASE_FILE = /\/(messages|journal|activities|metrics)\.db(-journal|-wal)?>/;

describe("a new task's databases", () => {
  it("are created without a flush, and are whole WAL databases that keep what is written", async () => {
    const env = taskEnv();
    const taskId = "1796662569962-faa32f79";
    const task = env.layout.task(taskId);
    fs.mkdirSync(task.dir, { recursive: true });
    const child = await buildChild("task-worker");
    const trace = path.join(env.roots.base, "fsync.trace");
    const printed = execFileSync(
      "strace",
      [
        "-f",
        "-y",
        "-e",
        "trace=fsync,fdatasync",
        "-o",
        trace,
        process.execPath,
        child,
        "open-dbs",
        env.layout.roots.documentsRoot,
        taskId,
      ],
      { encoding: "utf8", env: { ...process.env, NODE_PATH: path.join(repoRoot, "node_modules") } },
    );
    expect(printed).toContain("opened");
    const flushes = fs
      .readFileSync(trace, "utf8")
      .split("\n")
      .filter((line) => /\bf(data)?sync\(/.test(line));
    // The tracer sees flushes and names their files: the child's one flush of the documents root.
    expect(flushes.filter((line) => line.includes(`<${env.layout.roots.documentsRoot}>`))).toHaveLength(1);
    expect(flushes.filter((line) => DATABASE_FILE.test(line))).toEqual([]);
    expect(flushes.filter((line) => line.includes(`${task.dir}>`))).toEqual([]);

    for (const file of [task.messagesDb, task.journalDb, task.activitiesDb, task.metricsDb]) {
      const header = fs.readFileSync(file).subarray(0, 20);
      expect(header.toString("latin1", 0, 15)).toBe("SQLite format 3");
      expect([header[18], header[19]]).toEqual([2, 2]);
    }

    // Opened again by another process (here this one), they are in NORMAL mode and keep a durable append.
    const files = new TaskFiles(task, env.sqlite, env.logger);
    files.messages.append(uiMessage({ id: "m1", text: "kept", role: "user" }), { durable: true });
    files.close();
    const reopened = new TaskFiles(task, env.sqlite, env.logger);
    expect(reopened.messages.list().map((m) => m.text)).toEqual(["kept"]);
    reopened.close();
  });

  it("are set to NORMAL once created, in the process that created them", () => {
    const env = taskEnv();
    const task = env.layout.task("1796662569963-0a1b2c3d");
    fs.mkdirSync(task.dir, { recursive: true });
    let firstWritesRan = false;
    const db = env.sqlite.open(task.metricsDb, {
      firstWrites: (opened) => {
        // A new file's first writes run unflushed…
        expect(opened.pragma("synchronous", { simple: true })).toBe(0);
        opened.exec("CREATE TABLE t (a)");
        firstWritesRan = true;
      },
    });
    expect(firstWritesRan).toBe(true);
    expect(db.prepare("SELECT count(*) FROM t").pluck().get()).toBe(0);
    // …and the database is NORMAL (1) from then on, in WAL mode.
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
    const again = env.sqlite.open(task.metricsDb, {
      firstWrites: (opened) => expect(opened.pragma("synchronous", { simple: true })).toBe(1),
    });
    expect(again.pragma("synchronous", { simple: true })).toBe(1);
    again.close();
  });
});
