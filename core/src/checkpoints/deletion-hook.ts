import type { Logger } from "../logging/logger.js";
import type { TaskDeletionHook } from "../tasks/index.js";
import type { CheckpointManager } from "./checkpoint-manager.js";

/**
 * Registered with the task deletion coordinator: deleting a task removes its checkpoint refs
 * (other tasks' checkpoints stay); once the request's tasks are gone, the objects nothing
 * references any more are collected, once per repository touched; when every task is gone the
 * whole checkpoints folder goes. "Delete All Except Favorites" does not call onAllTasksDeleted.
 */
export class CheckpointDeletionHook implements TaskDeletionHook {
  readonly name = "checkpoints";
  /** Workspaces whose repositories lost refs since the last collection. */
  private readonly touched = new Set<string>();

  constructor(
    private readonly checkpoints: CheckpointManager,
    private readonly logger: Logger,
  ) {}

  async onTaskDeleted(taskId: string, workspaceRoot: string): Promise<void> {
    const root = await this.checkpoints.deleteTask(taskId, workspaceRoot);
    if (root) this.touched.add(root);
    this.logger.info("checkpoint refs of task removed", { task: taskId });
  }

  async onDeletionsFinished(): Promise<void> {
    const roots = [...this.touched];
    this.touched.clear();
    for (const root of roots) await this.checkpoints.collectGarbage(root);
  }

  async onAllTasksDeleted(): Promise<void> {
    this.touched.clear();
    await this.checkpoints.deleteAll();
    this.logger.info("checkpoints folder removed");
  }
}
