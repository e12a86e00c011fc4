/**
 * The one error type of the domain modules. Domain code throws DlineError with a code from
 * this closed set; rpc/connect-errors.ts turns it into a ConnectError with the matching Connect
 * code. (No import of connect here: the sidecar's start-up path uses DlineError before connect loads.)
 */
export type DlineErrorCode =
  | "invalid_argument"
  | "not_found"
  | "failed_precondition"
  | "aborted"
  | "already_exists"
  | "data_loss"
  | "unavailable"
  | "internal"
  | "permission_denied"
  | "resource_exhausted"
  | "canceled"
  | "deadline_exceeded"
  | "unimplemented";

/**
 * Why a call failed, where a client can act on it (each client maps it to its own way of
 * setting up or choosing a model). Carried next to the code, never instead of it.
 */
export type DlineErrorReason = "no_model" | "no_default_profile" | "profile_not_found" | "no_workspace";

export class DlineError extends Error {
  readonly errorReason: DlineErrorReason | undefined;

  constructor(
    readonly code: DlineErrorCode,
    message: string,
    options?: { cause?: unknown; errorReason?: DlineErrorReason },
  ) {
    super(message, options);
    this.name = "DlineError";
    this.errorReason = options?.errorReason;
  }
}

/** Error codes of a full disk (or quota): the file system's and SQLite's. */
const DISK_FULL_CODES = new Set(["ENOSPC", "EDQUOT", "SQLITE_FULL"]);

/** Whether `err` says the disk (or the user's quota) is full. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && DISK_FULL_CODES.has(code);
}

/** The sentence every answer about a full disk gives. */
export const DISK_FULL_MESSAGE = "The disk is full.";
