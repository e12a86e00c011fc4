import type { Logger } from "../logging/logger.js";
import type { TaskDeletionHook } from "../tasks/deletion-hooks.js";
import type { CheckpointManager } from "./checkpoint-manager.js";

/**
 * Registered with the task deletion coordinator: deleting a task removes its checkpoint refs
 * (its objects are then pruned; other tasks' checkpoints stay); when every task is gone the
 * whole checkpoints folder goes. "Delete All Except Favorites" does not call onAllTasksDeleted.
 */
export class CheckpointDeletionHook implements TaskDeletionHook {
  readonly name = "checkpoints";

  constructor(
    private readonly checkpoints: CheckpointManager,
    private readonly logger: Logger,
  ) {}

  async onTaskDeleted(taskId: string, workspaceRoot: string): Promise<void> {
    await this.checkpoints.deleteTask(taskId, workspaceRoot);
    this.logger.info("checkpoint refs of task removed", { task: taskId });
  }

  async onAllTasksDeleted(): Promise<void> {
    await this.checkpoints.deleteAll();
    this.logger.info("checkpoints folder removed");
  }
}
