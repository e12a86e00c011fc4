import { DISK_FULL_MESSAGE, isDiskFull } from "../errors.js";

/**
 * What a task's error event says about the failure that ended its run: a full disk is
 * `resource_exhausted` with "The disk is full." (a write of the task's own files, a database
 * or a log failed); anything else is `internal` with the error's message.
 */
export function describeRunFailure(err: unknown): { code: string; message: string } {
  if (isDiskFull(err)) return { code: "resource_exhausted", message: DISK_FULL_MESSAGE };
  return { code: "internal", message: err instanceof Error ? err.message : String(err) };
}
