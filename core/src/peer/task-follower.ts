import type { TaskEvent } from "../gen/dline/v1/task_pb.js";
import type { Logger } from "../logging/logger.js";
import type { TaskOwnership } from "../tasks/index.js";
import type { TaskRoute, TaskRouter } from "./task-router.js";

export interface FollowDeps {
  router: TaskRouter;
  ownership: TaskOwnership;
  /** This sidecar's own stream of the task (TaskRuntime.subscribe). */
  local(afterSeq: bigint, signal: AbortSignal): AsyncIterable<TaskEvent>;
  /** The seq of the last event this sidecar's stream of the task holds (undefined: not loaded). */
  localLastSeq(): bigint | undefined;
  /** Whether the task still exists (a deleted task's stream ends). */
  exists(): boolean;
  /**
   * This sidecar's copy of the task is older than the task on disk: another process held it
   * and let go of it (a restore), maybe before this stream could follow it there.
   */
  localIsStale(): boolean;
  logger: Logger;
}

/** How long a stream that changes source waits for the old source's last events. */
const DRAIN_LIMIT_MS = 2000;
/** Pauses between attempts while the source of a task's events cannot be read (grows to the last). */
const LONGEST_RETRY_PAUSE_MS = 1000;
const RETRY_PAUSES_MS = [20, 50, 100, 250, 500, LONGEST_RETRY_PAUSE_MS];

/**
 * A task's events for a subscriber of this sidecar, wherever the task runs: from this sidecar's
 * own stream while it runs the task (or nobody does), from the owner's peer endpoint while
 * another sidecar runs it. Seqs are the owner's (a task's seqs increase across every sidecar
 * that ever ran it), so `afterSeq` resumes across sidecars, and every event is yielded once.
 *
 * The source changes when the task's claim changes hands: the old source's last events are
 * read first (its last seq, then the stream up to it), then the new one continues after them.
 * When the owner dies its stream breaks; the task is then served here, where loading it settles
 * the run the owner left as interrupted (TaskRuntime), so the subscriber sees that at once.
 */
export async function* followTask(
  taskId: string,
  afterSeq: bigint,
  signal: AbortSignal,
  deps: FollowDeps,
): AsyncGenerator<TaskEvent> {
  let cursor = afterSeq;
  let pauses = 0;
  let warned = false;
  for (let leg = 0; !signal.aborted; leg++) {
    if (leg > 0 && !deps.exists()) return;
    const route = await deps.router.route(taskId);
    if (route.kind === "unreachable" && !warned) {
      warned = true;
      deps.logger.warn("the sidecar running a task cannot be reached; its events are not followed until it stops", {
        taskId,
        pid: route.pid,
        why: route.why,
      });
    }
    const source = route.kind === "peer" ? route.pid : process.pid;
    const stop = new AbortController();
    const legSignal = AbortSignal.any([signal, stop.signal]);
    let drainTo: bigint | undefined;
    let changing = false;
    let drainTimer: NodeJS.Timeout | undefined;
    let seenHolder = route.kind === "here" ? route.holder : route.pid;
    const onClaimChange = (watched: boolean) => {
      const holder = deps.router.holder(deps.ownership, taskId);
      if (changing) return;
      if (watched && holder === undefined && route.kind === "here" && deps.localIsStale()) {
        // Changed and let go of by a process this stream never followed: the next leg loads
        // the task again, and with it the events that process left in its state.
        stop.abort();
        return;
      }
      if (holder === seenHolder) return;
      seenHolder = holder;
      // Nobody runs the task now: the last owner's stream is still the most complete one.
      if (holder === source || (holder === undefined && route.kind === "peer")) return;
      changing = true;
      drainTimer = setTimeout(() => stop.abort(), DRAIN_LIMIT_MS);
      void lastSeqOf(route, taskId, deps).then((seq) => {
        drainTo = seq;
        if (seq === undefined || cursor >= seq) stop.abort();
      });
    };
    const unwatch = deps.ownership.watchClaim(taskId, () => onClaimChange(true));
    onClaimChange(false); // a change between the lookup and the watch (this leg loads the task as it is)
    let yielded = false;
    let failure: unknown;
    try {
      const events =
        route.kind === "peer" ? remoteEvents(route, taskId, cursor, legSignal) : deps.local(cursor, legSignal);
      for await (const event of events) {
        if (event.seq > cursor) {
          cursor = event.seq;
          yielded = true;
          yield event;
        }
        if (drainTo !== undefined && cursor >= drainTo) break;
      }
    } catch (err) {
      failure = err;
    } finally {
      unwatch();
      clearTimeout(drainTimer);
    }
    if (signal.aborted) return;
    // This sidecar's own stream fails as it always did (a task that does not exist: not_found).
    if (failure !== undefined && route.kind !== "peer") throw failure;
    if (failure !== undefined && !stop.signal.aborted) {
      deps.logger.debug("the stream of the sidecar running a task ended with an error", {
        taskId,
        pid: source,
        error: (failure as Error)?.message,
      });
    }
    if (yielded || changing) pauses = 0;
    else await pause(RETRY_PAUSES_MS[pauses++] ?? LONGEST_RETRY_PAUSE_MS, signal);
  }
}

async function* remoteEvents(
  route: Extract<TaskRoute, { kind: "peer" }>,
  taskId: string,
  afterSeq: bigint,
  signal: AbortSignal,
): AsyncGenerator<TaskEvent> {
  for await (const res of route.clients.tasks.subscribe({ taskId, afterSeq }, { signal })) {
    if (res.event) yield res.event;
  }
}

/** The last seq the current source holds: its events up to it are read before changing source. */
async function lastSeqOf(route: TaskRoute, taskId: string, deps: FollowDeps): Promise<bigint | undefined> {
  if (route.kind !== "peer") return deps.localLastSeq();
  try {
    return (await route.clients.tasks.getTask({ taskId }, { timeoutMs: DRAIN_LIMIT_MS })).lastSeq;
  } catch {
    return undefined; // gone: nothing more will come from it
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
