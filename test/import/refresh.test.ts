// What a second import does through the real sidecar: a legacy task Cline 4 continued is one
// task, counted once; an item that went on in Cline is refreshed, unless it went on in Dline.
import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { configureModel, followUntilDone, makeWorkspace } from "../runtime/harness.js";
import {
  clineHomeData,
  readOnly,
  sessionAssistant,
  sessionDocument,
  sessionMessages,
  snapshotTree,
  T0,
  writeLegacyTask,
  writeMigratedSession,
  writeSession,
} from "./fixtures.js";
import { nth } from "../helpers/items.js";

const { testRoots, sidecar, onCleanup } = scopedSidecars();

function rows(file: string, sql: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

/** Cline 4 rewrites the whole messages document when a session goes on. */
function sessionGoesOn(sessionsDir: string, id: string, messages: unknown[], at: number): void {
  const file = path.join(sessionsDir, id, `${id}.messages.json`);
  fs.writeFileSync(file, sessionDocument(id, messages, at));
  fs.utimesSync(file, new Date(at), new Date(at));
}

const more = (n: number) => [
  {
    id: `msg_more_u${n}`,
    role: "user",
    ts: T0 + 10_000 * n,
    content: [{ type: "text", text: `<user_input mode="act">Follow-up ${n}</user_input>` }],
  },
  sessionAssistant(`msg_more_a${n}`, T0 + 10_000 * n + 1, [{ type: "text", text: `Answer ${n}.` }], {
    inputTokens: 1000,
    outputTokens: 50,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    cost: 0.05,
  }),
];

describe("importing again", () => {
  it("imports a legacy task that Cline 4 continued as a session once, with the spend counted once", async () => {
    const roots = testRoots("dline-import-migrated-");
    const workspace = makeWorkspace(roots.base);
    const data = clineHomeData(roots.home);
    const usages = [
      { tokensIn: 2000, tokensOut: 400, cacheWrites: 1000, cacheReads: 0, cost: 0.0459 },
      { tokensIn: 300, tokensOut: 200, cacheWrites: 0, cacheReads: 3000, cost: 0.033 },
    ];
    writeLegacyTask(data, "1719000000000", { task: "Port the build to esbuild", usages, cwd: workspace });
    writeMigratedSession(
      path.join(data, "sessions"),
      "1719000000000",
      { task: "Port the build to esbuild", usages },
      more(1),
      workspace,
    );
    const s = await sidecar(roots);
    const res = await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }));
    const byKey = new Map(res.results.map((r) => [r.sourceKey, r]));
    expect(byKey.get("legacy:1719000000000")?.outcome).toBe("skipped");
    expect(byKey.get("session:1719000000000")?.outcome).toBe("imported");
    expect(byKey.get("session:1719000000000")?.detail).toMatch(
      /with legacy:1719000000000, which Cline 4 continued as this session/,
    );
    const listed = (await s.clients.history.listTasks({})).tasks;
    expect(listed).toHaveLength(1);
    const task = nth(listed, 0, "listed task");
    expect(task.cost.toFixed(4)).toBe("0.1289");
    expect(task.workspaceRoot).toBe(workspace);
    const dir = path.join(roots.docsDir, "tasks", task.id);
    expect(
      rows(path.join(dir, "metrics.db"), "SELECT count(*) AS n, round(sum(cost), 4) AS cost FROM requests"),
    ).toEqual([{ n: 3, cost: 0.1289 }]);
    const view = await s.clients.tasks.getTask({ taskId: task.id });
    const texts = view.messages.map((m) => m.text);
    expect(texts[0]).toBe("Port the build to esbuild");
    expect(texts.slice(-2)).toEqual(["Follow-up 1", "Answer 1."]);
    expect(texts.join("\n")).not.toMatch(/<task>|legacy conversation/);
    // Again: nothing new.
    const again = await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }));
    expect(again.results.map((r) => r.outcome).sort()).toEqual(["already_imported", "skipped"]);
    expect((await s.clients.history.listTasks({})).tasks).toHaveLength(1);
  });

  it("a legacy task imported before Cline 4 resumed it takes the session's turns in: still one task", async () => {
    const roots = testRoots("dline-import-migrated-later-");
    const workspace = makeWorkspace(roots.base);
    const data = clineHomeData(roots.home);
    const usages = [{ tokensIn: 2000, tokensOut: 400, cacheWrites: 1000, cacheReads: 0, cost: 0.0459 }];
    writeLegacyTask(data, "1719000000100", { task: "Tidy the styles", usages, cwd: workspace });
    const s = await sidecar(roots);
    const first = await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }));
    expect(first.results.map((r) => [r.sourceKey, r.outcome, r.taskId])).toEqual([
      ["legacy:1719000000100", "imported", "cline-1719000000100"],
    ]);

    // Then the user resumed it in Cline 4.
    writeMigratedSession(
      path.join(data, "sessions"),
      "1719000000100",
      { task: "Tidy the styles", usages },
      more(1),
      workspace,
    );
    const second = await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }));
    const outcomes = Object.fromEntries(second.results.map((r) => [r.sourceKey, [r.outcome, r.taskId]]));
    expect(outcomes).toEqual({
      "legacy:1719000000100": ["skipped", ""],
      "session:1719000000100": ["refreshed", "cline-1719000000100"],
    });
    const listed = (await s.clients.history.listTasks({})).tasks;
    expect(listed.map((t) => [t.id, t.cost.toFixed(4)])).toEqual([["cline-1719000000100", "0.0959"]]);
    expect(
      (await s.clients.tasks.getTask({ taskId: "cline-1719000000100" })).messages.map((m) => m.text).slice(-2),
    ).toEqual(["Follow-up 1", "Answer 1."]);
    const third = await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }));
    expect(third.results.map((r) => r.outcome).sort()).toEqual(["already_imported", "skipped"]);
    expect((await s.clients.history.listTasks({})).tasks).toHaveLength(1);
  });

  it("refreshes an imported session that went on in Cline: the new turns, their usage, and says so", async () => {
    const roots = testRoots("dline-import-refresh-");
    const sessions = path.join(clineHomeData(roots.home), "sessions");
    const id = "1717000000000_refsh";
    writeSession(sessions, id, { cwd: "/home/me/app" });
    const s = await sidecar(roots);
    const first = await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }));
    expect(nth(first.results, 0, "import result").outcome).toBe("imported");
    const taskId = nth(first.results, 0, "import result").taskId;
    expect(
      nth((await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }))).results, 0, "import result")
        .outcome,
    ).toBe("already_imported");

    sessionGoesOn(sessions, id, [...sessionMessages(), ...more(1), ...more(2)], T0 + 90_000);
    const dry = await readOnly(roots.home, () => s.clients.imports.importCline({ all: true, dryRun: true }));
    expect([nth(dry.results, 0, "import result").outcome, nth(dry.results, 0, "import result").detail]).toEqual([
      "would_refresh",
      "changed in Cline since the import",
    ]);
    expect((await s.clients.tasks.getTask({ taskId })).messages).toHaveLength(4);

    const second = await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }));
    expect([
      nth(second.results, 0, "import result").outcome,
      nth(second.results, 0, "import result").taskId,
      nth(second.results, 0, "import result").detail,
    ]).toEqual(["refreshed", taskId, "changed in Cline since the import"]);
    const view = await s.clients.tasks.getTask({ taskId });
    expect(view.messages.map((m) => m.text).slice(-4)).toEqual([
      "Follow-up 1",
      "Answer 1.",
      "Follow-up 2",
      "Answer 2.",
    ]);
    expect(view.task?.cost.toFixed(2)).toBe("0.13");
    const dir = path.join(roots.docsDir, "tasks", taskId);
    expect(rows(path.join(dir, "metrics.db"), "SELECT count(*) AS n FROM requests")).toEqual([{ n: 4 }]);
    expect(rows(path.join(dir, "journal.db"), "SELECT count(*) AS n FROM entries")).toEqual([{ n: 9 }]);
    expect((await s.clients.history.listTasks({})).tasks).toHaveLength(1);
    expect(
      nth((await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }))).results, 0, "import result")
        .outcome,
    ).toBe("already_imported");
  });

  it("leaves an imported task that was continued in Dline as it is when its source changes, and says why", async () => {
    const roots = testRoots("dline-import-refresh-kept-");
    const workspace = makeWorkspace(roots.base);
    const sessions = path.join(clineHomeData(roots.home), "sessions");
    const id = "1717000000000_kept1";
    writeSession(sessions, id, { cwd: workspace });
    const s = await sidecar(roots);
    const { server } = await configureModel(s.clients, "anthropic", {
      turns: [{ text: "Done in Dline.", toolCalls: [{ name: "attempt_completion", input: { result: "ok" } }] }],
    });
    onCleanup(() => server.stop());
    const taskId = nth((await s.clients.imports.importCline({ all: true })).results, 0, "import result").taskId;
    await s.clients.tasks.sendMessage({ taskId, text: "Continue here" });
    await followUntilDone(s.clients, taskId);
    const before = (await s.clients.tasks.getTask({ taskId })).messages.map((m) => m.text);
    expect(before).toContain("Continue here");

    sessionGoesOn(sessions, id, [...sessionMessages(), ...more(1)], T0 + 90_000);
    const clineBefore = snapshotTree(roots.home);
    const res = await s.clients.imports.importCline({ all: true });
    expect(nth(res.results, 0, "import result").outcome).toBe("skipped");
    expect(nth(res.results, 0, "import result").error).toMatch(
      /changed in Cline since the import, but .* was continued or rewound in Dline: not refreshed, nothing overwritten/,
    );
    expect((await s.clients.tasks.getTask({ taskId })).messages.map((m) => m.text)).toEqual(before);
    expect(snapshotTree(roots.home)).toEqual(clineBefore);
  });

  it("refreshes a task imported by an earlier version of the import (no record of its source) with what the import reads now", async () => {
    const roots = testRoots("dline-import-refresh-older-");
    writeLegacyTask(clineHomeData(roots.home), "6301", {
      task: "Old import",
      cwd: "/home/me/old",
      extra: [
        {
          type: "say",
          say: "subagent_usage",
          text: JSON.stringify({
            source: "subagents",
            tokensIn: 10,
            tokensOut: 5,
            cacheWrites: 0,
            cacheReads: 0,
            cost: 0.5,
          }),
        },
      ],
    });
    const s = await sidecar(roots);
    const taskId = nth(
      (await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }))).results,
      0,
      "result",
    ).taskId;
    // What an earlier version left: task_metadata.json without the record of the source.
    const metadataFile = path.join(roots.docsDir, "tasks", taskId, "task_metadata.json");
    const metadata = JSON.parse(fs.readFileSync(metadataFile, "utf8"));
    delete metadata.importedFrom.record;
    fs.writeFileSync(metadataFile, JSON.stringify(metadata));
    const res = await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }));
    expect([nth(res.results, 0, "import result").outcome, nth(res.results, 0, "import result").detail]).toEqual([
      "refreshed",
      "imported by an earlier version of the import",
    ]);
    expect((await s.clients.tasks.getTask({ taskId })).task?.cost.toFixed(2)).toBe("0.51");
    expect(
      nth((await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }))).results, 0, "import result")
        .outcome,
    ).toBe("already_imported");
  });
});
