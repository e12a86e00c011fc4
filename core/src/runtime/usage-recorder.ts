import type { TokenUsage } from "../agent/index.js";
import type { Logger } from "../logging/logger.js";
import type { TaskHistory } from "../tasks/index.js";
import type { LiveTask } from "./live-task.js";

/** Records a model call's usage in the task's metrics.db and its totals in the history row. */
export function usageRecorder(task: LiveTask, history: TaskHistory, logger: Logger) {
  return {
    record: (u: TokenUsage, costUsd: number | undefined, modelName: string, contextWindow?: number) => {
      task.metrics.record({
        time: Date.now(),
        tokensIn: u.inputTokens,
        tokensOut: u.outputTokens,
        cacheReads: u.cacheReadTokens,
        cacheWrites: u.cacheWriteTokens,
        cost: costUsd ?? 0,
        // No price known: the row says so, and the task's cost is shown as partly unknown.
        data: JSON.stringify({
          model: modelName,
          ...(costUsd === undefined ? { costUnknown: true } : {}),
          ...(contextWindow ? { contextWindow } : {}),
        }),
      });
      const totals = task.metrics.totals();
      void history
        .update(task.id, {
          tokensIn: totals.tokensIn,
          tokensOut: totals.tokensOut,
          cacheReads: totals.cacheReads,
          cacheWrites: totals.cacheWrites,
          cost: totals.cost,
          costUnknown: totals.costUnknown > 0,
          // The task's last activity (a model call), as history lists show it.
          updatedAt: Date.now(),
        })
        .catch((err: Error) => logger.error("history usage update failed", { taskId: task.id, error: err.message }));
    },
  };
}
