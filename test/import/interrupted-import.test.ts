// Crash safety of the batched import (a benchmark goal of the import): files are written without a
// sync per file, synced per batch, and the history row is the commit point. A killed import
// must leave complete tasks or folders the next import redoes from scratch.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import type { TestRoots } from "../helpers/sidecar.js";
import { clineHomeData, vscodeGlobalStorage, writeLegacyTask } from "./fixtures.js";
import { nth } from "../helpers/items.js";

const { testRoots, sidecar } = scopedSidecars();

function query(file: string, sql: string): unknown[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

/** Ids of the imported rows in taskHistory.db, read as another process would (none before the index exists). */
function importedRows(roots: TestRoots): string[] {
  const file = path.join(roots.docsDir, "tasks", "taskHistory.db");
  if (!fs.existsSync(file) || query(file, "SELECT 1 FROM sqlite_master WHERE name = 'tasks'").length === 0) return [];
  return (query(file, "SELECT id FROM tasks WHERE source LIKE 'cline-import:%'") as { id: string }[]).map((r) => r.id);
}

/** A pid that is certainly not running (a child that has exited). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("a Cline import interrupted at any point", () => {
  it("replaces what an interrupted attempt left in the task folder: torn files, a stale -wal, a stale claim", async () => {
    const roots = testRoots("dline-import-leftovers-");
    writeLegacyTask(vscodeGlobalStorage(roots.home, "Code"), "8001", { task: "Left over", padTo: 50 });
    // What a killed attempt may leave (no history row): a torn messages.db, a -wal that must never
    // be replayed over a new database, a metrics.db holding a request that is not in the source,
    // a half-written metadata file and the dead process's claim.
    const dir = path.join(roots.docsDir, "tasks", "cline-8001");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "messages.db"), "SQLite format 3\0torn");
    fs.writeFileSync(path.join(dir, "messages.db-wal"), Buffer.alloc(4096, 7));
    const stale = new Database(path.join(dir, "metrics.db"));
    stale.exec(
      "CREATE TABLE requests (seq INTEGER PRIMARY KEY, fingerprint TEXT UNIQUE); INSERT INTO requests (fingerprint) VALUES ('stale')",
    );
    stale.close();
    fs.writeFileSync(path.join(dir, "task_metadata.json"), '{"id": "cline-80');
    fs.writeFileSync(
      path.join(dir, "owner.lock"),
      JSON.stringify({ pid: deadPid(), hostname: os.hostname(), since: Date.now() - 60_000 }),
    );

    const s = await sidecar(roots);
    const res = await s.clients.imports.importCline({ all: true });
    expect(res.results.map((r) => [r.sourceKey, r.outcome, r.error])).toEqual([["legacy:8001", "imported", ""]]);
    const view = await s.clients.tasks.getTask({ taskId: "cline-8001" });
    expect(view.messages).toHaveLength(50);
    expect(nth(view.messages, 0, "message").text).toBe("Left over");
    expect(
      query(path.join(dir, "metrics.db"), "SELECT count(*) AS n FROM requests WHERE fingerprint = 'stale'"),
    ).toEqual([{ n: 0 }]);
    expect(query(path.join(dir, "metrics.db"), "SELECT count(*) AS n FROM requests")).toEqual([{ n: 1 }]);
    expect(JSON.parse(fs.readFileSync(path.join(dir, "task_metadata.json"), "utf8")).source).toBe(
      "cline-import:legacy:8001",
    );
    expect(fs.existsSync(path.join(dir, "owner.lock"))).toBe(false);
  });

  it("outwaits a claim torn by a sidecar killed between creating its lock file and writing it", async () => {
    const roots = testRoots("dline-import-torn-claim-");
    writeLegacyTask(clineHomeData(roots.home), "8051", { task: "Torn claim", padTo: 20 });
    const dir = path.join(roots.docsDir, "tasks", "cline-8051");
    fs.mkdirSync(dir, { recursive: true });
    // An empty lock file, as young as a live writer's for the whole import (its mtime is ahead):
    // only waiting out the grace period, not a count of quick retries, gets past it.
    const lock = path.join(dir, "owner.lock");
    fs.writeFileSync(lock, "");
    const ahead = new Date(Date.now() + 60_000);
    fs.utimesSync(lock, ahead, ahead);

    const s = await sidecar(roots);
    const res = await s.clients.imports.importCline({ all: true });
    expect(res.results.map((r) => [r.sourceKey, r.outcome, r.error])).toEqual([["legacy:8051", "imported", ""]]);
    expect((await s.clients.tasks.getTask({ taskId: "cline-8051" })).messages).toHaveLength(20);
    expect(fs.existsSync(lock)).toBe(false);
  });

  it("writes databases that are whole WAL-mode files: nothing to replay, intact, at the owners' schema version", async () => {
    const roots = testRoots("dline-import-images-");
    writeLegacyTask(clineHomeData(roots.home), "8101", { task: "Images", padTo: 30 });
    const s = await sidecar(roots);
    expect(nth((await s.clients.imports.importCline({ all: true })).results, 0, "import result").outcome).toBe(
      "imported",
    );
    await s.stop();
    const dir = path.join(roots.docsDir, "tasks", "cline-8101");
    for (const name of ["messages.db", "journal.db", "metrics.db"]) {
      const file = path.join(dir, name);
      const header = fs.readFileSync(file).subarray(0, 20);
      expect([header[18], header[19]], name).toEqual([2, 2]); // WAL, as SqliteFactory leaves a database
      expect(query(file, "PRAGMA integrity_check"), name).toEqual([{ integrity_check: "ok" }]);
      expect(query(file, "PRAGMA user_version"), name).toEqual([{ user_version: 1 }]);
    }
    expect(query(path.join(dir, "messages.db"), "SELECT count(*) AS n FROM messages")).toEqual([{ n: 30 }]);
    expect(query(path.join(dir, "journal.db"), "SELECT value FROM meta WHERE key = 'cline_import_source'")).toEqual([
      { value: "legacy:8101" },
    ]);
  });

  it("a SIGKILL after some batches were committed leaves complete tasks; the next import redoes only the others", async () => {
    const roots = testRoots("dline-import-kill-batches-");
    const TASKS = 160;
    for (let i = 0; i < TASKS; i++)
      writeLegacyTask(clineHomeData(roots.home), `${8200 + i}`, { task: `batch ${i}`, padTo: 60 });
    const first = await sidecar(roots);
    const pending = first.clients.imports.importCline({ all: true }).catch((err: Error) => err);
    for (let i = 0; i < 2000 && importedRows(roots).length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    first.process.child.kill("SIGKILL");
    expect(await first.process.exited).toBe("SIGKILL");
    await pending;

    // Every row committed before the kill is a complete task, readable without the sidecar.
    const committed = importedRows(roots);
    expect(committed.length).toBeGreaterThan(0);
    expect(committed.length).toBeLessThan(TASKS);
    for (const id of committed) {
      const dir = path.join(roots.docsDir, "tasks", id);
      expect(query(path.join(dir, "messages.db"), "SELECT count(*) AS n FROM messages"), id).toEqual([{ n: 60 }]);
      expect(query(path.join(dir, "journal.db"), "SELECT count(*) AS n FROM entries"), id).toEqual([{ n: 4 }]);
    }

    const second = await sidecar(roots);
    const res = await second.clients.imports.importCline({ all: true });
    const outcomes = new Map<string, number>();
    for (const r of res.results) outcomes.set(r.outcome, (outcomes.get(r.outcome) ?? 0) + 1);
    expect(Object.fromEntries(outcomes)).toEqual({
      already_imported: committed.length,
      imported: TASKS - committed.length,
    });
    const listed = (await second.clients.history.listTasks({ pageSize: 500 })).tasks;
    expect(listed).toHaveLength(TASKS);
    for (const t of listed) {
      const dir = path.join(roots.docsDir, "tasks", t.id);
      expect(query(path.join(dir, "messages.db"), "SELECT count(*) AS n FROM messages"), t.id).toEqual([{ n: 60 }]);
      expect(query(path.join(dir, "metrics.db"), "SELECT count(*) AS n FROM requests"), t.id).toEqual([{ n: 1 }]);
      const lock = path.join(dir, "owner.lock");
      // The kill may come between a batch's commit and the release of its claims: such a claim
      // names the dead sidecar, which owns nothing any more.
      if (committed.includes(t.id) && fs.existsSync(lock)) {
        expect(JSON.parse(fs.readFileSync(lock, "utf8")).pid, t.id).toBe(first.process.handshake.pid);
        expect((await second.clients.tasks.getTask({ taskId: t.id })).ownerPid, t.id).toBe(0);
      } else {
        expect(fs.existsSync(lock), t.id).toBe(false);
      }
    }
  });
});
