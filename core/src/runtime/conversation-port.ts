import * as fs from "node:fs";
import type { TaskConversationPort } from "../checkpoints/index.js";
import type { InstanceLayout } from "../storage/index.js";
import type { TaskStorage } from "../tasks/index.js";
import type { TaskRuntime } from "./task-runtime.js";

/**
 * The conversation side of checkpoint restores, served by the runtime and the task index. Both
 * open just after start, so each call waits for them (a restore can come before any task runs).
 */
export function runtimeConversationPort(
  runtime: () => Promise<TaskRuntime>,
  tasks: () => Promise<TaskStorage>,
  layout: InstanceLayout,
): TaskConversationPort {
  return {
    async workspaceRootsOf(taskId) {
      const record = (await tasks()).history.get(taskId);
      return record ? [record.workspaceRoot] : undefined;
    },
    async taskExists(taskId) {
      // A deletion removes the row, then the folder, then the checkpoint refs. A folder without
      // a row (a sidecar killed while creating the task) is indexed at the next start: it exists.
      return (await tasks()).history.get(taskId) !== undefined || fs.existsSync(layout.task(taskId).dir);
    },
    async rewindConversation(taskId, messageId, options) {
      await (await runtime()).rewind(taskId, messageId, options);
    },
    async holdForRestore(taskId) {
      // Checkpoints of a task with no conversation here (none stored) hold nothing.
      if (!(await tasks()).history.get(taskId)) return { end: () => {} };
      return (await runtime()).holdForRestore(taskId);
    },
    async filesRestored(taskId, note) {
      if (!(await tasks()).history.get(taskId)) return;
      (await runtime()).tellFilesRestored(taskId, note);
    },
    async checkpointSaved(taskId, messageId, checkpointId) {
      if (!(await tasks()).history.get(taskId)) return;
      (await runtime()).tellCheckpointSaved(taskId, messageId, checkpointId);
    },
    async stopRun(taskId, why) {
      return (await runtime()).stopRun(taskId, why);
    },
    async messageIds(taskId) {
      // Checkpoints of a task with no conversation here (none stored yet) are all offered.
      if (!(await tasks()).history.get(taskId)) return undefined;
      return (await runtime()).messageIds(taskId);
    },
    async activeTasksIn(workspaceRoot, exceptTaskId) {
      const { history, ownership } = await tasks();
      // A row still saying "running" whose sidecar died is no running task: its claim is gone.
      return history.activeIn(workspaceRoot).filter((t) => {
        if (t.id === exceptTaskId) return false;
        const owner = ownership.owner(t.id);
        return owner !== undefined && owner.purpose !== "delete";
      });
    },
    async messageInfo(taskId, messageId) {
      const info = (await runtime()).messageInfo(taskId, messageId);
      return info ? { text: info.text, createdAt: info.createdAt, role: info.role } : undefined;
    },
    async commandCalls(taskId) {
      if (!(await tasks()).history.get(taskId)) return [];
      return (await runtime()).commandCalls(taskId);
    },
    async taskState(taskId) {
      const record = (await tasks()).history.get(taskId);
      if (!record) return "deleted";
      const running = (await runtime()).isRunning(taskId);
      return running || record.status === "running" || record.status === "waiting" ? "running" : "finished";
    },
  };
}
