import * as fs from "node:fs";
import * as path from "node:path";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import type { FileLocks } from "./file-lock.js";
import { isReservedKey } from "./settings-registry.js";
import { loadJsonRecordOrKeepAside, readJsonRecord, writeJsonAtomic, type JsonRecord } from "./json-file.js";
import { mkdirPrivate } from "./private-mode.js";

/** Reserved key holding the write counter inside the settings file itself. */
export const REVISION_KEY = "__revision";

export interface SettingsSnapshot {
  /** The settings without bookkeeping keys. */
  settings: JsonRecord;
  /** Bookkeeping keys (`__settingsMigrationVersion`, ...), without the revision. */
  reserved: JsonRecord;
  /** Increases by one with every write of the file; 0 while it does not exist. */
  revision: number;
}

export type SettingsListener = (snapshot: SettingsSnapshot) => void;

/** Returns the new file content (settings and reserved keys), or undefined for "no change". */
export type SettingsMutator = (current: SettingsSnapshot) => JsonRecord | undefined;

function toSnapshot(record: JsonRecord | undefined): SettingsSnapshot {
  const settings: JsonRecord = {};
  const reserved: JsonRecord = {};
  let revision = 0;
  for (const [key, value] of Object.entries(record ?? {})) {
    if (key === REVISION_KEY) revision = typeof value === "number" && Number.isSafeInteger(value) ? value : 0;
    else if (isReservedKey(key)) reserved[key] = value;
    else settings[key] = value;
  }
  return { settings, reserved, revision };
}

/** Debounce of file-system events: an atomic rename produces several in a row. */
const WATCH_SETTLE_MS = 25;

/**
 * Owner of one settings file (global `settings/settings.json`, one workspace's
 * `settings.json`, or a task's `settings.json`). Every change is a read-modify-write of the
 * latest revision inside the cross-process lock, written to a temp file, fsynced and renamed.
 * The revision is stored in the file as `__revision`, so it moves with the content atomically.
 *
 * A malformed file is moved to `<name>.corrupt-<time>` and `data_loss` is raised once; the
 * next write then starts a fresh file. The user's bytes are never overwritten: they stay in
 * the kept-aside copy, which the error named.
 */
export class SettingsRepository {
  private readonly listeners = new Set<SettingsListener>();
  private watcher: fs.FSWatcher | undefined;
  private settleTimer: NodeJS.Timeout | undefined;
  private lastNotified = "";
  private lastRevision = 0;
  /** Counts notifications: a watch read is stale only if one came while it was under way. */
  private notifications = 0;
  /** Counts watches stopped: a reload begun under an earlier watch is not delivered. */
  private watchesStopped = 0;

  constructor(
    readonly file: string,
    private readonly locks: FileLocks,
    private readonly logger: Logger,
    private readonly what = "The settings file",
  ) {}

  /** The latest content. A malformed file is handled inside the lock (kept aside, data_loss). */
  async read(): Promise<SettingsSnapshot> {
    const read = await readJsonRecord(this.file);
    if (read.kind === "ok") return toSnapshot(read.value);
    if (read.kind === "missing") return toSnapshot(undefined);
    return this.locks.withLock(this.file, async () => toSnapshot(await this.loadOrKeepAside()));
  }

  /**
   * Applies `mutate` to the latest revision on disk inside the lock. With `expectedRevision`,
   * a file at another revision is refused with `aborted` (somebody else wrote first).
   */
  async update(mutate: SettingsMutator, expectedRevision?: number): Promise<SettingsSnapshot> {
    const written = await this.locks.withLock(this.file, async () => {
      const current = toSnapshot(await this.loadOrKeepAside());
      if (expectedRevision !== undefined && expectedRevision !== current.revision) {
        throw new DlineError(
          "aborted",
          `Settings changed meanwhile: expected revision ${expectedRevision}, the file is at ${current.revision}.`,
        );
      }
      const next = mutate(current);
      if (!next) return current;
      const revision = current.revision + 1;
      await writeJsonAtomic(this.file, { [REVISION_KEY]: revision, ...withoutRevision(next) });
      return toSnapshot({ ...next, [REVISION_KEY]: revision });
    });
    this.notify(written);
    return written;
  }

