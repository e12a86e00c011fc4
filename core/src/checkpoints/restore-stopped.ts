import { DISK_FULL_MESSAGE, DlineError, isDiskFull, type DlineErrorCode } from "../errors.js";

/** A restore whose write failed after it had written `written` (a full disk, say). */
export class RestoreStopped extends Error {
  constructor(
    readonly failure: unknown,
    readonly written: readonly string[],
  ) {
    super((failure as Error)?.message ?? String(failure), { cause: failure });
    this.name = "RestoreStopped";
  }
}

/** Files named one by one in the answer; past it, how many more. */
const NAMED = 5;

/**
 * The answer for a restore stopped part-way: why, which files it had already written, and the
 * "before restore" checkpoint (saved before any file was touched) that puts them back.
 */
export function stoppedPartWay(stopped: RestoreStopped, undoId: string): DlineError {
  const err = stopped.failure;
  const code: DlineErrorCode = isDiskFull(err)
    ? "resource_exhausted"
    : err instanceof DlineError
      ? err.code
      : (err as { code?: unknown })?.code === "EACCES" || (err as { code?: unknown })?.code === "EPERM"
        ? "permission_denied"
        : "internal";
  const why = isDiskFull(err) ? DISK_FULL_MESSAGE : `Writing a file failed: ${stopped.message}`;
  const named = stopped.written.slice(0, NAMED).join(", ");
  const more = stopped.written.length > NAMED ? ` and ${stopped.written.length - NAMED} more` : "";
  return new DlineError(
    code,
    `${why} The restore stopped part-way: ${stopped.written.length} file(s) were already restored ` +
      `(${named}${more}). Restoring the "before restore" checkpoint ${undoId} puts them back as they were.`,
    { cause: err },
  );
}
