import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { createLogger, type Logger } from "../../core/src/logging/logger.js";
import { FileLocks } from "../../core/src/storage/file-lock.js";
import { SettingsRepository, type SettingsSnapshot } from "../../core/src/storage/settings-repository.js";
import { corruptCopies, readJson, tempLayout } from "./helpers.js";
import { nth } from "../helpers/items.js";

/**
 * How long a test waits for a watch notification before failing. Notifications arrive within
 * milliseconds; the bound only turns a notification that never comes into a failure that says so.
 */
const NOTIFICATION_WAIT_MS = 10_000;

function bounded<T>(what: string, wait: (resolve: (value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} never came`)), NOTIFICATION_WAIT_MS);
    wait((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

/** A logger whose lines can be awaited: the watch path reports its failures only there. */
function watchedLogger(): { logger: Logger; lines: string[]; line: (msg: string) => Promise<any> } {
  const lines: string[] = [];
  const waiters: { msg: string; resolve: (record: any) => void }[] = [];
  const logger = createLogger(
    {
      write: (l) => {
        lines.push(l);
        const record = JSON.parse(l);
        for (const w of waiters.filter((w) => w.msg === record.msg)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(record);
        }
      },
      close: () => {},
    },
    "debug",
  );
  const line = (msg: string) =>
    bounded<any>(`the log line "${msg}"`, (resolve) => {
      const found = lines.map((l) => JSON.parse(l)).find((r) => r.msg === msg);
      if (found) resolve(found);
      else waiters.push({ msg, resolve });
    });
  return { logger, lines, line };
}

/** Records what a subscriber is told and lets a test wait for a snapshot it expects. */
function recorder() {
  const seen: SettingsSnapshot[] = [];
  const waiters: { match: (s: SettingsSnapshot) => boolean; resolve: (s: SettingsSnapshot) => void }[] = [];
  const listener = (s: SettingsSnapshot) => {
    seen.push(s);
    for (const w of waiters.filter((w) => w.match(s))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(s);
    }
  };
  const next = (match: (s: SettingsSnapshot) => boolean) =>
    bounded<SettingsSnapshot>("the expected settings notification", (resolve) => {
      const found = seen.find(match);
      if (found) resolve(found);
      else waiters.push({ match, resolve });
    });
  return { seen, listener, next, revisions: () => seen.map((s) => s.revision) };
}

function repoAt(file: string, logger: Logger, locks = new FileLocks(logger)): SettingsRepository {
  return new SettingsRepository(file, locks, logger);
}

/** Writes the file as a person's editor would: in place, without our lock or temp file. */
function editByHand(file: string, content: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
}

/** How many inotify watches of this process are on the folder with this inode (Linux). */
function inotifyWatchesOn(inode: number): number {
  const tag = ` ino:${inode.toString(16)} `;
  let count = 0;
  for (const fd of fs.readdirSync("/proc/self/fdinfo")) {
    let info: string;
    try {
      info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8");
    } catch {
      continue; // closed meanwhile
    }
    count += info.split("\n").filter((l) => l.startsWith("inotify ") && l.includes(tag)).length;
  }
  return count;
}

describe("settings subscribers", () => {
  it("are told about every write of their own repository, in order", async () => {
    const { layout } = tempLayout();
    const { logger } = watchedLogger();
    const repo = repoAt(layout.globalSettingsJson, logger);
    const rec = recorder();
    repo.subscribe(rec.listener);
    await repo.applyPatch({ mode: "plan" });
    await repo.applyPatch({ mode: "act" });
    await repo.applyPatch({ commandTimeoutSeconds: 5 });
    expect(rec.revisions()).toEqual([1, 2, 3]);
    expect(rec.seen.map((s) => s.settings.mode)).toEqual(["plan", "act", "act"]);
    repo.close();
  });

  it("are told about every write of another process, not only the first", async () => {
    const { layout } = tempLayout();
    const { logger } = watchedLogger();
    const watcher = repoAt(layout.globalSettingsJson, logger);
    const writer = repoAt(layout.globalSettingsJson, logger, new FileLocks(logger));
    const rec = recorder();
    watcher.subscribe(rec.listener);
    for (const mode of ["plan", "act", "plan"]) {
      const written = await writer.applyPatch({ mode });
      await rec.next((s) => s.revision === written.revision);
    }
    expect(rec.revisions()).toEqual([1, 2, 3]);
    watcher.close();
  });

  it("are told about hand edits written in place, also one that keeps the revision", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    const { logger } = watchedLogger();
    const repo = repoAt(file, logger);
    const rec = recorder();
    repo.subscribe(rec.listener);
    editByHand(file, { __revision: 1, mode: "plan" });
    await rec.next((s) => s.settings.mode === "plan");
    editByHand(file, { __revision: 1, mode: "act" });
    const edited = await rec.next((s) => s.settings.mode === "act");
    expect(edited.revision).toBe(1);
    expect(rec.seen.map((s) => s.settings.mode)).toEqual(["plan", "act"]);
    repo.close();
  });

  it("are not told again when an update changes nothing", async () => {
    const { layout } = tempLayout();
    const { logger } = watchedLogger();
    const repo = repoAt(layout.globalSettingsJson, logger);
    const rec = recorder();
    repo.subscribe(rec.listener);
    await repo.applyPatch({ mode: "plan" });
    const unchanged = await repo.update(() => undefined);
    expect(unchanged.revision).toBe(1);
    expect(rec.revisions()).toEqual([1]);
    // Nothing was written either: the revision in the file did not move.
    expect(readJson(layout.globalSettingsJson).__revision).toBe(1);
    repo.close();
  });

  it("stop hearing once they unsubscribe, while the others keep hearing other processes", async () => {
    const { layout } = tempLayout();
    const { logger } = watchedLogger();
    const repo = repoAt(layout.globalSettingsJson, logger);
    const writer = repoAt(layout.globalSettingsJson, logger, new FileLocks(logger));
    const leaving = recorder();
    const staying = recorder();
    const unsubscribe = repo.subscribe(leaving.listener);
    repo.subscribe(staying.listener);
    await repo.applyPatch({ mode: "plan" });
    unsubscribe();
    await repo.applyPatch({ mode: "act" });
    const other = await writer.applyPatch({ mode: "plan" });
    await staying.next((s) => s.revision === other.revision);
    expect(leaving.revisions()).toEqual([1]);
    expect(staying.revisions()).toEqual([1, 2, 3]);
    repo.close();
  });

  it("of a file that was removed and started again hear its new revisions from 1", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    const { logger } = watchedLogger();
    const repo = repoAt(file, logger);
    const first = recorder();
    const stop = repo.subscribe(first.listener);
    await repo.applyPatch({ mode: "plan" });
    await repo.applyPatch({ mode: "act" });
    stop();
    fs.rmSync(file);
    const second = recorder();
    repo.subscribe(second.listener);
    await repo.applyPatch({ mode: "plan" });
    expect(second.revisions()).toEqual([1]);
    repo.close();
  });

  it("who subscribe anew are not told what a read begun under an earlier watch found", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    const { logger } = watchedLogger();
    const repo = repoAt(file, logger);
    const first = recorder();
    const stop = repo.subscribe(first.listener);
    await repo.applyPatch({ mode: "plan" });
    await repo.applyPatch({ mode: "act" });
    // The file becomes a FIFO: the watch's reload opens it and waits for bytes, so the test knows
    // the read is under way (opening the writing end returns once the reader has opened it).
    fs.rmSync(file);
    execFileSync("mkfifo", [file]);
    const writer = await fs.promises.open(file, "w");
    stop();
    fs.rmSync(file);
    const second = recorder();
    repo.subscribe(second.listener);
    // The read under way now gets the old content...
    await writer.writeFile(JSON.stringify({ __revision: 2, mode: "act" }));
    await writer.close();
    // ...while the file is started again from nothing.
    await repo.applyPatch({ mode: "plan" });
    await repo.read();
    expect(second.revisions()).toEqual([1]);
    expect(second.seen.map((s) => s.settings.mode)).toEqual(["plan"]);
    repo.close();
  });

  it("of a file removed by hand while they listen hear the next write, which starts again at revision 1", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    const { logger } = watchedLogger();
    const repo = repoAt(file, logger);
    const rec = recorder();
    repo.subscribe(rec.listener);
    await repo.applyPatch({ mode: "plan" });
    await repo.applyPatch({ mode: "act" });
    fs.rmSync(file);
    const written = await repo.applyPatch({ mode: "plan" });
    expect(written.revision).toBe(1);
    expect(rec.seen.at(-1)).toEqual(written);
    repo.close();
  });

  it("are told about an older copy of the file put back by hand, though its revision is lower", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    const { logger } = watchedLogger();
    const repo = repoAt(file, logger);
    const rec = recorder();
    repo.subscribe(rec.listener);
    await repo.applyPatch({ mode: "plan" });
    await repo.applyPatch({ mode: "act" });
    await repo.applyPatch({ mode: "review" });
    editByHand(file, { __revision: 1, mode: "plan" });
    await rec.next((s) => s.revision === 1 && s.settings.mode === "plan" && rec.seen.indexOf(s) > 0);
    expect(rec.seen.map((s) => s.settings.mode)).toEqual(["plan", "act", "review", "plan"]);
    repo.close();
  });

  it("are never set back by a watch read that a newer write overtook", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    const { logger } = watchedLogger();
    const repo = repoAt(file, logger);
    const other = repoAt(file, logger, new FileLocks(logger));
    const rec = recorder();
    repo.subscribe(rec.listener);
    await repo.applyPatch({ mode: "plan" });
    await repo.applyPatch({ mode: "act" });
    // The file becomes a FIFO: the watch's reload opens it and waits for bytes (opening the
    // writing end returns once that read is under way).
    fs.rmSync(file);
    execFileSync("mkfifo", [file]);
    const writer = await fs.promises.open(file, "w");
    fs.rmSync(file);
    editByHand(file, { __revision: 5, mode: "act" });
    const newer = await repo.applyPatch({ mode: "review" });
    expect(newer.revision).toBe(6);
    // The read under way ends with content older than what the subscribers were told.
    await writer.writeFile(JSON.stringify({ __revision: 2, mode: "plan" }));
    await writer.close();
    // A later write of another process, seen through the watch after that read ended.
    const later = await other.applyPatch({ mode: "act" });
    await rec.next((s) => s.revision === later.revision);
    const revisions = rec.revisions();
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
    expect(rec.seen.map((s) => s.settings.mode).slice(-2)).toEqual(["review", "act"]);
    repo.close();
  });

  it.runIf(process.platform === "linux")(
    "subscribing twice and leaving leaves no watch on the settings folder",
    async () => {
      const { layout } = tempLayout();
      const file = layout.globalSettingsJson;
      const { logger } = watchedLogger();
      const repo = repoAt(file, logger);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const folder = fs.statSync(path.dirname(file)).ino;
      const first = repo.subscribe(() => {});
      const second = repo.subscribe(() => {});
      expect(inotifyWatchesOn(folder)).toBe(1);
      first();
      second();
      expect(inotifyWatchesOn(folder)).toBe(0);
      repo.subscribe(() => {});
      repo.subscribe(() => {});
      repo.close();
      expect(inotifyWatchesOn(folder)).toBe(0);
    },
  );

  it("hear nothing after close(), even of other processes' writes", async () => {
    const { layout } = tempLayout();
    const { logger } = watchedLogger();
    const closed = repoAt(layout.globalSettingsJson, logger);
    const open = repoAt(layout.globalSettingsJson, logger);
    const writer = repoAt(layout.globalSettingsJson, logger, new FileLocks(logger));
    const closedRec = recorder();
    const openRec = recorder();
    closed.subscribe(closedRec.listener);
    closed.close();
    open.subscribe(openRec.listener);
    for (const mode of ["plan", "act"]) {
      const written = await writer.applyPatch({ mode });
      await openRec.next((s) => s.revision === written.revision);
    }
    expect(closedRec.seen).toEqual([]);
    open.close();
  });

  it("still hear the others when one of them throws; the failure is logged", async () => {
    const { layout } = tempLayout();
    const { logger, line } = watchedLogger();
    const repo = repoAt(layout.globalSettingsJson, logger);
    const rec = recorder();
    repo.subscribe(() => {
      throw new Error("listener broke");
    });
    repo.subscribe(rec.listener);
    await repo.applyPatch({ mode: "plan" });
    expect(rec.revisions()).toEqual([1]);
    expect(await line("settings listener failed")).toMatchObject({ level: "warn", error: "listener broke" });
    repo.close();
  });

  it("never keep the process alive: the watch is not persistent", async () => {
    const { layout } = tempLayout();
    const { logger } = watchedLogger();
    const before = process.getActiveResourcesInfo().filter((r) => r === "FSEventWrap").length;
    const repo = repoAt(layout.globalSettingsJson, logger);
    repo.subscribe(() => {});
    expect(process.getActiveResourcesInfo().filter((r) => r === "FSEventWrap").length).toBe(before);
    repo.close();
  });
});

describe("a hand edit seen by the watch", () => {
  it("that breaks the JSON is kept aside with the person's bytes, and the failure is logged", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    const { logger, line } = watchedLogger();
    const repo = repoAt(file, logger);
    const rec = recorder();
    repo.subscribe(rec.listener);
    await repo.applyPatch({ mode: "plan" });
    const broken = '{"__revision": 1, "mode": "act",';
    editByHand(file, broken);
    expect(await line("settings reload failed")).toMatchObject({ level: "warn", file });
    expect(await line("malformed settings file kept aside")).toMatchObject({ level: "error", file });
    const copies = corruptCopies(file);
    expect(copies).toHaveLength(1);
    expect(fs.readFileSync(nth(copies, 0, "corrupt copy"), "utf8")).toBe(broken);
    expect(rec.revisions()).toEqual([1]);
    repo.close();
  });
});

describe("settings file contents", () => {
  it("keep bookkeeping keys out of the settings and carry them through writes", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    editByHand(file, { __revision: 3, __settingsMigrationVersion: 2, mode: "plan" });
    const { logger } = watchedLogger();
    const repo = repoAt(file, logger);
    expect(await repo.read()).toEqual({
      settings: { mode: "plan" },
      reserved: { __settingsMigrationVersion: 2 },
      revision: 3,
    });
    const after = await repo.applyPatch({ mode: "act" });
    expect(after).toEqual({ settings: { mode: "act" }, reserved: { __settingsMigrationVersion: 2 }, revision: 4 });
    expect(readJson(file)).toEqual({ __revision: 4, __settingsMigrationVersion: 2, mode: "act" });
  });

  it("count a revision that is not a whole number (a hand edit) as 0 and go on from 1", async () => {
    const { layout } = tempLayout();
    const { logger } = watchedLogger();
    for (const bad of ["7", 2.5, -0.5, null, 2 ** 60]) {
      const file = layout.workspaceSettingsJson(`/w/${String(bad)}`);
      editByHand(file, { __revision: bad, mode: "plan" });
      const repo = repoAt(file, logger);
      expect((await repo.read()).revision).toBe(0);
      expect((await repo.applyPatch({ mode: "act" })).revision).toBe(1);
      expect(readJson(file).__revision).toBe(1);
    }
  });

  it("are read without waiting for a writer's lock", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    const { logger } = watchedLogger();
    // The reader gives up on a busy lock at once, so a read that took it would fail.
    const reader = repoAt(file, logger, new FileLocks(logger, { waitMs: 0 }));
    const holder = new FileLocks(logger);
    let release!: () => void;
    let held!: () => void;
    const isHeld = new Promise<void>((r) => (held = r));
    const holding = holder.withLock(file, () => {
      held();
      return new Promise<void>((r) => (release = r));
    });
    await isHeld;
    try {
      expect(await reader.read()).toEqual({ settings: {}, reserved: {}, revision: 0 });
      editByHand(file, { __revision: 2, mode: "plan" });
      expect(await reader.read()).toEqual({ settings: { mode: "plan" }, reserved: {}, revision: 2 });
    } finally {
      release();
      await holding;
    }
  });

  it("name both revisions when a stale expected revision is refused", async () => {
    const { layout } = tempLayout();
    const { logger } = watchedLogger();
    const repo = repoAt(layout.globalSettingsJson, logger);
    await repo.applyPatch({ mode: "plan" });
    await repo.applyPatch({ mode: "act" });
    const err = await repo.applyPatch({ mode: "plan" }, 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DlineError);
    expect((err as DlineError).code).toBe("aborted");
    expect((err as DlineError).message).toContain("expected revision 1");
    expect((err as DlineError).message).toContain("at 2");
  });

  it("that are malformed are named as the settings file in the error when no name was given", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    editByHand(file, "{ not json");
    const { logger } = watchedLogger();
    const err = await repoAt(file, logger)
      .read()
      .catch((e: unknown) => e);
    expect((err as DlineError).code).toBe("data_loss");
    expect((err as DlineError).message).toMatch(/^The settings file \(/);
  });

  it("at a path that is a folder fail with the system's error and claim nothing was kept aside", async () => {
    const { layout } = tempLayout();
    const file = layout.globalSettingsJson;
    fs.mkdirSync(file, { recursive: true });
    const { logger, lines } = watchedLogger();
    const err = await repoAt(file, logger)
      .applyPatch({ mode: "act" })
      .catch((e: unknown) => e);
    expect((err as NodeJS.ErrnoException).code).toBe("EISDIR");
    expect(lines.join("")).not.toContain("kept aside");
    expect(fs.statSync(file).isDirectory()).toBe(true);
  });

  it("cannot be watched where the folder cannot be made: subscribing still works, the reason is logged", async () => {
    const { base } = tempLayout();
    const blocker = path.join(base, "not-a-folder");
    fs.writeFileSync(blocker, "");
    const { logger, line } = watchedLogger();
    const repo = repoAt(path.join(blocker, "settings.json"), logger);
    const stop = repo.subscribe(() => {});
    expect(await line("settings watch unavailable")).toMatchObject({
      level: "warn",
      file: path.join(blocker, "settings.json"),
    });
    stop();
  });
});