  /** Sets the patch's keys; a null value removes its key. Validation is the caller's job. */
  applyPatch(patch: JsonRecord, expectedRevision?: number): Promise<SettingsSnapshot> {
    return this.update((current) => {
      const next: JsonRecord = { ...current.reserved, ...current.settings };
      for (const [key, value] of Object.entries(patch)) {
        if (value === null) delete next[key];
        else next[key] = value;
      }
      return next;
    }, expectedRevision);
  }

  private async loadOrKeepAside(): Promise<JsonRecord | undefined> {
    try {
      return await loadJsonRecordOrKeepAside(this.file, this.what);
    } catch (err) {
      if (err instanceof DlineError) this.logger.error("malformed settings file kept aside", { file: this.file });
      throw err;
    }
  }

  /**
   * Calls `listener` after every change: our own writes at once, other processes' writes (and
   * hand edits) through a watch on the folder, since an atomic rename replaces the file's inode.
   */
  subscribe(listener: SettingsListener): () => void {
    this.listeners.add(listener);
    if (!this.watcher) this.startWatching();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stopWatching();
    };
  }

  close(): void {
    this.listeners.clear();
    this.stopWatching();
  }

  private startWatching(): void {
    const dir = path.dirname(this.file);
    const name = path.basename(this.file);
    try {
      mkdirPrivate(dir);
      this.watcher = fs.watch(dir, { persistent: false }, (_event, filename) => {
        if (filename !== null && filename !== name) return;
        clearTimeout(this.settleTimer);
        this.settleTimer = setTimeout(() => void this.reloadFromWatch(), WATCH_SETTLE_MS);
      });
      this.watcher.on("error", (err) =>
        this.logger.warn("settings watch failed", { file: this.file, error: err.message }),
      );
    } catch (err) {
      this.logger.warn("settings watch unavailable", { file: this.file, error: (err as Error).message });
    }
  }

  private stopWatching(): void {
    clearTimeout(this.settleTimer);
    this.watcher?.close();
    this.watcher = undefined;
    this.lastNotified = "";
    this.lastRevision = 0;
    this.watchesStopped++;
  }

  private async reloadFromWatch(): Promise<void> {
    if (this.listeners.size === 0) return;
    const watch = this.watchesStopped;
    const notificationsBefore = this.notifications;
    try {
      const snapshot = await this.read();
      // The watch stopped while reading (every listener left): this read may predate whatever the
      // next subscribers are told, and would set them back to it.
      if (watch !== this.watchesStopped) return;
      // A write told meanwhile may be newer than what this read found: never go back to it. A read
      // begun after the last notification is the file as it is (also a file removed or replaced
      // by hand with a lower revision).
      if (this.notifications !== notificationsBefore && snapshot.revision < this.lastRevision) return;
      this.notify(snapshot);
    } catch (err) {
      this.logger.warn("settings reload failed", { file: this.file, error: (err as Error).message });
    }
  }

  private notify(snapshot: SettingsSnapshot): void {
    const key = JSON.stringify([snapshot.revision, snapshot.settings]);
    if (key === this.lastNotified) return;
    this.lastNotified = key;
    this.lastRevision = snapshot.revision;
    this.notifications++;
    for (const listener of [...this.listeners]) {
      try {
        listener(snapshot);
      } catch (err) {
        this.logger.warn("settings listener failed", { error: (err as Error).message });
      }
    }
  }
}

function withoutRevision(record: JsonRecord): JsonRecord {
  const { [REVISION_KEY]: _ignored, ...rest } = record;
  return rest;
}
