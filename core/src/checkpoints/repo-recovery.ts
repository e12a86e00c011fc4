import * as fs from "node:fs/promises";
import { mkdirSync } from "node:fs";
import * as path from "node:path";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import { GitError, looksCorrupt } from "./git-process.js";
import { LockLostError, RepoLock, type LockWaitEvents } from "./repo-lock.js";
import type { ShadowRepo } from "./shadow-repo.js";
import { MESSAGES } from "./workspace-guard.js";
import { PRIVATE_DIR_MODE } from "../storage/index.js";

const STALE_LOCK = /\.lock': File exists|cannot lock ref/i;
const INDEX_DAMAGE = /index file corrupt|bad signature 0x|bad index file|index file smaller than expected|sharedindex/i;

export interface RecoveryEvents {
  /** The index was dropped (it is rebuilt by the next scan). */
  indexDropped(): void;
  /** The repository was set aside at `aside`; a new one is created on the next open. */
  rebuilt(aside: string): void;
}

/**
 * Runs operations on one shadow repository under its cross-process lock, and recovers from
 * what killed or crashed git processes leave: stale git locks are removed first; a damaged
 * index is dropped and the operation retried (the index is a cache); a damaged repository is
 * set aside and rebuilt, and the operation retried only when `retryAfterRebuild` (saves and
 * reads), never for restores and compares, which would act on checkpoints that are gone:
 * those fail with `data_loss` naming where the old repository is.
 */
export class RecoveringLock {
  private readonly lock: RepoLock;
  /** This instance's operations running under the lock now. */
  private holders = 0;

  constructor(
    private readonly repo: ShadowRepo,
    lockStaleMs: number,
    lockWaitMs: number,
    private readonly logger: Logger,
    private readonly events: RecoveryEvents,
  ) {
    this.lock = new RepoLock(repo.paths.lockTarget, lockStaleMs, lockWaitMs, (err) => {
      // Another process writes the repository now: what our git is writing must stop.
      logger.error("checkpoint repository lock was taken over while held; its git steps stopped", {
        error: err.message,
      });
      repo.git.stopRunning();
    });
  }

  /**
   * Whether an operation of this instance (this process's, for its workspace) holds the lock
   * now: no other window can be restoring files meanwhile.
   */
  get held(): boolean {
    return this.holders > 0 && this.lock.held();
  }

  /**
   * A read: runs `fn` under the lock like `run`, but a repository that does not exist is not
   * created for it (after Delete Everything, a late ListCheckpoints must not bring it back):
   * the answer is then `whenMissing()`.
   */
  async read<T>(fn: () => Promise<T>, whenMissing: () => T): Promise<T> {
    const answer = await this.lock.with(() => this.recovering(fn, true), { create: false });
    return answer === RepoLock.MISSING ? whenMissing() : answer;
  }

  run<T>(fn: () => Promise<T>, retryAfterRebuild = true, events?: LockWaitEvents): Promise<T> {
    return this.lock.with(
      async () => {
        mkdirSync(this.repo.paths.repoDir, { recursive: true, mode: PRIVATE_DIR_MODE });
        return this.recovering(fn, retryAfterRebuild);
      },
      { create: true, events },
    );
  }

  private async recovering<T>(fn: () => Promise<T>, retryAfterRebuild: boolean): Promise<T> {
    this.holders++;
    try {
      return await this.recoveringHeld(fn, retryAfterRebuild);
    } finally {
      this.holders--;
    }
  }

  private async recoveringHeld<T>(fn: () => Promise<T>, retryAfterRebuild: boolean): Promise<T> {
    // git's own locks are another process's while that one holds the repository lock.
    if (!this.lock.held()) throw new LockLostError();
    if (await this.repo.exists()) {
      const removed = await this.repo.removeStaleLocks("none");
      if (removed.length) this.logger.warn("removed stale git locks", { locks: removed.join(",") });
    }
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof GitError)) throw err;
      if (STALE_LOCK.test(err.stderr)) {
        // A killed git left a lock we did not look for (a ref lock): clear all, once more.
        if (!this.lock.held()) throw new LockLostError();
        const removed = await this.repo.removeStaleLocks("all");
        this.logger.warn("removed stale git locks", { locks: removed.join(",") });
        return fn();
      }
      if (INDEX_DAMAGE.test(err.stderr)) {
        this.logger.warn("shadow index damaged; rebuilding it", { repo: this.repo.paths.repoDir });
        await this.dropIndex();
        this.events.indexDropped();
        return fn();
      }
      if (!looksCorrupt(err)) throw err;
      const aside = await this.repo.setAside();
      this.events.rebuilt(aside);
      this.logger.error("shadow repository damaged; set aside and rebuilt", { aside });
      if (!retryAfterRebuild) throw new DlineError("data_loss", MESSAGES.rebuilt(aside), { cause: err });
      return fn();
    }
  }

  private async dropIndex(): Promise<void> {
    const gitDir = this.repo.paths.gitDir;
    for (const name of await fs.readdir(gitDir)) {
      if (name === "index" || name.startsWith("sharedindex.")) await fs.rm(path.join(gitDir, name), { force: true });
    }
  }
}
