import { DlineError } from "../errors.js";
import type { TaskRunStatus } from "./runtime-events.js";

/**
 * A run stopped on purpose for something else the person asked (a checkpoint restore, from this
 * window or another). The run ends without a status of its own: the one who stopped it says how
 * the task ended once its work is done (TaskRuntime.stopRun), because a window that sees the task
 * end may close its sidecar, which would cut that work short (a `dline task` exits at the end).
 */
export class RunStoppedFor extends DlineError {
  constructor(readonly why: string) {
    super("canceled", `The task was stopped ${why}.`);
    this.name = "RunStoppedFor";
  }
}

/**
 * The status and reason a run aborted with `reason` (its signal's) ends with; undefined for a run
 * stopped for something else (RunStoppedFor), whose status is set when that is done.
 */
export function stoppedRunStatus(reason: unknown): { status: TaskRunStatus; reason: string } | undefined {
  if (reason instanceof RunStoppedFor) return undefined;
  // A stopping sidecar leaves the task interrupted (resumable); a person's Cancel cancels it.
  if (isSidecarStopping(reason)) return { status: "interrupted", reason: "the sidecar stopped" };
  return { status: "cancelled", reason: "cancelled" };
}

/** What a tool call cut short by the run's abort (`reason`) says; `waited`: it waited for approval, and never ran. */
export function stoppedCallReason(reason: unknown, waited = false): string {
  if (reason instanceof RunStoppedFor)
    return waited
      ? `The task was stopped ${reason.why} while this call waited for approval: nothing ran.`
      : `The task was stopped ${reason.why} before this call finished.`;
  if (isSidecarStopping(reason)) return "The sidecar stopped before this call finished.";
  return "The task was cancelled before this call finished.";
}

/** Whether the run's abort is its sidecar stopping (its shutdown's reason). */
export function isSidecarStopping(reason: unknown): boolean {
  return (reason as { code?: string } | undefined)?.code === "unavailable";
}
