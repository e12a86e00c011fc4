import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  ClineImporter,
  discoveryContext,
  importedTaskId,
  listCandidates,
  parseCandidate,
  resolveClineRoots,
} from "../../core/src/import/index.js";
import { ImportCommitter } from "../../core/src/import/import-committer.js";
import { importRecord } from "../../core/src/import/import-record.js";
import { buildImportedTask, type BuiltTask } from "../../core/src/import/imported-task-writer.js";
import type { ImportItemResult } from "../../core/src/import/import-types.js";
import { createLogger } from "../../core/src/logging/logger.js";
import { InstanceLayout } from "../../core/src/storage/instance-layout.js";
import { openTaskStorage, type TaskStorage } from "../../core/src/tasks/task-storage.js";
import { fillDisk, mountSmallTmpfs } from "../helpers/small-disk.js";
import { taskEnv, type TaskEnv } from "../tasks/helpers.js";
import { clineHomeData, writeLegacyTask } from "./fixtures.js";
import { nth, firstOf } from "../helpers/items.js";

// The import's commit, in process: what it writes becomes a task only whole (files synced, then
// the history row), and a commit that fails leaves nothing behind that looks like a task.

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

function recordingLogger() {
  const lines: any[] = [];
  return { lines, logger: createLogger({ write: (l) => lines.push(JSON.parse(l)), close: () => {} }, "debug") };
}

async function importerFor(env: TaskEnv, layout = env.layout) {
  const { lines, logger } = recordingLogger();
  const storage = await openTaskStorage({ layout, sqlite: env.sqlite, logger });
  cleanup.push(() => storage.close());
  const importer = new ClineImporter({
    env: { HOME: env.roots.home },
    platform: "linux",
    layout,
    sqlite: env.sqlite,
    tasks: async () => storage,
    logger,
  });
  return { importer, storage, lines };
}

function writeClineTasks(env: TaskEnv, count: number, padTo?: number, conversation?: false): string[] {
  const root = clineHomeData(env.roots.home);
  const ids = Array.from({ length: count }, (_, i) => `17170000${String(i).padStart(5, "0")}`);
  for (const id of ids) writeLegacyTask(root, id, { task: `Cline task ${id}`, padTo, conversation });
  return ids;
}

/** Task folders under the data root (what a reader of tasks/ would take for tasks). */
function taskFolders(layout: InstanceLayout): string[] {
  if (!fs.existsSync(layout.tasksDir)) return [];
  return fs
    .readdirSync(layout.tasksDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => e.name);
}

