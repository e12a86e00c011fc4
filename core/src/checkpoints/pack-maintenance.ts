import { readdirSync, rmSync } from "node:fs";
import * as path from "node:path";
import type { Logger } from "../logging/logger.js";
import { GitError, type ShadowGit } from "./git-process.js";
import type { PackingLock } from "./packing-lock.js";

/** Loose objects (estimated) from which they are packed: a baseline leaves thousands (trees), turns a few each. */
const LOOSE_LIMIT = 1024;
/** Packs from which they are folded into one: each turn save writes one. */
const PACK_LIMIT = 32;
/**
 * While a task runs in an editor's sidecar, only a pile this many times the limits starts a
 * packing (a long task's hundreds of turns); otherwise it waits for the task's end.
 */
const MID_TASK_FACTOR = 4;

/**
 * Packs a shadow repository's objects in the background, outside the repository lock, so that
 * no turn waits for it (git's `gc --auto` under the lock held a turn for seconds). Only
 * `git repack -d` runs here: it writes new packs and removes what they made redundant, and
 * never drops an unreachable object (those become loose, and go at the next collection under
 * the lock after a deletion), so a save writing its objects meanwhile loses nothing; it touches
 * no ref either. Started when a repository is opened and after saves, so that short-lived
 * processes (one CLI run each) still get their objects packed eventually. It runs holding the
 * packing lock (packing-lock.ts): a failed step's temporary pack files, named as a repack's are,
 * are removed only while nobody holds it. When another process packs already, none is started.
 */
export class PackMaintenance {
  private running: { done: Promise<void>; abort: AbortController } | undefined;
  /**
   * A save asked while a packing ran: looked at again when that one ends. The packs and loose
   * objects of saves made meanwhile may need it, and so does a packing that failed or found
   * another process's under way; otherwise they would wait for the next save, which a task's
   * last save never has.
   */
  private askedWhileRunning = false;
  /** stop() waits for the packing under way: none is started again after it. */
  private stopping = false;

  constructor(
    private readonly git: ShadowGit,
    private readonly objectsDir: string,
    private readonly logger: Logger,
    private readonly lock: PackingLock,
  ) {}

  /**
   * Starts packing when loose objects or packs piled up and none is running; never waits for it.
   * `midTask`: a task runs on, whose turns a packing (git repack: 50-300 ms of a core) would
   * slow; only a pile several times as high starts one then.
   */
  maybeStart(options: { midTask?: boolean } = {}): void {
    if (this.running) {
      this.askedWhileRunning = true;
      return;
    }
    const { loose, packs } = countObjects(this.objectsDir);
    const factor = options.midTask ? MID_TASK_FACTOR : 1;
    if (loose < LOOSE_LIMIT * factor && packs < PACK_LIMIT * factor) return;
    const consolidate = packs >= PACK_LIMIT;
    const abort = new AbortController();
    // --geometric: the small packs (each turn save writes one) are folded together with the loose
    // objects, every object of them kept, reachable or not; the baseline's large pack is not
    // copied again (`-A` rewrote it every 32 packs: 130 ms at 27,000 files, which a CLI run
    // waits for at exit, against 20 ms). -n: no `update-server-info`, which lists every ref of
    // the repository in info/refs for dumb HTTP clients, who never read this one (5 refs a
    // task: at 10,000 refs, 190 of a repack's 250 ms; a CLI run waits for it at exit).
    const args = [
      "-c",
      "pack.threads=1",
      "repack",
      ...(consolidate ? ["--geometric=2"] : []),
      "-d",
      "-l",
      "-q",
      "-n",
      "--no-write-bitmap-index",
    ];
    const repack = async () => {
      const release = await this.lock.tryTake();
      // Another process packs this repository now.
      if (!release) return;
      try {
        if (abort.signal.aborted) return;
        await this.git.command(args, { signal: abort.signal });
        removeDumbHttpLists(this.objectsDir);
        this.logger.info("checkpoint objects packed", { loose, packs });
      } finally {
        await release().catch(() => undefined);
      }
    };
    const done = repack()
      .catch((err: Error) => {
        if (abort.signal.aborted) return;
        // What git said, for the log: its last line names the cause.
        const said = err instanceof GitError ? err.stderr.trim().split("\n").at(-1)?.slice(0, 300) : undefined;
        this.logger.warn("packing checkpoint objects failed", { error: err.message, ...(said ? { git: said } : {}) });
      })
      .finally(() => {
        this.running = undefined;
        const again = this.askedWhileRunning && !abort.signal.aborted && !this.stopping;
        this.askedWhileRunning = false;
        if (again) this.maybeStart();
      });
    this.running = { done, abort };
  }

  /** Resolves when no packing runs, the one a finished packing started again included (tests, Delete Everything). */
  async settled(): Promise<void> {
    while (this.running) await this.running.done;
  }

  /** Lets a packing under way finish within `graceMs`, then stops it (git removes its temporary files). */
  async stop(graceMs: number): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.stopping = true;
    const timer = setTimeout(() => running.abort.abort(), graceMs);
    try {
      await running.done;
    } finally {
      clearTimeout(timer);
      this.stopping = false;
    }
  }
}

/**
 * The lists `git update-server-info` writes for dumb HTTP clients, which no one reads here:
 * `info/refs` (every ref: 600 KB at 10,000) and `objects/info/packs`. Packing without it (-n)
 * left what an older version's packing wrote there, and it named refs and packs long gone.
 */
function removeDumbHttpLists(objectsDir: string): void {
  rmSync(path.join(path.dirname(objectsDir), "info", "refs"), { force: true });
  rmSync(path.join(objectsDir, "info", "packs"), { force: true });
}

/**
 * Loose objects estimated as git does (the files of one of the 256 fan-out folders, times 256)
 * and the number of packs: two small directory reads.
 */
export function countObjects(objectsDir: string): { loose: number; packs: number } {
  const list = (dir: string) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  const loose = list(path.join(objectsDir, "17")).length * 256;
  const packs = list(path.join(objectsDir, "pack")).filter((n) => n.endsWith(".idx")).length;
  return { loose, packs };
}
