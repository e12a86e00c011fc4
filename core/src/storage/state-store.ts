import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import type { FileLocks } from "./file-lock.js";
import { loadJsonRecordOrKeepAside, readJsonRecord, writeJsonAtomic, type JsonRecord } from "./json-file.js";

export interface StateStoreOptions {
  /** Changes are batched: the first change of a batch schedules one write this much later. */
  debounceMs?: number;
  /** Names the file in errors ("Global state", "Workspace state"). */
  what?: string;
}

/** Non-setting state is written in batches with a 2-second debounce (docs/storage.md). */
export const STATE_DEBOUNCE_MS = 2_000;

/**
 * Owner of one non-setting state file (`globalState.json` or a workspace's
 * `workspaceState.json`). Reads come from memory; changes are batched: the first change
 * schedules a write `debounceMs` later, and every change until then joins that write, so a
 * burst of changes costs one write per window (a steady stream cannot postpone it forever).
 *
 * A write merges only the changed keys into the latest file inside the cross-process lock,
 * so two sidecars sharing the file do not erase each other's keys.
 */
export class StateStore {
  private values: JsonRecord | undefined;
  private readonly pending = new Map<string, unknown>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  /** Number of times the file was written (for the benchmark and the log). */
  writes = 0;

  constructor(
    readonly file: string,
    private readonly locks: FileLocks,
    private readonly logger: Logger,
    private readonly options: StateStoreOptions = {},
  ) {}

  private get what(): string {
    return this.options.what ?? "The state file";
  }

  /**
   * Loads the file once. A malformed file is kept aside and `data_loss` raised; after that the
   * store starts empty (the user's bytes are in the kept-aside copy the error named).
   */
  async load(): Promise<JsonRecord> {
    if (!this.values) {
      // Writes are atomic renames, so a plain read sees a whole file (and never waits on a
      // lock at start-up); only a malformed file takes the lock, to be kept aside once.
      const read = await readJsonRecord(this.file);
      const loaded =
        read.kind === "ok"
          ? read.value
          : read.kind === "missing"
            ? undefined
            : await this.locks.withLock(this.file, () => loadJsonRecordOrKeepAside(this.file, this.what));
      if (!this.values) this.values = { ...(loaded ?? {}) };
      for (const [key, value] of this.pending) applyChange(this.values, key, value);
    }
    return this.values;
  }

  async get(key: string): Promise<unknown> {
    return (await this.load())[key];
  }

  async getAll(): Promise<JsonRecord> {
    return { ...(await this.load()) };
  }

  /** Records a change (undefined removes the key); refused once shutdown has begun. */
  set(key: string, value: unknown): void {
    this.setMany({ [key]: value });
  }

  setMany(changes: JsonRecord): void {
    if (this.closed) throw new DlineError("unavailable", `${this.what} is closed: the sidecar is stopping.`);
    for (const [key, value] of Object.entries(changes)) {
      this.pending.set(key, value);
      if (this.values) applyChange(this.values, key, value);
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush().catch((err) =>
        this.logger.error("state write failed", { file: this.file, error: (err as Error).message }),
      );
    }, this.options.debounceMs ?? STATE_DEBOUNCE_MS);
    this.timer.unref?.();
  }

  get hasPending(): boolean {
    return this.pending.size > 0;
  }

  /** Writes the changes pending now (one write), after any write already running. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const next = this.writing.catch(() => {}).then(() => this.writeBatch());
    this.writing = next;
    return next;
  }

  /** Keeps flushing until no change is pending, including changes made while flushing. */
  async flushPendingState(): Promise<void> {
    do {
      await this.flush();
    } while (this.pending.size > 0);
  }

  /** Shutdown: rejects new changes first, then writes everything still pending. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flushPendingState();
  }

  private async writeBatch(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = new Map(this.pending);
    this.pending.clear();
    let keptAside: DlineError | undefined;
    try {
      const merged = await this.locks.withLock(this.file, async () => {
        let latest: JsonRecord | undefined;
        try {
          latest = await loadJsonRecordOrKeepAside(this.file, this.what);
        } catch (err) {
          if (!(err instanceof DlineError && err.code === "data_loss")) throw err;
          // The malformed file is safe in its kept-aside copy; our changes start a new file,
          // and the caller of the flush still hears about it (below).
          this.logger.error("malformed state file kept aside", { file: this.file });
          keptAside = err;
          latest = undefined;
        }
        const next: JsonRecord = { ...(latest ?? {}) };
        for (const [key, value] of batch) applyChange(next, key, value);
        await writeJsonAtomic(this.file, next);
        this.writes++;
        return next;
      });
      // Other processes' keys become visible; our own newer pending changes stay on top.
      this.values = merged;
      for (const [key, value] of this.pending) applyChange(this.values, key, value);
      if (keptAside) throw keptAside;
    } catch (err) {
      if (err === keptAside) throw err;
      for (const [key, value] of batch) if (!this.pending.has(key)) this.pending.set(key, value);
      throw err;
    }
  }
}

function applyChange(target: JsonRecord, key: string, value: unknown): void {
  if (value === undefined) delete target[key];
  else target[key] = value;
}
