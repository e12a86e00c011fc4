import * as path from "node:path";
import lockfile from "proper-lockfile";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import { mkdirPrivateAsync } from "./private-mode.js";

/** Tuning of the cross-process lock; the defaults suit settings files (critical sections of ms). */
export interface FileLockOptions {
  /**
   * A lock whose folder was not refreshed for this long belongs to a dead process (SIGKILL)
   * and is taken over. proper-lockfile refreshes live locks every stale/2.
   */
  staleMs?: number;
  /** How long to wait for a busy lock before answering `unavailable`. */
  waitMs?: number;
}

const DEFAULT_STALE_MS = 5_000;
const DEFAULT_WAIT_MS = 20_000;

/**
 * Serialises read-modify-write cycles on one file across processes (proper-lockfile's
 * `<file>.lock` folder, with stale-lock recovery) and within this process (a promise chain
 * per file, so requests of one sidecar queue instead of spinning on the lock folder).
 */
export class FileLocks {
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly logger: Logger,
    private readonly options: FileLockOptions = {},
  ) {}

  async withLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(file) ?? Promise.resolve();
    const run = previous.catch(() => {}).then(() => this.withProcessLock(file, fn));
    const tail = run.catch(() => {});
    this.chains.set(file, tail);
    try {
      return await run;
    } finally {
      if (this.chains.get(file) === tail) this.chains.delete(file);
    }
  }

  private async withProcessLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
    const staleMs = this.options.staleMs ?? DEFAULT_STALE_MS;
    const deadline = Date.now() + (this.options.waitMs ?? DEFAULT_WAIT_MS);
    await mkdirPrivateAsync(path.dirname(file));
    let compromised: Error | undefined;
    let release: (() => Promise<void>) | undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        release = await lockfile.lock(file, {
          realpath: false,
          stale: staleMs,
          update: Math.floor(staleMs / 2),
          retries: 0,
          // The default throws from a timer and kills the process; a compromised lock only
          // means our critical section ran longer than `stale`, which we log and report.
          onCompromised: (err) => {
            compromised = err;
            this.logger.warn("file lock compromised", { file, error: err.message });
          },
        });
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ELOCKED") throw err;
        if (Date.now() > deadline) {
          throw new DlineError("unavailable", `${file} is locked by another process; try again.`);
        }
        // Short random back-off: critical sections last milliseconds.
        await sleep(Math.min(50, 2 + attempt) * (0.5 + Math.random()));
      }
    }
    try {
      const result = await fn();
      if (compromised) throw new DlineError("aborted", `Lost the lock on ${file} while writing; try again.`);
      return result;
    } finally {
      await release().catch((err: Error) => this.logger.warn("file unlock failed", { file, error: err.message }));
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
