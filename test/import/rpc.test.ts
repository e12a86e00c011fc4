import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ImportItemKind } from "../../core/src/gen/dline/v1/import_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import type { TestRoots } from "../helpers/sidecar.js";
import { makeWorkspace } from "../runtime/harness.js";
import {
  clineHomeData,
  readOnly,
  sessionManifest,
  snapshotTree,
  T0,
  vscodeGlobalStorage,
  writeLegacyTask,
  writeSession,
} from "./fixtures.js";
import { nth } from "../helpers/items.js";

const { testRoots, sidecar } = scopedSidecars();

/** A Cline tree with every kind of item the import must handle. */
function clineTree(home: string, workspace: string) {
  const sessions = path.join(clineHomeData(home), "sessions");
  writeLegacyTask(vscodeGlobalStorage(home, "Code"), "5001", {
    task: "Make the tests pass",
    cwd: "/home/me/tests-project",
    favorite: true,
    mtime: new Date(T0 + 60_000),
    extra: [{ type: "say", say: "user_feedback", text: "see screenshot", images: ["data:image/png;base64,AAAA"] }],
  });
  writeLegacyTask(clineHomeData(home), "5001", { task: "stale copy", mtime: new Date(T0) });
  writeLegacyTask(vscodeGlobalStorage(home, "Code - Insiders"), "5002", { rawUi: '[{"ts": 1, "type": "say", "te' });
  writeLegacyTask(clineHomeData(home), "5003", { task: "No conversation here", conversation: false });
  writeSession(sessions, "1717000000000_aaaaa", { cwd: workspace, subagents: ["helper", "helper__t1"] });
  writeSession(sessions, "1717000000000_aaaab", { cwd: path.join(clineHomeData(home), "workspaces", "chat") });
  writeSession(sessions, "1717000000009_zzzzz", {
    manifest: sessionManifest("1717000000009_zzzzz", workspace, {
      metadata: { importedFrom: { source: "claude-code" } },
    }),
  });
}

function rows(file: string, sql: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

function taskFolders(roots: TestRoots): string[] {
  const dir = path.join(roots.docsDir, "tasks");
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => fs.statSync(path.join(dir, n)).isDirectory()) : [];
}

