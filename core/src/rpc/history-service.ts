import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  ListTasksResponseSchema,
  SetFavoriteResponseSchema,
  TaskSort,
  WatchHistoryResponseSchema,
  type HistoryService,
  type WatchHistoryRequest,
  type WatchHistoryResponse,
} from "../gen/dline/v1/history_pb.js";
import { DlineError } from "../errors.js";
import { assertSafeId } from "../storage/index.js";
import { readNotice, type HistorySort, type TaskStorage } from "../tasks/index.js";
import { taskSummaryToProto } from "./task-mapping.js";

export interface HistoryServiceDeps {
  /** The task storage, opened once after start. */
  tasks: () => Promise<TaskStorage>;
  /** Aborted when the sidecar stops: open streams end. */
  stopSignal: AbortSignal;
}

const sortOf: Record<TaskSort, HistorySort> = {
  [TaskSort.UNSPECIFIED]: "newest",
  [TaskSort.NEWEST]: "newest",
  [TaskSort.OLDEST]: "oldest",
  [TaskSort.MOST_EXPENSIVE]: "most_expensive",
};

export function historyService(deps: HistoryServiceDeps): Partial<ServiceImpl<typeof HistoryService>> {
  return {
    async listTasks(req) {
      const { history } = await deps.tasks();
      if (req.pageSize < 0) throw new DlineError("invalid_argument", "page_size must not be negative.");
      const sort = sortOf[req.sort];
      if (!sort) throw new DlineError("invalid_argument", `Unknown sort ${req.sort}.`);
      const page = history.list({
        workspaceRoot: req.workspaceRoot,
        query: req.query,
        favoritesOnly: req.favoritesOnly,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        sort,
      });
      return create(ListTasksResponseSchema, {
        tasks: page.tasks.map(taskSummaryToProto),
        nextPageToken: page.nextPageToken,
      });
    },
    async setFavorite(req) {
      assertSafeId("task id", req.taskId);
      const { history, watcher } = await deps.tasks();
      if (!history.setFavorite(req.taskId, req.favorite))
        throw new DlineError("not_found", `Task ${req.taskId} does not exist.`);
      watcher.poll();
      return create(SetFavoriteResponseSchema, {});
    },
    watchHistory: (req, ctx) => watch(deps, req, ctx),
  };
}

/**
 * Streams one notice per batch of history changes. The watcher only wakes the stream; what
 * changed is read from the change log after this stream's own last seq, so a resumed stream
 * (after_seq) gets every change once, without loss or duplicates.
 */
async function* watch(
  deps: HistoryServiceDeps,
  req: WatchHistoryRequest,
  ctx: HandlerContext,
): AsyncGenerator<WatchHistoryResponse> {
  const { history, watcher } = await deps.tasks();
  let wake: (() => void) | undefined;
  const unsubscribe = watcher.subscribe(() => wake?.());
  const onAbort = () => wake?.();
  ctx.signal.addEventListener("abort", onAbort);
  deps.stopSignal.addEventListener("abort", onAbort);
  let last = req.afterSeq > 0n ? Number(req.afterSeq) : history.latestChangeSeq();
  try {
    while (!ctx.signal.aborted && !deps.stopSignal.aborted) {
      const notice = readNotice(history, last);
      if (notice) {
        last = notice.seq;
        yield create(WatchHistoryResponseSchema, {
          changedTaskIds: notice.changedTaskIds,
          removedTaskIds: notice.removedTaskIds,
          reload: notice.reload,
          seq: BigInt(notice.seq),
        });
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    unsubscribe();
    ctx.signal.removeEventListener("abort", onAbort);
    deps.stopSignal.removeEventListener("abort", onAbort);
  }
}