describe("committing imported tasks", () => {
  it("makes every item of a large import a whole task (several batches), and frees every claim", async () => {
    const env = taskEnv();
    writeClineTasks(env, 70);
    const { importer, storage, lines } = await importerFor(env);
    const results = await importer.import({ sourceKeys: [], all: true, dryRun: false });
    expect(results).toHaveLength(70);
    expect(results.filter((r) => r.outcome !== "imported")).toEqual([]);
    const ids = results.map((r) => r.taskId);
    expect(new Set(ids).size).toBe(70);
    expect(storage.history.count()).toBe(70);
    for (const id of ids) {
      const task = env.layout.task(id);
      expect(storage.history.get(id)?.title).toMatch(/^Cline task /);
      expect(fs.statSync(task.messagesDb).mode & 0o777).toBe(0o600);
      expect(fs.existsSync(task.ownerLock)).toBe(false);
      expect(storage.ownership.holds(id)).toBe(false);
      expect(storage.store.get(id).messages.length).toBeGreaterThan(0);
    }
    expect(lines.find((l) => l.msg === "imported from Cline")).toMatchObject({ tasks: 70, refreshed: 0 });
    const again = await importer.import({ sourceKeys: [], all: true, dryRun: false });
    expect(new Set(again.map((r) => r.outcome))).toEqual(new Set(["already_imported"]));
    expect(lines.filter((l) => l.msg === "imported from Cline")).toHaveLength(1);
  });

  it("imports one named item and nothing else", async () => {
    const env = taskEnv();
    writeClineTasks(env, 3);
    const { importer, storage } = await importerFor(env);
    const listed = await importer.discover();
    const key = nth(listed.items, 1, "listed item").sourceKey;
    const result = nth(await importer.import({ sourceKeys: [key], all: false, dryRun: false }), 0, "import result");
    expect(result.outcome).toBe("imported");
    expect(storage.history.list().tasks.map((t) => t.id)).toEqual([result.taskId]);
  });

  it("a commit the disk refuses fails its items with the reason and leaves no folder, row or claim; the next import does them", async (ctx) => {
    // A real full disk: a small tmpfs, which needs root (as CI and the development machines run).
    const mount = mountSmallTmpfs(4);
    if (!("dir" in mount)) {
      console.log(`disk-full import test skipped: ${mount.reason}`);
      return ctx.skip();
    }
    cleanup.push(() => mount.unmount());
    const env = taskEnv();
    // Tasks of some hundred messages: their databases do not fit in what is left of the disk.
    writeClineTasks(env, 5, 600);
    // The tasks (and their index) live under the documents root.
    const layout = new InstanceLayout({
      dataRoot: env.layout.roots.dataRoot,
      homeRoot: env.roots.homeDir,
      documentsRoot: path.join(mount.dir, "docs"),
    });
    const { importer, storage, lines } = await importerFor(env, layout);
    // The index and the claims fit; the tasks' databases do not.
    const reserve = path.join(mount.dir, "reserve.bin");
    fs.writeFileSync(reserve, Buffer.alloc(64 * 1024));
    const filler = fillDisk(mount.dir);
    fs.rmSync(reserve);
    const results = await importer.import({ sourceKeys: [], all: true, dryRun: false });
    expect(results.map((r) => r.outcome)).toEqual(Array(5).fill("failed"));
    expect(results.every((r) => r.error.includes("ENOSPC"))).toBe(true);
    expect(storage.history.count()).toBe(0);
    expect(taskFolders(layout)).toEqual([]);
    for (const r of results) expect(storage.ownership.holds(r.taskId)).toBe(false);
    expect(lines.find((l) => l.msg === "committing imported tasks failed")).toMatchObject({ level: "warn", count: 5 });
    expect(lines.find((l) => l.msg === "imported from Cline")).toBeUndefined();
    fs.rmSync(filler);
    const retried = await importer.import({ sourceKeys: [], all: true, dryRun: false });
    expect(retried.map((r) => r.outcome)).toEqual(Array(5).fill("imported"));
    expect(storage.history.count()).toBe(5);
  });
});

/**
 * Tasks built as the importer builds them (parsed from Cline's files, then each owner's files in
 * memory), claimed, ready for the committer. `padTo` makes their files larger.
 */
function builtTasks(
  env: TaskEnv,
  storage: TaskStorage,
  layout: InstanceLayout,
  count: number,
  padTo?: number,
  conversation?: false,
): BuiltTask[] {
  writeClineTasks(env, count, padTo, conversation);
  const ctx = discoveryContext(resolveClineRoots({ HOME: env.roots.home }, "linux"));
  return listCandidates(ctx.roots).candidates.map((c) => {
    const taskId = importedTaskId(c.kind, c.sourceId);
    storage.ownership.claim(taskId, { mustExist: false });
    const parsed = parseCandidate(c, ctx);
    return buildImportedTask(
      env.sqlite,
      layout.task(taskId),
      taskId,
      parsed,
      Date.now(),
      importRecord(parsed, "stamp"),
    );
  });
}

/** A built task whose folder went away before the commit: writing its files fails. */
function doomed(task: BuiltTask): BuiltTask {
  fs.rmSync(task.dir, { recursive: true, force: true });
  return task;
}

function pending(): Pick<ImportItemResult, "outcome" | "error"> {
  return { outcome: "failed", error: "" };
}

