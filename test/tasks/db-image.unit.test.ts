// The per-task stores built in memory and written as whole files (how the Cline import writes
// many tasks without a WAL file and a sync per database).
import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { JournalStore } from "../../core/src/tasks/journal-store.js";
import { MessageStore, uiMessage } from "../../core/src/tasks/message-store.js";
import { MetricsStore, metricsFingerprint } from "../../core/src/tasks/metrics-store.js";
import { IN_MEMORY } from "../../core/src/tasks/task-db.js";
import { taskEnv } from "./helpers.js";

describe("stores built in memory", () => {
  it("write images that the owners open as their own WAL databases, rows included, and keep using", () => {
    const env = taskEnv();
    const task = env.layout.task("task-image");
    fs.mkdirSync(task.dir, { recursive: true });

    const built = MessageStore.open(env.sqlite, IN_MEMORY);
    built.importMany([uiMessage({ id: "m1", text: "first", role: "user" }), uiMessage({ id: "m2", text: "second" })]);
    built.append(uiMessage({ id: "m3", text: "buffered" })); // a buffered append is in the image too
    fs.writeFileSync(task.messagesDb, built.image());
    built.close();
    const journal = JournalStore.open(env.sqlite, IN_MEMORY);
    journal.appendMany([
      { kind: "k", data: "{}", publications: [{ command: "c", data: "d" }] },
      { kind: "k", data: "{}" },
    ]);
    fs.writeFileSync(task.journalDb, journal.image());
    journal.close();
    const metrics = MetricsStore.open(env.sqlite, IN_MEMORY);
    const row = { time: 1, tokensIn: 10, tokensOut: 2, cacheReads: 0, cacheWrites: 0, cost: 0.5, data: "{}" };
    expect(
      metrics.recordMany([
        { metrics: row, fingerprint: metricsFingerprint("a") },
        { metrics: row, fingerprint: metricsFingerprint("a") },
      ]),
    ).toBe(1);
    fs.writeFileSync(task.metricsDb, metrics.image());
    metrics.close();

    for (const file of [task.messagesDb, task.journalDb, task.metricsDb]) {
      const header = fs.readFileSync(file);
      expect([header[18], header[19]]).toEqual([2, 2]); // WAL, as SqliteFactory leaves every database
    }
    const messages = MessageStore.open(env.sqlite, task.messagesDb);
    try {
      expect(messages.list().map((m) => m.text)).toEqual(["first", "second", "buffered"]);
      messages.append(uiMessage({ id: "m4", text: "after" }), { durable: true });
      expect(messages.count()).toBe(4);
    } finally {
      messages.close();
    }
    const reopened = JournalStore.open(env.sqlite, task.journalDb);
    try {
      expect(reopened.entries().map((e) => e.seq)).toEqual([1, 2]);
      expect(reopened.append({ kind: "k", data: "{}" })).toBe(3); // AUTOINCREMENT carried over
      expect(reopened.publications()).toHaveLength(1);
    } finally {
      reopened.close();
    }
    const readMetrics = MetricsStore.open(env.sqlite, task.metricsDb, { readonly: true });
    try {
      expect(readMetrics.totals()).toMatchObject({ requests: 1, tokensIn: 10, cost: 0.5 });
    } finally {
      readMetrics.close();
    }
    fs.rmSync(env.roots.base, { recursive: true, force: true });
  });
});
