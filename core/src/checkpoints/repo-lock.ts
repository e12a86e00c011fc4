import { existsSync, mkdirSync } from "node:fs";
import * as path from "node:path";
import lockfile from "proper-lockfile";
import { syncLockFs } from "./lock-fs.js";
import { PRIVATE_DIR_MODE } from "../storage/index.js";

/**
 * One lock per shadow repository, held across processes (proper-lockfile: a lock folder whose
 * mtime is refreshed while held; a holder that was killed leaves a stale lock, taken over at
 * once when the lock names a process of this host that is gone, else once `staleMs` passed)
 * and within this process (a promise chain, since proper-lockfile refuses a
 * second lock from the same process instead of waiting).
 */
export class RepoLock {
  private tail: Promise<unknown> = Promise.resolve();
  private readonly lockFs: ReturnType<typeof syncLockFs>;

  constructor(
    private readonly lockTarget: string,
    /** A lock not refreshed for this long belongs to a dead process. proper-lockfile's minimum is 2000. */
    private readonly staleMs = 10_000,
    /** How long to wait for another process before giving up. */
    private readonly waitMs = 120_000,
    private readonly onCompromised: (err: Error) => void = () => {},
  ) {
    // proper-lockfile takes no stale time under 2 s.
    this.lockFs = syncLockFs(Math.max(2000, staleMs));
  }

  /**
   * Runs `fn` under the lock. With `create: false` the lock's folder is not created: when it does
   * not exist (the repository is gone), the answer is `RepoLock.MISSING` and `fn` does not run.
   */
  async with<T>(fn: () => Promise<T>, options: { create: false }): Promise<T | typeof RepoLock.MISSING>;
  async with<T>(fn: () => Promise<T>, options?: { create: true }): Promise<T>;
  async with<T>(
    fn: () => Promise<T>,
    options: { create: boolean } = { create: true },
  ): Promise<T | typeof RepoLock.MISSING> {
    const run = this.tail.then(() => this.withFileLock(fn, options.create));
    this.tail = run.catch(() => undefined);
    return run;
  }

  static readonly MISSING: unique symbol = Symbol("repository missing");

  private async withFileLock<T>(fn: () => Promise<T>, create: boolean): Promise<T | typeof RepoLock.MISSING> {
    if (create) mkdirSync(path.dirname(this.lockTarget), { recursive: true, mode: PRIVATE_DIR_MODE });
    else if (!existsSync(path.dirname(this.lockTarget))) return RepoLock.MISSING;
    const release = await lockfile
      .lock(this.lockTarget, {
        stale: this.staleMs,
        update: Math.max(1000, Math.floor(this.staleMs / 2)),
        realpath: false,
        lockfilePath: `${this.lockTarget}.lock`,
        fs: this.lockFs,
        retries: { retries: Math.ceil(this.waitMs / 100), minTimeout: 50, maxTimeout: 200, factor: 1.2 },
        // proper-lockfile's default throws from a timer (taking the process down) when the lock
        // could not be refreshed in time; the git steps themselves stay safe, so only note it.
        onCompromised: (err) => this.onCompromised(err),
      })
      .catch((err: NodeJS.ErrnoException) => {
        // The folder went between the check and the lock (Delete Everything): nothing to read.
        if (!create && err.code === "ENOENT") return undefined;
        throw err;
      });
    if (!release) return RepoLock.MISSING;
    try {
      return await fn();
    } finally {
      await release().catch(() => undefined);
    }
  }
}
