import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { FileLocks } from "../../core/src/storage/file-lock.js";
import { SettingsRepository } from "../../core/src/storage/settings-repository.js";
import { corruptCopies, readJson, recordingLogger, tempLayout } from "./helpers.js";
import { nth } from "../helpers/items.js";

function repoAt(file: string, locks?: FileLocks) {
  const { logger } = recordingLogger();
  return new SettingsRepository(file, locks ?? new FileLocks(logger), logger);
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<DlineError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DlineError);
  expect((err as DlineError).code).toBe(code);
  return err as DlineError;
}

describe("SettingsRepository", () => {
  it("starts at revision 0 and counts every write in the file itself", async () => {
    const { layout } = tempLayout();
    const repo = repoAt(layout.globalSettingsJson);
    expect(await repo.read()).toEqual({ settings: {}, reserved: {}, revision: 0 });
    await repo.applyPatch({ mode: "plan" });
    const after = await repo.applyPatch({ checkpointsEnabled: false, mode: null });
    expect(after.revision).toBe(2);
    expect(after.settings).toEqual({ checkpointsEnabled: false });
    expect(readJson(layout.globalSettingsJson)).toEqual({ __revision: 2, checkpointsEnabled: false });
  });

  it("refuses a stale expected revision with aborted and writes nothing", async () => {
    const { layout } = tempLayout();
    const repo = repoAt(layout.globalSettingsJson);
    await repo.applyPatch({ mode: "plan" }, 0);
    await expectCode(repo.applyPatch({ mode: "act" }, 0), "aborted");
    expect((await repo.read()).settings.mode).toBe("plan");
    expect((await repo.applyPatch({ mode: "act" }, 1)).revision).toBe(2);
  });

  it("keeps a malformed file aside, reports data_loss with its path, then starts fresh", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const original = '{"__revision": 7, "mode": "pl';
    fs.writeFileSync(file, original);
    const repo = repoAt(file);
    const err = await expectCode(repo.read(), "data_loss");
    const copies = corruptCopies(file);
    expect(copies).toHaveLength(1);
    expect(err.message).toContain(copies[0]);
    expect(fs.readFileSync(nth(copies, 0, "corrupt copy"), "utf8")).toBe(original);
    // The next write starts a new file; the user's bytes stay in the copy.
    expect((await repo.applyPatch({ mode: "act" })).revision).toBe(1);
    expect(fs.readFileSync(nth(copies, 0, "corrupt copy"), "utf8")).toBe(original);
  });

  it("treats valid JSON that is not an object as malformed too", async () => {
    const { layout } = tempLayout();
    const file = layout.workspaceSettingsJson("/w");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "[1,2]");
    await expectCode(repoAt(file).applyPatch({ mode: "act" }), "data_loss");
    expect(corruptCopies(file)).toHaveLength(1);
    expect(fs.existsSync(file)).toBe(false);
  });

  it("loses no update when two lock owners (as two processes would) write at once", async () => {
    const { layout } = tempLayout();
    const a = repoAt(layout.globalSettingsJson, new FileLocks(recordingLogger().logger));
    const b = repoAt(layout.globalSettingsJson, new FileLocks(recordingLogger().logger));
    const writes: Promise<unknown>[] = [];
    for (let i = 1; i <= 40; i++) {
      writes.push(a.applyPatch({ commandTimeoutSeconds: i }));
      writes.push(b.applyPatch({ terminalOutputLineLimit: i }));
    }
    await Promise.all(writes);
    const final = await a.read();
    expect(final.revision).toBe(80);
    expect(final.settings).toEqual({ commandTimeoutSeconds: 40, terminalOutputLineLimit: 40 });
  });

  it("recovers a stale lock left by a killed writer", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    fs.mkdirSync(`${file}.lock`, { recursive: true });
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(`${file}.lock`, old, old);
    const repo = repoAt(file);
    expect((await repo.applyPatch({ mode: "plan" })).revision).toBe(1);
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });

  it("answers unavailable while a live lock is held past the wait", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    const { logger } = recordingLogger();
    const holder = new FileLocks(logger);
    const waiter = new FileLocks(logger, { waitMs: 300 });
    let release!: () => void;
    const held = holder.withLock(file, () => new Promise<void>((r) => (release = r)));
    await new Promise((r) => setTimeout(r, 50));
    await expectCode(new SettingsRepository(file, waiter, logger).applyPatch({ mode: "act" }), "unavailable");
    release();
    await held;
  });

  it("tells subscribers about writes by another owner of the file (watch)", async () => {
    const { layout } = tempLayout();
    const watcher = repoAt(layout.globalSettingsJson);
    const writer = repoAt(layout.globalSettingsJson);
    const seen: number[] = [];
    const got = new Promise<void>((resolve) => {
      const stop = watcher.subscribe((s) => {
        seen.push(s.revision);
        if (s.settings.mode === "plan") {
          stop();
          resolve();
        }
      });
    });
    await writer.applyPatch({ mode: "plan" });
    await got;
    expect(seen).toContain(1);
  });
});
