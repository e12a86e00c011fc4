/**
 * What other owners must do when tasks are deleted. The task deletion coordinator calls every
 * registered hook; the checkpoint module registers one that removes a task's checkpoint
 * references (and the whole checkpoints folder when the last task goes).
 */
export interface TaskDeletionHook {
  /** Name for logs. */
  readonly name: string;
  /** One task is being deleted; `workspaceRoot` is the folder it ran in ("" when unknown). */
  onTaskDeleted(taskId: string, workspaceRoot: string): Promise<void>;
  /**
   * Every task is gone (the last one was deleted, or "Delete Everything"): remove all data the
   * owner keeps for tasks. Not called for "Delete All Except Favorites".
   */
  onAllTasksDeleted(): Promise<void>;
  /**
   * A deletion request (one or many tasks) has run its onTaskDeleted calls: work worth doing
   * once per request rather than once per task (e.g. collecting the garbage they left).
   */
  onDeletionsFinished?(): Promise<void>;
}
