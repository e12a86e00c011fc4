import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import lockfile from "proper-lockfile";
import type { Logger } from "../logging/logger.js";
import { type InstanceLayout, mkdirPrivate, PRIVATE_FILE_MODE } from "../storage/index.js";
import { DlineError } from "../errors.js";
import { currentProcessIdentity, isClaimLive, type ProcessIdentity, sleepSync } from "./process-alive.js";

export interface OwnerInfo extends ProcessIdentity {
  pid: number;
  hostname: string;
  since: number;
  /** "run" (the runtime or an import writes the task) or "delete" (it is being deleted). */
  purpose?: "run" | "delete";
}

/** Whether the process that wrote a claim still runs (not merely a process with its pid). */
function isOwnerLive(info: OwnerInfo): boolean {
  return isClaimLive(info.pid, info.hostname, { bootId: info.bootId, startTicks: info.startTicks });
}

/** The task is claimed by another live process; `owner` says which and why. */
export class TaskOwnedElsewhere extends DlineError {
  constructor(
    readonly taskId: string,
    readonly owner: OwnerInfo,
  ) {
    super(
      "failed_precondition",
      owner.purpose === "delete"
        ? `Task ${taskId} is being deleted by another Dline sidecar (pid ${owner.pid}).`
        : `Task ${taskId} is running in another Dline window (pid ${owner.pid}).`,
    );
  }
}

/** A lock file younger than this with unreadable content is being written; older, it is a torn claim. */
const TORN_CLAIM_GRACE_MS = 2000;

/**
 * One active owner per task across processes: `tasks/<id>/owner.lock`, created with O_EXCL and
 * holding the owner's pid. Another sidecar may read the task, but `claim` fails with
 * failed_precondition naming the owner's pid while that process lives. A claim whose process is
 * gone (or a torn lock file) is recovered under a short proper-lockfile guard, so two sidecars
 * recovering the same stale claim cannot both win.
 */
export class TaskOwnership {
  private readonly held = new Set<string>();
  private stopper: ((taskId: string) => Promise<void>) | undefined;

  constructor(
    private readonly layout: InstanceLayout,
    private readonly logger: Logger,
  ) {}

  /** The runtime registers how to stop a task it runs (called before deleting it). */
  setRunningTaskStopper(stop: (taskId: string) => Promise<void>): void {
    this.stopper = stop;
  }

  /** True when this process holds the task. */
  holds(taskId: string): boolean {
    return this.held.has(taskId);
  }

  /** The live owner of a task (this process or another), or undefined. */
  owner(taskId: string): OwnerInfo | undefined {
    const info = this.readClaim(this.layout.task(taskId).ownerLock);
    if (!info || info === "torn") return undefined;
    if (info.pid === process.pid && info.hostname === os.hostname()) return this.held.has(taskId) ? info : undefined;
    return isOwnerLive(info) ? info : undefined;
  }

