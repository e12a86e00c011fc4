import type { ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  CheckpointKind,
  CheckpointSchema,
  CheckpointState,
  CompareResponseSchema,
  DisableResponseSchema,
  EditMessageMode,
  EditMessageResponseSchema,
  FileChangeSchema,
  FileStatus,
  GetStatusResponseSchema,
  KeptReason,
  ListCheckpointsResponseSchema,
  RestoreMode,
  RestoreResponseSchema,
  RetryResponseSchema,
  SkipReason,
  SkippedPathSchema,
  ViewChangesResponseSchema,
  type CheckpointService,
  type EditMessageRequest,
  type GetStatusResponse,
  type RestoreRequest,
} from "../gen/dline/v1/checkpoint_pb.js";
import type {
  CheckpointKind as DomainKind,
  CheckpointManager,
  CheckpointState as DomainState,
  CheckpointStatus,
  CheckpointView,
  FileChange,
  KeptPath as DomainKeptPath,
  RestoreMode as DomainRestoreMode,
  SkippedPath,
  SkipReason as DomainSkipReason,
} from "../checkpoints/index.js";
import { DlineError } from "../errors.js";
import { assertWorkspaceFolder } from "../runtime/index.js";
import type { PeerClients } from "../peer/peer-clients.js";
import type { TaskRouter } from "../peer/task-router.js";
import { assertSafeId } from "../storage/index.js";

/**
 * Maps CheckpointService to the CheckpointManager; proto <-> domain only. With a `router`, a
 * restore of a task another sidecar runs is made by that sidecar (it stops the run and rewinds
 * the conversation it holds), as if its own client had asked for it.
 */
export function checkpointService(
  manager: CheckpointManager,
  router?: TaskRouter,
): Partial<ServiceImpl<typeof CheckpointService>> {
  const routed = <T>(taskId: string, here: () => Promise<T>, there: (peer: PeerClients) => Promise<T>) =>
    router ? router.call(taskId, here, there) : here();
  const restoreHere = async (req: RestoreRequest) => {
    const outcome = await manager.restore(req.taskId, req.checkpointId, restoreMode(req.mode));
    return create(RestoreResponseSchema, {
      filesRestored: outcome.filesRestored,
      fileError: outcome.fileError,
      restoredPaths: outcome.restoredPaths,
      deletedPaths: outcome.deletedPaths,
      keptPaths: outcome.keptPaths.map(toKeptPath),
      keptPathsIncomplete: outcome.keptPathsIncomplete,
      undoCheckpointId: outcome.undoCheckpointId,
      conversationRestored: outcome.conversationRestored,
      runStopped: outcome.runStopped,
      repositoryNote: outcome.repositoryNote,
    });
  };
  const editMessageHere = async (req: EditMessageRequest) => {
    const mode =
      req.mode === EditMessageMode.RESTORE_CHAT
        ? "restore_chat"
        : req.mode === EditMessageMode.RESTORE_ALL
          ? "restore_all"
          : undefined;
    if (!mode) throw new DlineError("invalid_argument", "Choose Restore Chat or Restore All.");
    const outcome = await manager.editMessage(req.taskId, req.messageId, req.text, mode, { dryRun: req.dryRun });
    return create(EditMessageResponseSchema, { ...outcome, keptPaths: outcome.keptPaths.map(toKeptPath) });
  };
  return {
    async listCheckpoints(req) {
      assertSafeId("task id", req.taskId);
      return create(ListCheckpointsResponseSchema, { checkpoints: (await manager.list(req.taskId)).map(toCheckpoint) });
    },
    async compare(req) {
      assertSafeId("task id", req.taskId);
      const { files, skipped, restorePaths } = await manager.compare(req.taskId, req.checkpointId);
      return create(CompareResponseSchema, {
        files: files.map(toFileChange),
        skipped: skipped.map(toSkipped),
        restorePaths,
      });
    },
    async viewChanges(req) {
      assertSafeId("task id", req.taskId);
      const { files, from, to } = await manager.viewChanges(req.taskId, {
        checkpointId: req.checkpointId,
        messageId: req.messageId,
      });
      return create(ViewChangesResponseSchema, {
        files: files.map(toFileChange),
        fromCheckpointId: from,
        toCheckpointId: to,
      });
    },
    async restore(req, ctx) {
      assertSafeId("task id", req.taskId);
      return routed(
        req.taskId,
        () => restoreHere(req),
        (peer) => peer.checkpoints.restore(req, { signal: ctx.signal }),
      );
    },
    async editMessage(req, ctx) {
      assertSafeId("task id", req.taskId);
      // A dry run changes nothing: answered here from the stored task, as Compare is, never
      // forwarded to the sidecar running the task (an older version there would not know
      // dry_run and would restore).
      if (req.dryRun) return editMessageHere(req);
      return routed(
        req.taskId,
        () => editMessageHere(req),
        (peer) => peer.checkpoints.editMessage(req, { signal: ctx.signal }),
      );
    },
    async getStatus(req) {
      return toStatus(await manager.status(query(req)));
    },
    async retry(req) {
      return create(RetryResponseSchema, { status: toStatus(await manager.retry(query(req))) });
    },
    async disable(req) {
      const q = query(req);
      await manager.disable(q);
      return create(DisableResponseSchema, { status: toStatus(await manager.status(q)) });
    },
  };
}

