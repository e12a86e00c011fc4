import type { DlineClients } from "../../../core/src/client/index.js";
import { MESSAGES as CHECKPOINT_MESSAGES } from "../../../core/src/checkpoints/workspace-guard.js";

/** How long a checkpoint command waits before it asks the core whether another window holds it up. */
const ASK_EVERY_MS = 1000;

/**
 * Runs a checkpoint command's calls; while they take long, asks the core's status every second
 * whether another Dline window holds the workspace's checkpoint repository (its baseline of a
 * large workspace, a restore), and says so once on stderr. Before, `dline checkpoints` and
 * `dline compare` waited for it in silence, up to two minutes.
 */
export async function sayingWhileHeldElsewhere<T>(
  err: NodeJS.WritableStream,
  clients: DlineClients,
  taskId: string,
  work: () => Promise<T>,
): Promise<T> {
  let finished = false;
  const timer = setInterval(() => {
    void clients.checkpoints.getStatus({ taskId }).then(
      (status) => {
        if (finished || !status.waitingForPid) return;
        finished = true;
        clearInterval(timer);
        err.write(`checkpoints: ${CHECKPOINT_MESSAGES.waitingForLock(status.waitingForPid)}\n`);
      },
      () => undefined, // the command's own call says what is wrong
    );
  }, ASK_EVERY_MS);
  timer.unref();
  try {
    return await work();
  } finally {
    finished = true;
    clearInterval(timer);
  }
}