describe("ImportService through the real sidecar", () => {
  it("discovers, dry-runs without writing, imports once through the owners, and never touches Cline's files", async () => {
    const roots = testRoots("dline-import-");
    const workspace = makeWorkspace(roots.base);
    clineTree(roots.home, workspace);
    const clineBefore = snapshotTree(roots.home);
    const s = await sidecar(roots);
    const { clients } = s;

    const found = await clients.imports.discoverCline({});
    const keys = found.items.map((i) => i.sourceKey).sort();
    expect(keys).toEqual([
      "legacy:5001",
      "legacy:5001@cline-data",
      "legacy:5002",
      "legacy:5003",
      "session:1717000000000_aaaaa",
      "session:1717000000000_aaaaa/helper",
      "session:1717000000000_aaaaa/helper__t1",
      "session:1717000000000_aaaab",
      "session:1717000000009_zzzzz",
    ]);
    const item = (key: string) => found.items.find((i) => i.sourceKey === key)!;
    expect(item("legacy:5001").title).toBe("Make the tests pass");
    expect(item("legacy:5001").kind).toBe(ImportItemKind.LEGACY_TASK);
    expect(item("legacy:5001").tokensIn).toBe(100n);
    expect(item("legacy:5001").models).toEqual(["claude-sonnet-4-5"]);
    expect(item("legacy:5001@cline-data").skippedCode).toBe("duplicate");
    expect(item("legacy:5002").skippedCode).toBe("malformed");
    expect(item("session:1717000000000_aaaaa").workspaceRoot).toBe(workspace);
    expect(item("session:1717000000000_aaaaa").kind).toBe(ImportItemKind.SESSION);
    expect(item("session:1717000000000_aaaaa/helper").skippedCode).toBe("subagent_file");
    expect(item("session:1717000000000_aaaab").workspaceRoot).toBe("");
    expect(item("session:1717000000009_zzzzz").skippedCode).toBe("imported_elsewhere");
    expect(found.rootsSearched).toContain(path.join(vscodeGlobalStorage(roots.home, "VSCodium"), "tasks"));

    // A dry run reports and writes nothing.
    const dry = await clients.imports.importCline({ all: true, dryRun: true });
    expect(dry.dryRun).toBe(true);
    const outcome = (res: typeof dry, key: string) => res.results.find((r) => r.sourceKey === key)!;
    expect(outcome(dry, "legacy:5001").outcome).toBe("would_import");
    expect(outcome(dry, "legacy:5002").outcome).toBe("skipped");
    expect(outcome(dry, "legacy:5002").error).toMatch(/not valid JSON/);
    expect(taskFolders(roots)).toEqual([]);
    expect((await clients.history.listTasks({})).tasks).toHaveLength(0);

    // WatchHistory subscribers hear about the imported tasks.
    const watch = new AbortController();
    const heard: string[] = [];
    const watching = (async () => {
      try {
        for await (const n of clients.history.watchHistory({}, { signal: watch.signal })) {
          heard.push(...n.changedTaskIds);
          if (heard.length >= 4) break;
        }
      } catch {
        // aborted
      }
    })();
    await new Promise((r) => setTimeout(r, 200));

    const res = await clients.imports.importCline({ all: true });
    const imported = res.results
      .filter((r) => r.outcome === "imported")
      .map((r) => r.sourceKey)
      .sort();
    expect(imported).toEqual([
      "legacy:5001",
      "legacy:5003",
      "session:1717000000000_aaaaa",
      "session:1717000000000_aaaab",
    ]);
    for (const key of [
      "legacy:5001@cline-data",
      "legacy:5002",
      "session:1717000000000_aaaaa/helper",
      "session:1717000000009_zzzzz",
    ]) {
      expect(outcome(res, key).outcome, key).toBe("skipped");
      expect(outcome(res, key).error, key).not.toBe("");
    }
    expect(outcome(res, "legacy:5001").notCarriedOver.join("\n")).toMatch(/image/);
    expect(outcome(res, "legacy:5003").notCarriedOver.join("\n")).toMatch(/no api_conversation_history\.json/);
    const timer = setTimeout(() => watch.abort(), 5000);
    await watching;
    clearTimeout(timer);
    watch.abort();
    expect(new Set(heard)).toEqual(new Set(res.results.filter((r) => r.outcome === "imported").map((r) => r.taskId)));

    // Listed, with the source key; the session is listed under its workspace.
    const listed = (await clients.history.listTasks({})).tasks;
    expect(listed).toHaveLength(4);
    const legacyId = outcome(res, "legacy:5001").taskId;
    const legacyRow = listed.find((t) => t.id === legacyId)!;
    expect(legacyRow.source).toBe("cline-import:legacy:5001");
    expect(legacyRow.tokensIn).toBe(100n);
    expect(legacyRow.status).toBe(TaskStatus.COMPLETED);
    expect(legacyRow.favorite).toBe(true);
    const inWorkspace = (await clients.history.listTasks({ workspaceRoot: workspace })).tasks;
    expect(inWorkspace.map((t) => t.id)).toEqual([outcome(res, "session:1717000000000_aaaaa").taskId]);
    // The legacy task is listed under the folder Cline recorded for it.
    expect(legacyRow.workspaceRoot).toBe("/home/me/tests-project");
    expect(
      (await clients.history.listTasks({ workspaceRoot: "/home/me/tests-project" })).tasks.map((t) => t.id),
    ).toEqual([legacyId]);

    // GetTask shows the messages.
    const legacyTask = await clients.tasks.getTask({ taskId: legacyId });
    expect(legacyTask.messages.map((m) => m.text)).toContain("Make the tests pass");
    expect(item("legacy:5001").messageCount).toBe(6n);
    expect(legacyTask.messages).toHaveLength(6);
    const sessionTask = await clients.tasks.getTask({ taskId: outcome(res, "session:1717000000000_aaaaa").taskId });
    expect(sessionTask.messages.map((m) => m.text)).toEqual([
      "Add a README",
      "I will write the README.",
      "write_to_file",
      "README written.",
    ]);

    // The files, through their owners.
    const dir = path.join(roots.docsDir, "tasks", legacyId);
    expect(JSON.parse(fs.readFileSync(path.join(dir, "task_metadata.json"), "utf8")).source).toBe(
      "cline-import:legacy:5001",
    );
    expect(rows(path.join(dir, "journal.db"), "SELECT kind FROM entries")).toEqual(
      Array(4).fill({ kind: "legacy_conversation_message" }),
    );
    expect(rows(path.join(dir, "metrics.db"), "SELECT tokens_in FROM requests")).toEqual([{ tokens_in: 100 }]);

    // Idempotent: importing again changes nothing.
    const again = await clients.imports.importCline({ all: true });
    expect(again.results.filter((r) => r.outcome === "imported")).toEqual([]);
    expect(outcome(again, "legacy:5001").outcome).toBe("already_imported");
    await expect(clients.imports.importCline({})).rejects.toMatchObject({ code: Code.InvalidArgument });
    const one = await clients.imports.importCline({ sourceKeys: ["legacy:5001", "legacy:nope"] });
    expect(one.results.map((r) => r.outcome)).toEqual(["already_imported", "failed"]);
    expect(nth(one.results, 1, "import result").errorCode).toBe("unknown_source_key");
    expect((await clients.history.listTasks({})).tasks).toHaveLength(4);
    expect(rows(path.join(dir, "metrics.db"), "SELECT count(*) AS n FROM requests")).toEqual([{ n: 1 }]);
    expect(rows(path.join(dir, "journal.db"), "SELECT count(*) AS n FROM entries")).toEqual([{ n: 4 }]);
    const rediscovered = await clients.imports.discoverCline({});
    expect(rediscovered.items.find((i) => i.sourceKey === "legacy:5001")!.importedTaskId).toBe(legacyId);

    // Read-only: every byte and modification time under the Cline roots is unchanged.
    expect(snapshotTree(roots.home)).toEqual(clineBefore);
  });

  it("imports each item once when two sidecars import the same tree at the same time", async () => {
    const roots = testRoots("dline-import-race-");
    for (let i = 0; i < 24; i++)
      writeLegacyTask(vscodeGlobalStorage(roots.home, i % 2 ? "Code" : "VSCodium"), `${7000 + i}`, {
        task: `task ${i}`,
      });
    const [a, b] = [await sidecar(roots), await sidecar(roots)];
    const [ra, rb] = await readOnly(roots.home, () =>
      Promise.all([a.clients.imports.importCline({ all: true }), b.clients.imports.importCline({ all: true })]),
    );
    for (let i = 0; i < 24; i++) {
      const key = `legacy:${7000 + i}`;
      const outcomes = [ra, rb].map((r) => r.results.find((x) => x.sourceKey === key)!.outcome).sort();
      expect(outcomes, key).toEqual(["already_imported", "imported"]);
    }
    const listed = await a.clients.history.listTasks({ pageSize: 100 });
    expect(listed.tasks).toHaveLength(24);
    for (const t of listed.tasks) {
      expect(rows(path.join(roots.docsDir, "tasks", t.id, "metrics.db"), "SELECT count(*) AS n FROM requests")).toEqual(
        [{ n: 1 }],
      );
      expect(fs.existsSync(path.join(roots.docsDir, "tasks", t.id, "owner.lock"))).toBe(false);
    }
  });

  it("finishes an import that a SIGKILL interrupted: the next import completes it, counting nothing twice", async () => {
    const roots = testRoots("dline-import-kill-");
    const TASKS = 40;
    for (let i = 0; i < TASKS; i++)
      writeLegacyTask(clineHomeData(roots.home), `${9000 + i}`, { task: `killed ${i}`, padTo: 120 });
    const clineBefore = snapshotTree(roots.home);
    const first = await sidecar(roots);
    const pending = first.clients.imports.importCline({ all: true }).catch((err: Error) => err);
    for (let i = 0; i < 400 && taskFolders(roots).length < 5; i++) await new Promise((r) => setTimeout(r, 10));
    first.process.child.kill("SIGKILL");
    expect(await first.process.exited).toBe("SIGKILL");
    await pending;
    const importedBefore = await (async () => {
      const s = await sidecar(roots);
      const n = (await s.clients.history.listTasks({ pageSize: 100 })).tasks.length;
      await s.stop();
      return n;
    })();
    expect(importedBefore).toBeLessThan(TASKS);

    const second = await sidecar(roots);
    const res = await second.clients.imports.importCline({ all: true });
    const counts = new Map<string, number>();
    for (const r of res.results) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
    expect(res.results.filter((r) => r.outcome === "failed").map((r) => [r.sourceKey, r.error])).toEqual([]);
    expect((counts.get("imported") ?? 0) + (counts.get("already_imported") ?? 0)).toBe(TASKS);
    expect(counts.get("already_imported") ?? 0).toBe(importedBefore);
    const listed = (await second.clients.history.listTasks({ pageSize: 100 })).tasks;
    expect(listed).toHaveLength(TASKS);
    for (const t of listed) {
      const view = await second.clients.tasks.getTask({ taskId: t.id });
      expect(view.messages, t.id).toHaveLength(120);
      expect(rows(path.join(roots.docsDir, "tasks", t.id, "metrics.db"), "SELECT count(*) AS n FROM requests")).toEqual(
        [{ n: 1 }],
      );
      expect(rows(path.join(roots.docsDir, "tasks", t.id, "journal.db"), "SELECT count(*) AS n FROM entries")).toEqual([
        { n: 4 },
      ]);
    }
    expect(snapshotTree(roots.home)).toEqual(clineBefore);
  });
});
