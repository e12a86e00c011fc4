import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Logger } from "../logging/logger.js";
import { assertSafeId, type DiskReserve, type InstanceLayout, mkdirPrivate } from "../storage/index.js";
import { DlineError } from "../errors.js";
import type { TaskDeletionHook } from "./deletion-hooks.js";
import { PendingDeletions, type PendingDeletion } from "./pending-deletions.js";
import { isClaimLive } from "./process-alive.js";
import type { TaskHistory } from "./task-history.js";
import type { TaskOwnership } from "./task-ownership.js";

export type DeleteMode = "selected" | "all" | "all_except_favorites";

export interface DeleteResult {
  deleted: string[];
  /** Tasks another live sidecar owns (running there): left alone. */
  refused: { taskId: string; reason: string }[];
}

/**
 * The one way to delete tasks. For each task: journal it in pending-deletions.json, take its
 * ownership claim (stopping it first if this sidecar runs it), remove its history row (from
 * then on it is never listed), move its folder into tasks/.deleting/ and remove it, then call
 * every TaskDeletionHook (checkpoints). When every task is gone (mode "all", or the last one was
 * deleted, and the index holds no task, a refused one or one another sidecar created meanwhile)
 * the hooks' onAllTasksDeleted runs, never for "all except favourites"; otherwise their
 * onDeletionsFinished runs once for the request. A deletion cut short (crash, SIGKILL) is
 * finished by `resume` on the next start.
 */
export class TaskDeletionCoordinator {
  private readonly hooks: TaskDeletionHook[] = [];
  private readonly journal: PendingDeletions;

  constructor(
    private readonly layout: InstanceLayout,
    private readonly history: TaskHistory,
    private readonly ownership: TaskOwnership,
    private readonly logger: Logger,
    /** Released when the disk is nearly full, so a deletion that makes room can itself be written. */
    private readonly reserve?: DiskReserve,
  ) {
    this.journal = new PendingDeletions(layout.pendingDeletionsJson, logger);
  }

  registerHook(hook: TaskDeletionHook): void {
    this.hooks.push(hook);
  }

  async delete(mode: DeleteMode, taskIds: string[] = []): Promise<DeleteResult> {
    this.reserve?.releaseIfLow();
    let targets: { id: string; workspaceRoot: string }[];
    if (mode === "selected") {
      if (taskIds.length === 0)
        throw new DlineError("invalid_argument", "task_ids is empty: name the tasks to delete.");
      targets = [...new Set(taskIds)].map((id) => {
        this.layout.task(id); // validates the id
        return { id, workspaceRoot: this.history.get(id)?.workspaceRoot ?? "" };
      });
    } else {
      const rows = this.history.allIds().filter((t) => mode === "all" || !t.favorite);
      // A row whose id could never name a folder (written by some other tool) only has a row to remove.
      const unusable = rows.filter((t) => !isSafeId(t.id)).map((t) => t.id);
      if (unusable.length) this.history.remove(unusable);
      targets = rows.filter((t) => isSafeId(t.id)).map((t) => ({ id: t.id, workspaceRoot: t.workspaceRoot }));
    }
    await this.journal.add(targets.map((t) => ({ taskId: t.id, workspaceRoot: t.workspaceRoot })));
    const result: DeleteResult = { deleted: [], refused: [] };
    const done = this.doneBatcher();
    for (const t of targets) {
      const outcome = await this.deleteOne(t.id, t.workspaceRoot);
      if (outcome.refused) result.refused.push({ taskId: t.id, reason: outcome.refused });
      else if (outcome.deleted) result.deleted.push(t.id);
      await done.add(t.id);
    }
    await done.flush();
    const everything = mode === "all" || (mode === "selected" && result.deleted.length > 0);
    // Refused tasks keep their rows, so they count as tasks left.
    if (everything && this.noTaskLeft()) await this.allTasksDeleted();
    else await this.deletionsFinished();
    this.reserve?.ensure();
    if (mode === "selected" && result.refused.length > 0) {
      throw new DlineError(
        "failed_precondition",
        `${result.refused.map((r) => r.reason).join(" ")}${result.deleted.length ? ` Deleted: ${result.deleted.join(", ")}.` : ""}`,
      );
    }
    return result;
  }

