import { readdirSync, readFileSync, watch, type Dirent, type FSWatcher } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";

/**
 * Past this many events between two saves the watcher is not trusted (a command that touched
 * that many files may have overflowed the kernel's queue, which Node does not report): the
 * next save scans. Well below inotify's default queue of 16,384 events.
 */
const TOO_MANY_EVENTS = 8000;
/** Linux: how many events one inotify instance queues; past it the kernel drops them. */
const INOTIFY_QUEUE_FILE = "/proc/sys/fs/inotify/max_queued_events";

/** The kernel's inotify queue length (fs.inotify.max_queued_events); undefined where there is none to read. */
export function inotifyQueueLimit(): number | undefined {
  try {
    const n = Number(readFileSync(INOTIFY_QUEUE_FILE, "utf8").trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Events between two saves past which the watcher is not trusted. A queue that overflowed held
 * `queueLimit` events, every one of which Node then reads: fewer than half of it means none was
 * dropped, with room for the events Node drops itself (of folders no longer watched). A queue
 * lowered below twice TOO_MANY_EVENTS lowers the bar: with the queue at 512 and the bar at 8,000,
 * a command appending to 3,729 files left 311 of them out of its checkpoint.
 */
export function tooManyEvents(queueLimit: number | undefined): number {
  return queueLimit === undefined ? TOO_MANY_EVENTS : Math.min(TOO_MANY_EVENTS, Math.floor(queueLimit / 2));
}
/** Folders watched between two turns of the event loop while walking (about 5 ms). */
const WALK_SLICE = 400;

/**
 * What changed in a workspace since the last save, from Node's own `fs.watch` on each folder
 * (inotify on Linux; measured: 2,100 folders / 100,000 files watched in 0.14-0.27 s and 20-25 MB,
 * where Node's recursive watcher took 0.9-5.5 s and 170-290 MB and chokidar 6-23 s). Folders
 * whose contents never enter a snapshot are not watched: `.git`, nested repositories and the
 * built-in excluded folders (`skipFolder`). Changes are workspace-relative paths of files or
 * folders; a folder created after the watch began is watched from then on, and reported itself
 * (the caller walks it). Any doubt (an error, a folder that could not be watched, a burst of
 * events that may have overflowed the kernel's queue) makes `drain` answer undefined: the caller
 * scans instead.
 */
export class WorkspaceWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  private changed = new Set<string>();
  private events = 0;
  private broken = false;
  private closed = false;
  /** Events between two saves past which a burst may have overflowed the kernel's queue (tooManyEvents). */
  private readonly tooMany: number;
  /** When the whole workspace was being watched (undefined until then). */
  readyAt: number | undefined;

  /** `queueLimit`: the kernel's inotify queue length, read from the system unless given. */
  constructor(
    private readonly root: string,
    private readonly skipFolder: (repoPath: string, name: string) => boolean,
    queueLimit: number | undefined = inotifyQueueLimit(),
  ) {
    this.tooMany = tooManyEvents(queueLimit);
  }

  /** Walks the workspace and watches every folder; resolves once all are watched. */
  async start(): Promise<void> {
    await this.watchTree("");
    if (!this.closed) this.readyAt = Date.now();
  }

  /** True while the watcher knows every change since `readyAt` (or since the last drain). */
  get trustworthy(): boolean {
    return this.readyAt !== undefined && !this.broken && !this.closed;
  }

  /**
   * The paths changed since the last drain, and a fresh set for what follows; undefined when
   * the watcher cannot be trusted for that period (the caller scans, then calls `resync`).
   */
  drain(): string[] | undefined {
    const paths = [...this.changed];
    const trusted = this.trustworthy && this.events <= this.tooMany;
    this.changed = new Set();
    this.events = 0;
    return trusted ? paths : undefined;
  }

  /** A full scan is about to start: what was missed before it no longer matters. */
  resync(): void {
    this.changed = new Set();
    this.events = 0;
  }

  close(): void {
    this.closed = true;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  /**
   * Watches `rel` and every folder below it. Synchronous reads in slices, as a scan's checks are:
   * awaiting one thread-pool round trip per folder took 1 s for the 13,600 folders of a tree
   * shaped like babel's, where synchronous reads took 0.2 s.
   */
  private async watchTree(rel: string): Promise<void> {
    const pending = [rel];
    let done = 0;
    while (pending.length && !this.closed) {
      if (++done % WALK_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      for (const child of this.watchFolder(pending.pop()!)) pending.push(child);
    }
  }

  /** Watches one folder; answers its subfolders to watch. */
  private watchFolder(rel: string): string[] {
    if (this.closed || this.watchers.has(rel)) return [];
    const abs = rel ? path.join(this.root, ...rel.split("/")) : this.root;
    let watcher: FSWatcher;
    try {
      watcher = watch(abs, { persistent: false }, (_event, name) => this.onEvent(rel, name));
    } catch (err) {
      // Gone meanwhile: its parent's event reports it. Anything else (the kernel's limit on
      // watches, permissions): changes there would go unseen, so the watcher is not trusted.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") this.broken = true;
      return [];
    }
    watcher.on("error", () => {
      this.broken = true;
    });
    this.watchers.set(rel, watcher);
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      return [];
    }
    if (entries.some((e) => e.name === ".git") && rel) {
      // A nested repository: its files never enter a snapshot.
      watcher.close();
      this.watchers.delete(rel);
      return [];
    }
    const children: string[] = [];
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (!this.skipFolder(child, e.name)) children.push(child);
    }
    return children;
  }

  /**
   * A path that went: when it was a watched folder, it and the folders below it are unwatched.
   * Only then are the watched folders looked through: a file that went (each `sed -i` makes and
   * renames a temporary file, a build writes and removes many) is not one, and looking through
   * the 13,600 folders of a tree like babel's for each of them held the sidecar's thread for
   * seconds after a command rewrote 3,000 files (5 s of the 7.5 s it then took to see the
   * command end).
   */
  private unwatchTree(rel: string): void {
    const watcher = this.watchers.get(rel);
    if (!watcher) return;
    watcher.close();
    this.watchers.delete(rel);
    const below = `${rel}/`;
    for (const [key, w] of this.watchers) {
      if (key.startsWith(below)) {
        w.close();
        this.watchers.delete(key);
      }
    }
  }

  private onEvent(dirRel: string, name: string | Buffer | null): void {
    this.events++;
    if (name === null) {
      // The kernel did not say what changed in this folder.
      this.broken = true;
      return;
    }
    const child = dirRel ? `${dirRel}/${name.toString()}` : name.toString();
    if (child === ".git" || child.startsWith(".git/")) return;
    this.changed.add(child);
    const base = name.toString();
    if (this.skipFolder(child, base)) return;
    // A folder that appeared (or was renamed here) is watched from now on; one that went is unwatched.
    void fs.lstat(path.join(this.root, ...child.split("/"))).then(
      async (st) => {
        if (st.isDirectory()) await this.watchTree(child);
      },
      () => this.unwatchTree(child),
    );
  }
}
