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

export class DlineError extends Error {
  constructor(
    readonly code: DlineErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "DlineError";
  }
}
