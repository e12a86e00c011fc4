import type { Lifecycle } from "../lifecycle.js";
import type { Logger } from "../logging/logger.js";
import type { InstanceLayout, SqliteFactory } from "../storage/index.js";
import type { TaskDeletionHook } from "./deletion-hooks.js";
import { openTaskStorage, type TaskStorage } from "./task-storage.js";

/**
 * Opens the task storage once, just after the sidecar started (so its recovery does not delay
 * the handshake), and registers its flush and close with the lifecycle. RPC handlers await it.
 */
export function lazyTaskStorage(deps: {
  layout: InstanceLayout;
  sqlite: SqliteFactory;
  logger: Logger;
  lifecycle: Lifecycle;
  /** Owners of task data outside the task folder (checkpoints); read when the storage opens. */
  deletionHooks?: () => TaskDeletionHook[];
}): () => Promise<TaskStorage> {
  let opening: Promise<TaskStorage> | undefined;
  const get = () => {
    if (!opening) {
      const attempt = openTaskStorage({ ...deps, deletionHooks: deps.deletionHooks?.() ?? [] });
      opening = attempt;
      attempt.then(
        (storage) => deps.lifecycle.onStop("task storage", () => storage.close()),
        (err: unknown) => {
          deps.logger.error("opening the task storage failed", { error: (err as Error).message });
          // Not remembered: the next call tries again (e.g. once a dead process's lock is stale).
          if (opening === attempt) opening = undefined;
        },
      );
    }
    return opening;
  };
  setImmediate(() => {
    if (!deps.lifecycle.isStopping) void get().catch(() => {});
  });
  return get;
}
