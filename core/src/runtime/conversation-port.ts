import type { TaskConversationPort } from "../checkpoints/ports.js";
import type { TaskHistory } from "../tasks/task-history.js";
import type { TaskRuntime } from "./task-runtime.js";

/** The conversation side of checkpoint restores, served by the runtime and the task index. */
export function runtimeConversationPort(runtime: TaskRuntime, history: TaskHistory): TaskConversationPort {
  return {
    async workspaceRootsOf(taskId) {
      const record = history.get(taskId);
      return record ? [record.workspaceRoot] : undefined;
    },
    async rewindConversation(taskId, messageId, options) {
      await runtime.rewind(taskId, messageId, options);
    },
    async messageInfo(taskId, messageId) {
      const info = runtime.messageInfo(taskId, messageId);
      return info ? { text: info.text, createdAt: info.createdAt } : undefined;
    },
    async taskState(taskId) {
      const record = history.get(taskId);
      if (!record) return "deleted";
      return runtime.isRunning(taskId) || record.status === "running" || record.status === "waiting" ? "running" : "finished";
    },
  };
}
