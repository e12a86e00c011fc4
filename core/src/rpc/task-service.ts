import type { ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  DeleteMode,
  DeleteTasksResponseSchema,
  GetTaskResponseSchema,
  type TaskService,
} from "../gen/dline/v1/task_pb.js";
import { DlineError } from "../errors.js";
import type { DeleteMode as DomainDeleteMode, TaskStorage } from "../tasks/index.js";
import { fitMessagesToAnswer } from "./answer-budget.js";
import { taskSummaryToProto, uiMessageToProto } from "./task-mapping.js";

/** What the storage side of TaskService needs. The runtime (NewTask, Subscribe, ...) adds its own deps. */
export interface TaskStorageServiceDeps {
  /** The task storage, opened once after start. */
  tasks: () => Promise<TaskStorage>;
}

const deleteModeOf: Partial<Record<DeleteMode, DomainDeleteMode>> = {
  [DeleteMode.SELECTED]: "selected",
  [DeleteMode.ALL]: "all",
  [DeleteMode.ALL_EXCEPT_FAVORITES]: "all_except_favorites",
};

/**
 * TaskService methods backed by the task store: GetTask and DeleteTasks. The runtime's methods
 * live in their own function and are spread next to these in routes.ts:
 *   router.service(TaskService, { ...taskStorageMethods(deps), ...taskRuntimeMethods(rt) })
 */
export function taskStorageMethods(deps: TaskStorageServiceDeps): Partial<ServiceImpl<typeof TaskService>> {
  return {
    async getTask(req) {
      if (!req.taskId) throw new DlineError("invalid_argument", "task_id is empty.");
      const view = (await deps.tasks()).store.get(req.taskId);
      const messages = view.messages.map((m) => uiMessageToProto(m, { stopped: view.ownerPid === 0 }));
      fitMessagesToAnswer(messages);
      return create(GetTaskResponseSchema, {
        task: taskSummaryToProto(view.record),
        messages,
        ownerPid: view.ownerPid,
      });
    },
    async deleteTasks(req) {
      // Unspecified with ids reads as "these tasks"; without ids it is refused rather than guessed.
      const mode = req.mode === DeleteMode.UNSPECIFIED && req.taskIds.length > 0 ? "selected" : deleteModeOf[req.mode];
      if (!mode)
        throw new DlineError(
          "invalid_argument",
          "mode must be DELETE_MODE_SELECTED, DELETE_MODE_ALL or DELETE_MODE_ALL_EXCEPT_FAVORITES.",
        );
      if (mode !== "selected" && req.taskIds.length > 0)
        throw new DlineError("invalid_argument", "task_ids must be empty unless mode is DELETE_MODE_SELECTED.");
      const { deletion, watcher } = await deps.tasks();
      try {
        const result = await deletion.delete(mode, req.taskIds);
        return create(DeleteTasksResponseSchema, { deletedTaskIds: result.deleted });
      } finally {
        watcher.poll();
      }
    },
  };
}
