import type { CheckpointManager } from "../checkpoints/index.js";
import type { CheckpointPort } from "./ports.js";

/** The checkpoint save points of one task, as the turn loop calls them. */
export function taskCheckpoints(manager: CheckpointManager, taskId: string, workspaceRoot: string): CheckpointPort {
  const task = { id: taskId, workspaceRoots: [workspaceRoot] };
  return {
    async baseline(messageId) {
      return (await manager.ensureBaseline(task, messageId, { toolStarting: false }))?.id ?? "";
    },
    async beforeTool() {
      await manager.ensureBaseline(task);
    },
    runStarting(messageId, saved) {
      manager.runStarting(task, messageId, saved && ((cp) => saved(cp.id)));
    },
    async beforeEdit(paths) {
      await manager.beforeEdit(task, paths);
    },
    async saveTurn(change) {
      const saved = await manager.saveTurn(task, {
        editedPaths: change.editedPaths,
        commandRan: change.commandRan,
        messageId: change.messageId,
        nothingRan: change.nothingRan,
      });
      return saved?.id ?? "";
    },
    commandStarting() {
      manager.commandStarting(task);
    },
    async saveCompletion(messageId) {
      return (await manager.saveCompletion(task, { messageId }))?.id ?? "";
    },
    async saveCompaction(messageId) {
      return (await manager.saveCompaction(task, { messageId }))?.id ?? "";
    },
  };
}
