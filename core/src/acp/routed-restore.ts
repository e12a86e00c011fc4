import { Code, ConnectError } from "@connectrpc/connect";
import type { CheckpointManager, RestoreMode, RestoreOutcome } from "../checkpoints/index.js";
import { DlineError, type DlineErrorCode } from "../errors.js";
import { KeptReason, RestoreMode as ProtoRestoreMode, type RestoreResponse } from "../gen/dline/v1/checkpoint_pb.js";
import type { TaskRouter } from "../peer/task-router.js";

const PROTO_MODES: Record<RestoreMode, ProtoRestoreMode> = {
  files_and_task: ProtoRestoreMode.FILES_AND_TASK,
  files: ProtoRestoreMode.FILES,
  task: ProtoRestoreMode.TASK,
};

/**
 * A restore asked over ACP, made where the task runs, as CheckpointService's is: here when this
 * sidecar runs it (or none does), else by the sidecar that runs it, which stops the run first
 * and rewinds the conversation it holds. Made here regardless, a restore of a task another
 * window ran wrote the files under its live run (its command wrote on) and was then refused
 * the conversation.
 */
export function routedRestore(
  checkpoints: CheckpointManager,
  router: TaskRouter | undefined,
): (taskId: string, checkpointId: string, mode: RestoreMode) => Promise<RestoreOutcome> {
  return (taskId, checkpointId, mode) => {
    const here = () => checkpoints.restore(taskId, checkpointId, mode);
    if (!router) return here();
    return router.call(taskId, here, async (peer) => {
      try {
        return outcomeOf(await peer.checkpoints.restore({ taskId, checkpointId, mode: PROTO_MODES[mode] }));
      } catch (err) {
        throw fromPeer(err);
      }
    });
  };
}

function outcomeOf(res: RestoreResponse): RestoreOutcome {
  return {
    filesRestored: res.filesRestored,
    fileError: res.fileError,
    restoredPaths: res.restoredPaths,
    deletedPaths: res.deletedPaths,
    keptPaths: res.keptPaths.map((k) => ({
      path: k.path,
      reason:
        k.reason === KeptReason.TOO_LARGE
          ? "too_large"
          : k.reason === KeptReason.BEYOND_LINK
            ? "beyond_link"
            : "not_tracked",
    })),
    keptPathsIncomplete: res.keptPathsIncomplete,
    undoCheckpointId: res.undoCheckpointId,
    conversationRestored: res.conversationRestored,
    runStopped: res.runStopped,
    repositoryNote: res.repositoryNote,
  };
}

/** The owner's error, with its Connect code, as the core's own (ACP clients read `data.dlineCode`). */
function fromPeer(err: unknown): unknown {
  if (!(err instanceof ConnectError)) return err;
  const name = Code[err.code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase() as DlineErrorCode;
  return new DlineError(name, err.rawMessage);
}
