/**
 * Checkpoints over ACP. The protocol has no file rollback, so they are extension methods (ACP
 * reserves names starting with "_" for them). The session id is the task id; any session of
 * the history works, not only the ones open on this connection.
 *
 *   _dline/checkpoints/list          {sessionId}                          -> {checkpoints}
 *   _dline/checkpoints/compare       {sessionId, checkpointId}            -> {files, skipped, restorePaths}
 *   _dline/checkpoints/view_changes  {sessionId, checkpointId?, messageId?} -> {files, fromCheckpointId, toCheckpointId}
 *   _dline/checkpoints/restore       {sessionId, checkpointId, mode}      -> RestoreResult
 *   _dline/checkpoints/undo          {sessionId}                          -> RestoreResult
 *   _dline/checkpoints/status        {sessionId}                          -> CheckpointStatus
 *   _dline/checkpoints/retry         {sessionId}                          -> CheckpointStatus
 *   _dline/checkpoints/disable       {sessionId}                          -> CheckpointStatus
 *
 * mode is "files_and_task", "files" or "task" (the three restore menu entries).
 *
 * A session opened on this connection whose first prompt has not come yet has no task: its
 * list is empty, view_changes answers as for a task not completed yet, and status, retry and
 * disable answer for its folder (an editor shows the checkpoint header as soon as the session
 * opens).
 */
import { RequestError, type AgentApp } from "@agentclientprotocol/sdk";
import type { CheckpointManager, CheckpointView, FileChange, RestoreMode } from "../checkpoints/index.js";
import { DlineError } from "../errors.js";
import { assertSafeId } from "../storage/index.js";
import type { TaskRouter } from "../peer/task-router.js";
import { mapErrors, objectParams } from "./acp-errors.js";
import { routedRestore } from "./routed-restore.js";

export const CHECKPOINT_METHODS = {
  list: "_dline/checkpoints/list",
  compare: "_dline/checkpoints/compare",
  viewChanges: "_dline/checkpoints/view_changes",
  restore: "_dline/checkpoints/restore",
  undo: "_dline/checkpoints/undo",
  status: "_dline/checkpoints/status",
  retry: "_dline/checkpoints/retry",
  disable: "_dline/checkpoints/disable",
} as const;

const MODES: readonly RestoreMode[] = ["files_and_task", "files", "task"];

function sessionParams(raw: unknown) {
  const params = objectParams(["sessionId"])(raw);
  assertSafeOrInvalid(params.sessionId);
  return params;
}

function assertSafeOrInvalid(id: string): void {
  try {
    assertSafeId("session id", id);
  } catch (err) {
    throw RequestError.invalidParams(undefined, (err as Error).message);
  }
}

function checkpointJson(c: CheckpointView) {
  return {
    id: c.id,
    kind: c.kind,
    createdAt: new Date(c.createdAt).toISOString(),
    messageId: c.messageId,
    hasFiles: c.hasFiles,
    restored: c.restored,
    undoAvailable: c.undoAvailable,
    editedPaths: c.edited,
    skippedTotal: c.skippedTotal,
  };
}

/** A changed file as the README documents it (the domain's own bookkeeping, such as blob ids, left out). */
function fileJson(f: FileChange): Record<string, unknown> {
  return {
    path: f.path,
    status: f.status,
    before: f.before,
    after: f.after,
    binary: f.binary,
    tooLarge: f.tooLarge,
    ...(f.notTracked ? { notTracked: true } : {}),
    ...(f.tooLargeToKeep ? { tooLargeToKeep: true } : {}),
    ...(f.modeBefore !== undefined ? { modeBefore: f.modeBefore, modeAfter: f.modeAfter } : {}),
  };
}