describe("the import committer's batches", () => {
  async function committerFor(env: TaskEnv, layout = env.layout) {
    const { logger } = recordingLogger();
    const storage = await openTaskStorage({ layout, sqlite: env.sqlite, logger });
    cleanup.push(() => storage.close());
    return { storage, committer: new ImportCommitter(storage, layout.tasksDir, logger) };
  }

  it("a batch is committed once 64 tasks wait: a task failing after them fails alone", async () => {
    const env = taskEnv();
    const { storage, committer } = await committerFor(env);
    // Small tasks (no conversation to journal): 64 of them stay far below the batch's 4 MB.
    const tasks = builtTasks(env, storage, env.layout, 65, undefined, false);
    expect(tasks.slice(0, 64).reduce((n, t) => n + t.files.reduce((m, f) => m + f.bytes.length, 0), 0)).toBeLessThan(
      3 * 1024 * 1024,
    );
    const results = tasks.map(() => pending());
    for (let i = 0; i < 64; i++) await committer.add(nth(tasks, i, "task"), nth(results, i, "import result"));
    await committer.add(doomed(nth(tasks, 64, "task")), nth(results, 64, "import result"));
    await committer.flush();
    expect(results.slice(0, 64).every((r) => r.outcome === "imported")).toBe(true);
    expect(nth(results, 64, "import result").outcome).toBe("failed");
    expect(nth(results, 64, "import result").error).toContain("ENOENT");
    expect(committer.committed).toBe(64);
    expect(storage.history.count()).toBe(64);
    expect(storage.ownership.holds(nth(tasks, 64, "task").taskId)).toBe(false);
  });

  it("a batch is committed once its files reach 4 MB: a task failing after them fails alone", async () => {
    const env = taskEnv();
    const { storage, committer } = await committerFor(env);
    // Tasks of about 1.4 MB each: the third fills the batch.
    const tasks = builtTasks(env, storage, env.layout, 4, 4000);
    const sizes = tasks.map((t) => t.files.reduce((n, f) => n + f.bytes.length, 0));
    const [first, second, third] = firstOf(sizes, 3, "task size");
    expect(first + second).toBeLessThan(4 * 1024 * 1024);
    expect(first + second + third).toBeGreaterThanOrEqual(4 * 1024 * 1024);
    const results = tasks.map(() => pending());
    for (let i = 0; i < 3; i++) await committer.add(nth(tasks, i, "task"), nth(results, i, "import result"));
    await committer.add(doomed(nth(tasks, 3, "task")), nth(results, 3, "import result"));
    await committer.flush();
    expect(results.map((r) => r.outcome)).toEqual(["imported", "imported", "imported", "failed"]);
  });

  it("a batch is committed once its first task waited a second: a task failing after that fails alone", async () => {
    const env = taskEnv();
    const { storage, committer } = await committerFor(env);
    const tasks = builtTasks(env, storage, env.layout, 3);
    const results = tasks.map(() => pending());
    await committer.add(nth(tasks, 0, "task"), nth(results, 0, "import result"));
    // Past the batch's age (not a measurement: the commit must not wait for more tasks).
    const started = Date.now();
    while (Date.now() - started <= 1000) await new Promise((r) => setTimeout(r, 50));
    await committer.add(nth(tasks, 1, "task"), nth(results, 1, "import result"));
    await committer.add(doomed(nth(tasks, 2, "task")), nth(results, 2, "import result"));
    await committer.flush();
    expect(results.map((r) => r.outcome)).toEqual(["imported", "imported", "failed"]);
  });

  it("a failed commit reports the error, cut to 500 characters", async () => {
    const env = taskEnv();
    // A documents root deep enough that the failing file's path makes a message over 500
    // characters (and short enough for SQLite, which opens paths of up to 512).
    let deep = env.roots.docsDir;
    while (deep.length < 450) deep = path.join(deep, "x".repeat(Math.min(40, 450 - deep.length)));
    const layout = new InstanceLayout({
      dataRoot: env.layout.roots.dataRoot,
      homeRoot: env.roots.homeDir,
      documentsRoot: deep,
    });
    const { storage, committer } = await committerFor(env, layout);
    const task = nth(builtTasks(env, storage, layout, 1), 0, "built task");
    const result = pending();
    await committer.add(doomed(task), result);
    await committer.flush();
    expect(result.outcome).toBe("failed");
    expect(result.error.length).toBe(500);
    expect(result.error).toMatch(/^ENOENT: no such file or directory, open '/);
    expect(taskFolders(layout)).toEqual([]);
  });
});