function query(req: { taskId: string; workspaceRoot: string }): { taskId?: string; workspaceRoot?: string } {
  if (req.workspaceRoot) {
    // A folder that is not there, a relative path or a file answered "ready" (and Retry then
    // resolved a relative path against the sidecar's own folder).
    assertWorkspaceFolder(req.workspaceRoot);
    return { workspaceRoot: req.workspaceRoot };
  }
  if (req.taskId) {
    assertSafeId("task id", req.taskId);
    return { taskId: req.taskId };
  }
  throw new DlineError("invalid_argument", "Give a task id or a workspace root.");
}

function restoreMode(mode: RestoreMode): DomainRestoreMode {
  switch (mode) {
    case RestoreMode.FILES_AND_TASK:
      return "files_and_task";
    case RestoreMode.FILES:
      return "files";
    case RestoreMode.TASK:
      return "task";
    default:
      throw new DlineError("invalid_argument", "Choose a restore mode: files and task, files, or task.");
  }
}

const KINDS: Record<DomainKind, CheckpointKind> = {
  baseline: CheckpointKind.BASELINE,
  turn: CheckpointKind.TURN,
  completion: CheckpointKind.COMPLETION,
  compaction: CheckpointKind.COMPACTION,
  before_restore: CheckpointKind.BEFORE_RESTORE,
};

const REASONS: Record<DomainSkipReason, SkipReason> = {
  size: SkipReason.SIZE,
  excluded_type: SkipReason.EXCLUDED_TYPE,
  ignored: SkipReason.IGNORED,
  lfs: SkipReason.LFS,
  nested_repository: SkipReason.NESTED_REPOSITORY,
  name_not_utf8: SkipReason.NAME_NOT_UTF8,
};

const STATES: Record<DomainState, CheckpointState> = {
  ready: CheckpointState.READY,
  initializing: CheckpointState.INITIALIZING,
  slow: CheckpointState.SLOW_INITIALIZATION,
  failed: CheckpointState.FAILED,
  unavailable: CheckpointState.UNAVAILABLE,
  disabled: CheckpointState.DISABLED,
};

function toSkipped(s: SkippedPath) {
  return create(SkippedPathSchema, { path: s.path, reason: REASONS[s.reason] });
}

function toCheckpoint(c: CheckpointView) {
  return create(CheckpointSchema, {
    id: c.id,
    kind: KINDS[c.kind],
    createdAt: BigInt(c.createdAt),
    messageId: c.messageId,
    hasFiles: c.hasFiles,
    restored: c.restored,
    skipped: c.skipped.map(toSkipped),
    undoAvailable: c.undoAvailable,
    reused: c.reused,
    skippedTotal: c.skippedTotal,
    editedPaths: c.edited,
  });
}

function toFileChange(f: FileChange) {
  const status =
    f.status === "added" ? FileStatus.ADDED : f.status === "deleted" ? FileStatus.DELETED : FileStatus.MODIFIED;
  return create(FileChangeSchema, {
    path: f.path,
    status,
    before: f.before,
    after: f.after,
    binary: f.binary,
    tooLarge: f.tooLarge,
    notTracked: f.notTracked ?? false,
    modeBefore: f.modeBefore ?? "",
    modeAfter: f.modeAfter ?? "",
  });
}

function toStatus(s: CheckpointStatus): GetStatusResponse {
  return create(GetStatusResponseSchema, {
    state: STATES[s.state],
    message: s.message,
    canRetry: s.canRetry,
    canDisable: s.canDisable,
    skipped: s.skipped.map(toSkipped),
    repositorySizeBytes: BigInt(s.repositorySizeBytes),
    phase: s.progress?.phase ?? "",
    filesDone: BigInt(s.progress?.done ?? 0),
    filesTotal: BigInt(s.progress?.total ?? 0),
    waitingForPid: s.waitingForPid ?? 0,
  });
}

function toKeptPath(k: DomainKeptPath) {
  const reason =
    k.reason === "too_large"
      ? KeptReason.TOO_LARGE
      : k.reason === "beyond_link"
        ? KeptReason.BEYOND_LINK
        : KeptReason.NOT_TRACKED;
  return { path: k.path, reason };
}