export function registerCheckpointMethods(
  agent: AgentApp,
  checkpoints: CheckpointManager,
  /** The folder of a session open here that has no task yet (its first prompt makes it). */
  folderBeforeFirstPrompt: (sessionId: string) => string | undefined,
  /** Where a task runs: a restore of one another sidecar runs is made there (routed-restore.ts). */
  router?: TaskRouter,
): void {
  const restore = routedRestore(checkpoints, router);
  const target = (sessionId: string) => {
    const workspaceRoot = folderBeforeFirstPrompt(sessionId);
    return workspaceRoot ? { workspaceRoot } : { taskId: sessionId };
  };
  agent.onRequest(CHECKPOINT_METHODS.list, sessionParams, ({ params }) =>
    mapErrors(async () => {
      if (folderBeforeFirstPrompt(params.sessionId)) return { checkpoints: [] };
      return { checkpoints: (await checkpoints.list(params.sessionId)).map(checkpointJson) };
    }),
  );
  agent.onRequest(
    CHECKPOINT_METHODS.compare,
    (raw: unknown) => {
      const params = objectParams(["sessionId", "checkpointId"])(raw);
      assertSafeOrInvalid(params.sessionId);
      return params;
    },
    ({ params }) =>
      mapErrors(async () => {
        const { files, skipped, restorePaths } = await checkpoints.compare(params.sessionId, params.checkpointId);
        return { files: files.map(fileJson), skipped, restorePaths };
      }),
  );
  // The latest completion, or the one checkpointId (its checkpoint) or messageId (its message) names.
  agent.onRequest(
    CHECKPOINT_METHODS.viewChanges,
    (raw: unknown) => {
      const params = objectParams(["sessionId"], ["checkpointId", "messageId"])(raw);
      assertSafeOrInvalid(params.sessionId);
      // Checked strings or absent (null too): an empty one names nothing, as over Connect.
      const named = (v: unknown) => (typeof v === "string" && v ? v : undefined);
      return {
        sessionId: params.sessionId,
        checkpointId: named(params.checkpointId),
        messageId: named(params.messageId),
      };
    },
    ({ params }) =>
      mapErrors(async () => {
        // As for a task that has not completed yet.
        if (folderBeforeFirstPrompt(params.sessionId))
          throw new DlineError("failed_precondition", "View Changes is available after the task completes.");
        const { files, from, to } = await checkpoints.viewChanges(params.sessionId, {
          checkpointId: params.checkpointId,
          messageId: params.messageId,
        });
        return { files: files.map(fileJson), fromCheckpointId: from, toCheckpointId: to };
      }),
  );
  agent.onRequest(
    CHECKPOINT_METHODS.restore,
    (raw: unknown) => {
      const params = objectParams(["sessionId", "checkpointId", "mode"])(raw);
      assertSafeOrInvalid(params.sessionId);
      if (!MODES.includes(params.mode as RestoreMode)) {
        throw RequestError.invalidParams(undefined, `mode must be one of ${MODES.join(", ")}`);
      }
      return params;
    },
    ({ params }) => mapErrors(() => restore(params.sessionId, params.checkpointId, params.mode as RestoreMode)),
  );
  // Undo restore: the "before restore" checkpoint the last restore saved, restored (files only).
  agent.onRequest(CHECKPOINT_METHODS.undo, sessionParams, ({ params }) =>
    mapErrors(async () => {
      const undo = (await checkpoints.list(params.sessionId)).find((c) => c.undoAvailable);
      if (!undo)
        throw new DlineError(
          "failed_precondition",
          "There is no restore to undo (or a checkpoint was saved since, or another task changed a file the undo would put back).",
        );
      return restore(params.sessionId, undo.id, "files");
    }),
  );
  // The task header's state: "Git must be installed...", Retry Checkpoints, Disable Checkpoints.
  agent.onRequest(CHECKPOINT_METHODS.status, sessionParams, ({ params }) =>
    mapErrors(() => checkpoints.status(target(params.sessionId))),
  );
  agent.onRequest(CHECKPOINT_METHODS.retry, sessionParams, ({ params }) =>
    mapErrors(() => checkpoints.retry(target(params.sessionId))),
  );
  agent.onRequest(CHECKPOINT_METHODS.disable, sessionParams, ({ params }) =>
    mapErrors(async () => {
      await checkpoints.disable(target(params.sessionId));
      return checkpoints.status(target(params.sessionId));
    }),
  );
}
