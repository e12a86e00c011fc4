import { mkdirSync } from "node:fs";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import { GitError, looksCorrupt } from "./git-process.js";
import { repairHead, repairSnapshotBranch } from "./head-repair.js";
import { moveIndexAside, pointsAtIndex } from "./index-damage.js";
import { LockLostError, RepoLock, type LockWaitEvents } from "./repo-lock.js";
import type { ShadowRepo } from "./shadow-repo.js";
import { MESSAGES } from "./workspace-guard.js";
import { PRIVATE_DIR_MODE } from "../storage/index.js";
import type { WriteLeftovers } from "./write-leftovers.js";

const STALE_LOCK = /\.lock': File exists|cannot lock ref/i;

export interface RecoveryEvents {
  /** The index was moved aside to `aside` (a new one is built by the next scan). */
  indexDropped(aside: string): void;
  /** A HEAD git could not read was put back; what it held was kept at `kept` ("" when it was missing). */
  headRepaired(kept: string): void;
  /** The repository was set aside at `aside`; a new one is created on the next open. */
  rebuilt(aside: string): void;
}

/**
 * What a damaged repository (after any repair) does to an operation: "rebuild" (saves) sets it
 * aside and runs again on a new one; "fail" (restores, which would act on checkpoints that are
 * gone) sets it aside and fails with `data_loss` naming where it went; "report" (queries) leaves
 * it where it is and fails with `data_loss`: a query never throws every task's checkpoints away.
 */
type OnDamage = "rebuild" | "fail" | "report";

/**
 * Runs operations on one shadow repository under its cross-process lock, and recovers from
 * what killed or crashed git processes leave: stale git locks are removed first; a damaged
 * index is moved aside and the operation retried (the index is a cache); so is a HEAD git
 * cannot read (it is ours: put back); other damage is handled as `OnDamage` says. An operation
 * that fails for good has what it wrote and nothing references removed before the lock is
 * released (write-leftovers.ts): a save on a full disk does not leave the disk full.
 */
export class RecoveringLock {
  private readonly lock: RepoLock;

  constructor(
    private readonly repo: ShadowRepo,
    lockStaleMs: number,
    lockWaitMs: number,
    private readonly logger: Logger,
    private readonly events: RecoveryEvents,
    private readonly leftovers: WriteLeftovers,
  ) {
    this.lock = new RepoLock(repo.paths.lockTarget, lockStaleMs, lockWaitMs, (err) => {
      // Another process writes the repository now: what our git is writing must stop.
      logger.error("checkpoint repository lock was taken over while held; its git steps stopped", {
        error: err.message,
      });
      repo.git.stopRunning();
    });
  }

  /** Another process on this host that holds the lock now, and since when: operations here would wait for it. */
  heldElsewhere(): { pid: number; since: number } | undefined {
    return this.lock.heldElsewhere();
  }

  /**
   * A read: runs `fn` under the lock like `run`, but a repository that does not exist is not
   * created for it (after Delete Everything, a late ListCheckpoints must not bring it back):
   * the answer is then `whenMissing()`.
   */
  async read<T>(fn: () => Promise<T>, whenMissing: () => T): Promise<T> {
    const answer = await this.lock.with(() => this.cleaningUp(fn, "report"), { create: false });
    return answer === RepoLock.MISSING ? whenMissing() : answer;
  }

  /**
   * `read` for a query that writes nothing (a listing): on a full disk, where the lock cannot
   * be taken, it reads without the lock (and without any repair, which would write) rather
   * than fail.
   */
  async readOnly<T>(fn: () => Promise<T>, whenMissing: () => T): Promise<T> {
    const answer = await this.lock.with(() => this.cleaningUp(fn, "report"), { create: false, whenDiskFull: fn });
    return answer === RepoLock.MISSING ? whenMissing() : answer;
  }

  run<T>(fn: () => Promise<T>, retryAfterRebuild = true, events?: LockWaitEvents): Promise<T> {
    return this.lock.with(
      async () => {
        mkdirSync(this.repo.paths.repoDir, { recursive: true, mode: PRIVATE_DIR_MODE });
        return this.cleaningUp(fn, retryAfterRebuild ? "rebuild" : "fail");
      },
      { create: true, events },
    );
  }

  /** A query that may write git's caches (a compare's scan): like `run`, but damage is only reported. */
  query<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.with(
      async () => {
        mkdirSync(this.repo.paths.repoDir, { recursive: true, mode: PRIVATE_DIR_MODE });
        return this.cleaningUp(fn, "report");
      },
      { create: true },
    );
  }

  /**
   * The operation with its recovery; when it fails all the same, what it wrote and nothing
   * references goes while the lock is still held (not when the lock was lost: the repository is
   * another process's then).
   */
  private async cleaningUp<T>(fn: () => Promise<T>, onDamage: OnDamage): Promise<T> {
    const since = this.leftovers.begin();
    try {
      return await this.recovering(fn, onDamage);
    } catch (err) {
      if (!(err instanceof LockLostError)) await this.removeLeftovers(since);
      throw err;
    }
  }

  /** Never throws: the operation's own error is the answer. */
  private async removeLeftovers(since: number): Promise<void> {
    try {
      if (!this.lock.held() || !(await this.repo.exists())) return;
      const removed = await this.leftovers.remove(since);
      if (removed.loose + removed.packs + removed.temporary + removed.keptForPacking > 0)
        this.logger.warn("removed what a failed checkpoint step wrote", { ...removed });
    } catch (err) {
      this.logger.warn("removing what a failed checkpoint step wrote failed", { error: (err as Error).message });
    }
  }

  /** `repaired`: an index or HEAD was already repaired for this operation (one repair, one retry). */
  private async recovering<T>(fn: () => Promise<T>, onDamage: OnDamage, repaired = false): Promise<T> {
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
      if (!repaired && pointsAtIndex(err)) {
        const aside = moveIndexAside(this.repo.paths.gitDir);
        this.logger.warn("shadow index damaged; moved aside, rebuilding it", { aside, error: err.message });
        this.events.indexDropped(aside);
        return this.recovering(fn, onDamage, true);
      }
      if (!looksCorrupt(err)) throw err;
      const head = repaired ? undefined : repairHead(this.repo.paths.gitDir);
      if (head !== undefined) {
        this.logger.warn("shadow repository HEAD damaged; put back", { kept: head, error: err.message });
        this.events.headRepaired(head);
        return this.recovering(fn, onDamage, true);
      }
      const lost = repaired ? undefined : await repairSnapshotBranch(this.repo.git, err.stderr);
      if (lost !== undefined) {
        this.logger.warn("the snapshot branch named a missing commit; moved to the newest whole checkpoint", { lost });
        this.events.headRepaired("");
        return this.recovering(fn, onDamage, true);
      }
      if (onDamage === "report") {
        this.logger.error("shadow repository damaged; left where it is", { error: err.message });
        throw new DlineError("data_loss", MESSAGES.damaged(this.repo.paths.gitDir, err.message), { cause: err });
      }
      const aside = await this.repo.setAside();
      this.events.rebuilt(aside);
      this.logger.error("shadow repository damaged; set aside and rebuilt", { aside });
      if (onDamage === "fail") throw new DlineError("data_loss", MESSAGES.rebuilt(aside), { cause: err });
      return fn();
    }
  }
}
