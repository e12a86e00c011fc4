import type { TaskConversationPort } from "../checkpoints/ports.js";
import type { TaskStorage } from "../tasks/task-storage.js";
import type { TaskRuntime } from "./task-runtime.js";

/**
 * The conversation side of checkpoint restores, served by the runtime and the task index. Both
 * open just after start, so each call waits for them (a restore can come before any task runs).
 */
export function runtimeConversationPort(runtime: () => Promise<TaskRuntime>, tasks: () => Promise<TaskStorage>): TaskConversationPort {
  return {
    async workspaceRootsOf(taskId) {
      const record = (await tasks()).history.get(taskId);
      return record ? [record.workspaceRoot] : undefined;
    },
    async rewindConversation(taskId, messageId, options) {
      await (await runtime()).rewind(taskId, messageId, options);
    },
    async messageInfo(taskId, messageId) {
      const info = (await runtime()).messageInfo(taskId, messageId);
      return info ? { text: info.text, createdAt: info.createdAt } : undefined;
    },
    async taskState(taskId) {
      const record = (await tasks()).history.get(taskId);
      if (!record) return "deleted";
      const running = (await runtime()).isRunning(taskId);
      return running || record.status === "running" || record.status === "waiting" ? "running" : "finished";
    },
  };
}
