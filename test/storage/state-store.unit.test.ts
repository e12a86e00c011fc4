import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { FileLocks } from "../../core/src/storage/file-lock.js";
import { StateStore } from "../../core/src/storage/state-store.js";
import { corruptCopies, readJson, recordingLogger, tempLayout } from "./helpers.js";
import { nth } from "../helpers/items.js";

function storeAt(file: string, debounceMs = 200) {
  const { logger } = recordingLogger();
  return new StateStore(file, new FileLocks(logger), logger, { debounceMs });
}

describe("StateStore", () => {
  it("batches a burst of changes into one write after the debounce", async () => {
    const { layout } = tempLayout();
    const store = storeAt(layout.globalStateJson);
    await store.load();
    for (let i = 0; i < 1000; i++) store.set(`k${i % 10}`, i);
    expect(store.writes).toBe(0);
    expect(fs.existsSync(layout.globalStateJson)).toBe(false);
    expect(await store.get("k9")).toBe(999);
    // The debounce timer fires no earlier than 200 ms, later on a busy machine: wait for the write.
    await vi.waitFor(() => expect(store.writes).toBeGreaterThan(0), { timeout: 15_000, interval: 10 });
    expect(store.writes).toBe(1);
    expect(store.hasPending).toBe(false);
    expect(readJson(layout.globalStateJson).k9).toBe(999);
  });

  it("flushes explicitly and keeps flushing changes made during a flush", async () => {
    const { layout } = tempLayout();
    const store = storeAt(layout.globalStateJson, 60_000);
    store.set("a", 1);
    const first = store.flush();
    store.set("b", 2); // arrives while the first write runs
    await first;
    await store.flushPendingState();
    expect(store.hasPending).toBe(false);
    expect(readJson(layout.globalStateJson)).toEqual({ a: 1, b: 2 });
  });

  it("rejects new changes once closing, after writing the pending ones", async () => {
    const { layout } = tempLayout();
    const store = storeAt(layout.globalStateJson, 60_000);
    store.set("a", 1);
    await store.close();
    expect(readJson(layout.globalStateJson)).toEqual({ a: 1 });
    expect(() => store.set("b", 2)).toThrowError(DlineError);
    expect(readJson(layout.globalStateJson)).toEqual({ a: 1 });
  });

  it("merges its keys into the latest file, keeping another process's keys", async () => {
    const { layout } = tempLayout();
    const a = storeAt(layout.globalStateJson, 60_000);
    const b = storeAt(layout.globalStateJson, 60_000);
    a.set("fromA", 1);
    b.set("fromB", 2);
    await Promise.all([a.flushPendingState(), b.flushPendingState()]);
    expect(readJson(layout.globalStateJson)).toEqual({ fromA: 1, fromB: 2 });
    a.set("fromB", undefined);
    await a.flushPendingState();
    expect(readJson(layout.globalStateJson)).toEqual({ fromA: 1 });
  });

  it("keeps a truncated globalState.json aside and reports data_loss", async () => {
    const { layout } = tempLayout();
    fs.mkdirSync(path.dirname(layout.globalStateJson), { recursive: true });
    fs.writeFileSync(layout.globalStateJson, '{"lastShownAnnouncement": "3.');
    const store = storeAt(layout.globalStateJson);
    const err = await store.load().catch((e: unknown) => e);
    expect((err as DlineError).code).toBe("data_loss");
    const copy = nth(corruptCopies(layout.globalStateJson), 0, "corrupt copy");
    expect((err as Error).message).toContain(copy);
    expect(fs.readFileSync(copy, "utf8")).toBe('{"lastShownAnnouncement": "3.');
  });
});
