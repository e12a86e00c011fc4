import * as fs from "node:fs/promises";
import * as path from "node:path";
import lockfile from "proper-lockfile";

/**
 * One lock per shadow repository, held across processes (proper-lockfile: a lock folder whose
 * mtime is refreshed while held; a holder that was killed leaves a stale lock, taken over once
 * `staleMs` passed) and within this process (a promise chain, since proper-lockfile refuses a
 * second lock from the same process instead of waiting).
 */
export class RepoLock {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly lockTarget: string,
    /** A lock not refreshed for this long belongs to a dead process. proper-lockfile's minimum is 2000. */
    private readonly staleMs = 10_000,
    /** How long to wait for another process before giving up. */
    private readonly waitMs = 120_000,
    private readonly onCompromised: (err: Error) => void = () => {},
  ) {}

  async with<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(() => this.withFileLock(fn));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async withFileLock<T>(fn: () => Promise<T>): Promise<T> {
    await fs.mkdir(path.dirname(this.lockTarget), { recursive: true });
    const release = await lockfile.lock(this.lockTarget, {
      stale: this.staleMs,
      update: Math.max(1000, Math.floor(this.staleMs / 2)),
      realpath: false,
      lockfilePath: `${this.lockTarget}.lock`,
      retries: { retries: Math.ceil(this.waitMs / 100), minTimeout: 50, maxTimeout: 200, factor: 1.2 },
      // proper-lockfile's default throws from a timer (taking the process down) when the lock
      // could not be refreshed in time; the git steps themselves stay safe, so only note it.
      onCompromised: (err) => this.onCompromised(err),
    });
    try {
      return await fn();
    } finally {
      await release().catch(() => undefined);
    }
  }
}