  /**
   * Claims the task for this process. `mustExist` (default) refuses a task folder that is gone
   * (a deleted task is not recreated by a late writer). Throws failed_precondition when another
   * live process owns it, or when this process already does (`reentrant` accepts that).
   */
  claim(taskId: string, options: { mustExist?: boolean; reentrant?: boolean; purpose?: "run" | "delete" } = {}): void {
    const task = this.layout.task(taskId);
    if (this.held.has(taskId)) {
      if (options.reentrant) return;
      throw new DlineError(
        "failed_precondition",
        `Task ${taskId} is already open for writing in this sidecar (pid ${process.pid}).`,
      );
    }
    if (options.mustExist === false) mkdirPrivate(task.dir);
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        const fd = fs.openSync(task.ownerLock, "wx", PRIVATE_FILE_MODE);
        try {
          fs.writeSync(
            fd,
            JSON.stringify({
              pid: process.pid,
              hostname: os.hostname(),
              since: Date.now(),
              purpose: options.purpose ?? "run",
              ...currentProcessIdentity(),
            } satisfies OwnerInfo),
          );
        } catch (err) {
          // A claim that could not be written (a full disk) is not left behind as an empty lock
          // file: every later claim would take it for one being written and wait it out.
          fs.closeSync(fd);
          fs.rmSync(task.ownerLock, { force: true });
          throw err;
        }
        fs.closeSync(fd);
        this.held.add(taskId);
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT") throw new DlineError("not_found", `Task ${taskId} does not exist.`);
        if (code !== "EEXIST") throw err;
      }
      const info = this.readClaim(task.ownerLock);
      if (info === undefined) continue; // released meanwhile: try again
      if (info !== "torn") {
        const ours = info.pid === process.pid && info.hostname === os.hostname();
        if (!ours && isOwnerLive(info)) throw new TaskOwnedElsewhere(taskId, info);
      } else if (!this.waitOutTornClaim(task.ownerLock)) {
        continue; // written or released meanwhile: read it again
      }
      this.recoverStale(task.ownerLock, info);
    }
    throw new DlineError("aborted", `Could not claim task ${taskId}: its lock kept changing; try again.`);
  }

  /** Releases this process's claim (no-op when not held). */
  release(taskId: string): void {
    if (!this.held.delete(taskId)) return;
    const file = this.layout.task(taskId).ownerLock;
    const info = this.readClaim(file);
    if (info && info !== "torn" && info.pid === process.pid) fs.rmSync(file, { force: true });
  }

  /**
   * For deletion: stops the task if this process runs it, then claims it. Returns false when the
   * task folder is gone (already deleted). When another sidecar is deleting the same task, waits
   * (bounded) for it to finish instead of reporting a conflict: both deleters agree it is gone.
   */
  async claimForDeletion(
    taskId: string,
    waitForOtherDeleterMs = 15_000,
  ): Promise<"claimed" | "missing" | "deleted_elsewhere"> {
    if (this.held.has(taskId)) {
      if (this.stopper) await this.stopper(taskId);
      if (this.held.has(taskId)) {
        // The runtime released nothing (or there is none): the claim is ours, deletion takes it over.
        return "claimed";
      }
    }
    const deadline = Date.now() + waitForOtherDeleterMs;
    let waited = false;
    for (;;) {
      try {
        this.claim(taskId, { purpose: "delete" });
        return "claimed";
      } catch (err) {
        if (err instanceof DlineError && err.code === "not_found") return waited ? "deleted_elsewhere" : "missing";
        if (!(err instanceof TaskOwnedElsewhere) || err.owner.purpose !== "delete" || Date.now() > deadline) throw err;
      }
      waited = true;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /**
   * Calls `onChange` whenever the task's claim may have changed hands (its lock file created,
   * replaced or removed), and every `pollMs` in any case: a file-system watch can miss events
   * (or be unavailable), and the caller's check is cheap. Returns the function that stops it.
   */
  watchClaim(taskId: string, onChange: () => void, pollMs = 2000): () => void {
    const task = this.layout.task(taskId);
    const lockName = path.basename(task.ownerLock);
    let watcher: fs.FSWatcher | undefined;
    try {
      watcher = fs.watch(task.dir, { persistent: false }, (_event, name) => {
        if (!name || name === lockName) onChange();
      });
      watcher.on("error", () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      // the folder is gone or cannot be watched: the poll alone sees the changes
    }
    const timer = setInterval(onChange, watcher ? pollMs : Math.min(pollMs, 250));
    timer.unref();
    return () => {
      clearInterval(timer);
      watcher?.close();
    };
  }

  /** Forgets a claim whose folder was deleted with the task. */
  forget(taskId: string): void {
    this.held.delete(taskId);
  }

  releaseAll(): void {
    for (const id of [...this.held]) {
      try {
        this.release(id);
      } catch (err) {
        this.logger.warn("releasing a task claim failed", { taskId: id, error: (err as Error).message });
      }
    }
  }

  private recoverStale(file: string, seen: OwnerInfo | "torn"): void {
    let unlock: (() => void) | undefined;
    try {
      unlock = lockfile.lockSync(file, { realpath: false, stale: 5000 });
    } catch {
      sleepSync(10 + Math.random() * 20);
      return; // another process is recovering it; the caller tries again
    }
    try {
      const now = this.readClaim(file);
      const same =
        now === "torn"
          ? seen === "torn"
          : now !== undefined && seen !== "torn" && now.pid === seen.pid && now.since === seen.since;
      if (same) {
        this.logger.info("recovered a dead owner's task claim", { file, ownerPid: seen === "torn" ? 0 : seen.pid });
        fs.rmSync(file, { force: true });
      }
    } finally {
      unlock();
    }
  }

  /**
   * A lock file without a readable claim is either being written by a live process (open and
   * write are two steps) or was torn by a writer killed between them. Waits, polling, until its
   * content appears or it is older than the grace period; the wait is bounded by the grace from
   * now (a clock that moved or a future mtime cannot make it endless). Returns true when it is
   * still torn: a dead writer's, to recover. Waiting here instead of counting claim attempts
   * matters: a sidecar killed in that window leaves a young torn claim, and the next claim (an
   * import finishing the killed one, say) must outwait it rather than give up.
   */
  private waitOutTornClaim(file: string): boolean {
    const waitUntil = Date.now() + TORN_CLAIM_GRACE_MS;
    while (Date.now() - this.mtime(file) < TORN_CLAIM_GRACE_MS && Date.now() < waitUntil) {
      sleepSync(20);
      if (this.readClaim(file) !== "torn") return false;
    }
    return true;
  }

  private readClaim(file: string): OwnerInfo | "torn" | undefined {
    let text: string;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
    try {
      const v = JSON.parse(text) as OwnerInfo;
      if (Number.isInteger(v.pid) && typeof v.since === "number") return v;
    } catch {
      // fall through
    }
    return "torn";
  }

  private mtime(file: string): number {
    try {
      return fs.statSync(file).mtimeMs;
    } catch {
      return 0;
    }
  }
}
