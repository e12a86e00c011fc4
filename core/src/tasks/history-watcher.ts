import * as fs from "node:fs";
import * as path from "node:path";
import type { Logger } from "../logging/logger.js";
import type { TaskHistory } from "./task-history.js";

export interface HistoryNotice {
  changedTaskIds: string[];
  removedTaskIds: string[];
  /** The change could not be narrowed down (the watcher fell behind): list again. */
  reload: boolean;
  /** The last change covered; a subscriber resumes after it. */
  seq: number;
}

/**
 * What changed after `afterSeq`, folded into one notice (a task changed then removed is
 * "removed"); `reload` when changes after afterSeq were already pruned or are too many.
 * Undefined when nothing changed.
 */
export function readNotice(history: TaskHistory, afterSeq: number, limit = 5000): HistoryNotice | undefined {
  const result = history.changesSince(afterSeq, limit);
  if (result.latest <= afterSeq) return undefined;
  const fellBehind = afterSeq > 0 && result.oldestKept > afterSeq + 1;
  const lastRead = result.changes.at(-1)?.seq ?? afterSeq;
  if (fellBehind || lastRead < result.latest)
    return { changedTaskIds: [], removedTaskIds: [], reload: true, seq: result.latest };
  const changed = new Set<string>();
  const removed = new Set<string>();
  for (const c of result.changes) {
    if (c.kind === "removed") {
      removed.add(c.taskId);
      changed.delete(c.taskId);
    } else {
      changed.add(c.taskId);
      removed.delete(c.taskId);
    }
  }
  return { changedTaskIds: [...changed], removedTaskIds: [...removed], reload: false, seq: lastRead };
}

export type HistoryListener = (notice: HistoryNotice) => void;

/**
 * Tells subscribers when the task index changed, in this sidecar or another one. It watches
 * the folder holding taskHistory.db (a commit touches the -wal file, a checkpoint the db) with
 * fs.watch, and also polls both files with fs.watchFile as a fallback for file systems where
 * fs.watch is silent. Events are debounced, then the `changes` table says what changed.
 */
export class HistoryWatcher {
  private readonly listeners = new Set<HistoryListener>();
  private lastSeq: number;
  private watcher: fs.FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly polled: string[];
  private stopped = false;

  constructor(
    private readonly history: TaskHistory,
    private readonly logger: Logger,
    private readonly debounceMs = 40,
    private readonly pollIntervalMs = 1000,
  ) {
    this.lastSeq = history.latestChangeSeq();
    this.polled = [history.file, `${history.file}-wal`];
  }

  start(): void {
    try {
      const base = path.basename(this.history.file);
      this.watcher = fs.watch(path.dirname(this.history.file), { persistent: false }, (_event, name) => {
        if (!name || String(name).startsWith(base)) this.schedule();
      });
      this.watcher.on("error", (err) => this.logger.warn("history watch failed", { error: err.message }));
    } catch (err) {
      this.logger.warn("history watch unavailable; polling only", { error: (err as Error).message });
    }
    for (const file of this.polled)
      fs.watchFile(file, { interval: this.pollIntervalMs, persistent: false }, () => this.schedule());
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    for (const file of this.polled) fs.unwatchFile(file);
    clearTimeout(this.timer);
    this.listeners.clear();
  }

  get seq(): number {
    return this.lastSeq;
  }

  subscribe(listener: HistoryListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads pending changes now (also used right after a local write). */
  poll(): void {
    if (this.stopped) return;
    let notice: HistoryNotice | undefined;
    try {
      notice = readNotice(this.history, this.lastSeq);
    } catch (err) {
      this.logger.warn("reading history changes failed", { error: (err as Error).message });
      return;
    }
    if (!notice) return;
    this.lastSeq = notice.seq;
    for (const listener of this.listeners) {
      try {
        listener(notice);
      } catch (err) {
        this.logger.warn("history listener failed", { error: (err as Error).message });
      }
    }
  }

  private schedule(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.poll();
    }, this.debounceMs);
    this.timer.unref?.();
  }
}
