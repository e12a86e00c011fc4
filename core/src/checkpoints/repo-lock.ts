import { existsSync, mkdirSync } from "node:fs";
import * as path from "node:path";
import lockfile from "proper-lockfile";
import { DlineError, isDiskFull } from "../errors.js";
import { lockHolder, lockHolderPid, otherLiveHolder, syncLockFs } from "./lock-fs.js";
import { PRIVATE_DIR_MODE } from "../storage/index.js";
import { MESSAGES } from "./workspace-guard.js";

export interface LockWaitEvents {
  /** Another process holds the lock: this one waits (called once, before the first retry). */
  waiting?(holderPid: number | undefined): void;
  /** The lock is held now (after waiting or not). */
  acquired?(): void;
}

/** The lock this process held was taken by another one (see RepoLock.with). */
export class LockLostError extends DlineError {
  constructor() {
    super("aborted", MESSAGES.lockLost);
  }
}

/**
 * One lock per shadow repository, held across processes (proper-lockfile: a lock folder whose
 * mtime is refreshed while held, and which names its holder, lock-fs.ts: a holder that runs on
 * this host keeps it however long it is stopped; a killed one's is taken over at once; one that
 * cannot be checked loses it once not refreshed for `staleMs`) and within this process (a
 * promise chain, since proper-lockfile refuses a second lock from the same process instead of
 * waiting). Waiting for another process ends after `waitMs` with `deadline_exceeded`.
 */
export class RepoLock {
  private tail: Promise<unknown> = Promise.resolve();
  private readonly lockFs: ReturnType<typeof syncLockFs>;
  private readonly lockDir: string;

  constructor(
    private readonly lockTarget: string,
    /** A lock of unknown holder not refreshed for this long is taken over. proper-lockfile's minimum is 2000. */
    private readonly staleMs = 10_000,
    /** How long to wait for another process before giving up. */
    private readonly waitMs = 120_000,
    /** The lock was taken over while held (then `with` rejects with LockLostError). */
    private readonly onCompromised: (err: Error) => void = () => {},
  ) {
    // proper-lockfile takes no stale time under 2 s.
    this.lockFs = syncLockFs(Math.max(2000, staleMs));
    this.lockDir = `${lockTarget}.lock`;
  }

  /** Another process on this host that holds the lock now, and since when (otherLiveHolder). */
  heldElsewhere(): { pid: number; since: number } | undefined {
    return otherLiveHolder(this.lockDir);
  }

  /** Whether this process holds the lock now (its folder names this process). */
  held(): boolean {
    return lockHolder(this.lockDir) === "self";
  }

  /**
   * Runs `fn` under the lock. With `create: false` the lock's folder is not created: when it does
   * not exist (the repository is gone), the answer is `RepoLock.MISSING` and `fn` does not run.
   * A lock taken over while `fn` ran makes the answer LockLostError, whatever `fn` returned.
   * `whenDiskFull` runs instead, without the lock, when the lock cannot be taken for a full disk.
   */
  async with<T>(
    fn: () => Promise<T>,
    options: { create: false; events?: LockWaitEvents; whenDiskFull?: () => Promise<T> },
  ): Promise<T | typeof RepoLock.MISSING>;
  async with<T>(fn: () => Promise<T>, options?: { create: true; events?: LockWaitEvents }): Promise<T>;
  async with<T>(
    fn: () => Promise<T>,
    options: { create: boolean; events?: LockWaitEvents; whenDiskFull?: () => Promise<T> } = { create: true },
  ): Promise<T | typeof RepoLock.MISSING> {
    const run = this.tail.then(() => this.withFileLock(fn, options.create, options.events ?? {}, options.whenDiskFull));
    this.tail = run.catch(() => undefined);
    return run;
  }

  static readonly MISSING: unique symbol = Symbol("repository missing");

  private async withFileLock<T>(
    fn: () => Promise<T>,
    create: boolean,
    events: LockWaitEvents,
    whenDiskFull: (() => Promise<T>) | undefined,
  ): Promise<T | typeof RepoLock.MISSING> {
    if (create) mkdirSync(path.dirname(this.lockTarget), { recursive: true, mode: PRIVATE_DIR_MODE });
    else if (!existsSync(path.dirname(this.lockTarget))) return RepoLock.MISSING;
    let lost = false;
    let release: (() => Promise<void>) | undefined;
    try {
      release = await this.acquire(create, events, (err) => {
        lost = true;
        this.onCompromised(err);
      });
    } catch (err) {
      // A full disk: the lock's folder cannot be made (so no other process holds the lock, and
      // none can write there either). A query that writes nothing then runs without it.
      if (whenDiskFull && isDiskFull(err)) return whenDiskFull();
      throw err;
    }
    if (!release) return RepoLock.MISSING;
    events.acquired?.();
    try {
      const answer = await fn();
      if (lost) throw new LockLostError();
      return answer;
    } catch (err) {
      throw lost ? new LockLostError() : err;
    } finally {
      await release().catch(() => undefined);
    }
  }

  /** Takes the file lock, retrying while another process holds it, up to `waitMs`. */
  private async acquire(
    create: boolean,
    events: LockWaitEvents,
    onCompromised: (err: Error) => void,
  ): Promise<(() => Promise<void>) | undefined> {
    const deadline = Date.now() + this.waitMs;
    let delay = 50;
    for (let attempt = 0; ; attempt++) {
      try {
        return await lockfile.lock(this.lockTarget, {
          stale: this.staleMs,
          update: Math.max(1000, Math.floor(this.staleMs / 2)),
          realpath: false,
          lockfilePath: this.lockDir,
          fs: this.lockFs,
          retries: 0,
          // proper-lockfile's default throws from a timer (taking the process down).
          onCompromised,
        });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // The folder went between the check and the lock (Delete Everything): nothing to read.
        if (!create && code === "ENOENT") return undefined;
        if (code !== "ELOCKED") throw err;
        if (attempt === 0) events.waiting?.(lockHolderPid(this.lockDir));
        if (Date.now() >= deadline) {
          throw new DlineError(
            "deadline_exceeded",
            MESSAGES.lockWaitTimeout(this.waitMs, lockHolderPid(this.lockDir)),
            {
              cause: err,
            },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(200, delay * 1.2);
      }
    }
  }
}