  /** Finishes deletions that a dead sidecar (or this one before a restart) left half done. */
  async resume(): Promise<string[]> {
    const journal = await this.journal.adoptOrphans();
    const finished: string[] = [];
    const done = this.doneBatcher();
    for (const t of journal.tasks.filter((x: PendingDeletion) => x.pid === process.pid)) {
      // Same steps as a fresh deletion: a task that another sidecar has opened since is left alone.
      const outcome = await this.deleteOne(t.taskId, t.workspaceRoot);
      if (!outcome.refused) finished.push(t.taskId);
      await done.add(t.taskId);
    }
    await done.flush();
    if (finished.length) this.logger.info("finished interrupted task deletions", { count: finished.length });
    if (journal.allTasks && journal.allTasks.pid === process.pid) {
      // A task made since (by any sidecar) keeps its checkpoints: the request ends without them.
      if (this.noTaskLeft()) await this.allTasksDeleted();
      else {
        this.logger.info(
          "interrupted deletion of every task ends without removing all checkpoints: tasks were created since",
        );
        await this.journal.allTasksDone();
        await this.deletionsFinished();
      }
    } else if (finished.length) await this.deletionsFinished();
    this.sweepDeletingDir();
    return finished;
  }

  /** Deletes one task: claim (stopping it here if it runs), row, folder, hooks. */
  private async deleteOne(taskId: string, workspaceRoot: string): Promise<{ deleted: boolean; refused?: string }> {
    let claim: "claimed" | "missing" | "deleted_elsewhere";
    try {
      claim = await this.ownership.claimForDeletion(taskId);
    } catch (err) {
      if (!(err instanceof DlineError) || err.code !== "failed_precondition") throw err;
      return { deleted: false, refused: err.message };
    }
    const claimed = claim === "claimed";
    const existed = this.history.remove([taskId]).length > 0;
    if (claimed || existed) {
      this.removeFolder(taskId);
      await this.runTaskHooks(taskId, workspaceRoot);
    }
    this.ownership.forget(taskId);
    // Deleted by us, or by another sidecar at the same time: either way it is gone now.
    return { deleted: claimed || existed || claim === "deleted_elsewhere" };
  }

  /** Journal removals are written in batches: one rewrite per task would be quadratic for "delete everything". */
  private doneBatcher() {
    let pending: string[] = [];
    const flush = async () => {
      if (pending.length === 0) return;
      const ids = pending;
      pending = [];
      await this.journal.done(ids);
    };
    return {
      add: async (id: string) => {
        pending.push(id);
        if (pending.length >= 100) await flush();
      },
      flush,
    };
  }

  /**
   * "Every task is gone" is checked against the index, not the request: another sidecar may have
   * created a task meanwhile, whose checkpoints the all-tasks hooks would remove.
   */
  private noTaskLeft(): boolean {
    return this.history.count() === 0;
  }

  private async allTasksDeleted(): Promise<void> {
    await this.journal.markAllTasks();
    for (const hook of this.hooks) {
      try {
        await hook.onAllTasksDeleted();
      } catch (err) {
        this.logger.error("deletion hook failed (all tasks)", { hook: hook.name, error: (err as Error).message });
      }
    }
    await this.journal.allTasksDone();
  }

  private async deletionsFinished(): Promise<void> {
    for (const hook of this.hooks) {
      try {
        await hook.onDeletionsFinished?.();
      } catch (err) {
        this.logger.error("deletion hook failed (after deletions)", { hook: hook.name, error: (err as Error).message });
      }
    }
  }

  private async runTaskHooks(taskId: string, workspaceRoot: string): Promise<void> {
    for (const hook of this.hooks) {
      try {
        await hook.onTaskDeleted(taskId, workspaceRoot);
      } catch (err) {
        this.logger.error("deletion hook failed", { hook: hook.name, taskId, error: (err as Error).message });
      }
    }
  }

  /** Renames the folder out of tasks/ (atomic), then removes it. */
  private removeFolder(taskId: string): void {
    const dir = this.layout.task(taskId).dir;
    const trash = path.join(this.layout.deletingTasksDir, `${taskId}.${process.pid}.${randomBytes(3).toString("hex")}`);
    try {
      mkdirPrivate(this.layout.deletingTasksDir);
      fs.renameSync(dir, trash);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    fs.rmSync(trash, { recursive: true, force: true, maxRetries: 3 });
  }

  /** Leftovers of removals cut short; only ones named by this pid or a dead one are swept. */
  private sweepDeletingDir(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.layout.deletingTasksDir);
    } catch {
      return;
    }
    for (const name of names) {
      const pid = Number(name.split(".").at(-2));
      if (pid === process.pid || !isClaimLive(pid, undefined)) {
        fs.rmSync(path.join(this.layout.deletingTasksDir, name), { recursive: true, force: true });
      }
    }
  }
}

function isSafeId(id: string): boolean {
  try {
    assertSafeId("task id", id);
    return true;
  } catch {
    return false;
  }
}
