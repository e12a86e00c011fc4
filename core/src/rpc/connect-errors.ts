import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema, ErrorReason } from "../gen/dline/v1/errors_pb.js";
import { DlineError, type DlineErrorCode, type DlineErrorReason } from "../errors.js";

const reasons: Record<DlineErrorReason, ErrorReason> = {
  no_model: ErrorReason.NO_MODEL,
  no_default_profile: ErrorReason.NO_DEFAULT_PROFILE,
  profile_not_found: ErrorReason.PROFILE_NOT_FOUND,
  no_workspace: ErrorReason.NO_WORKSPACE,
};

const connectCodes: Record<DlineErrorCode, Code> = {
  invalid_argument: Code.InvalidArgument,
  not_found: Code.NotFound,
  failed_precondition: Code.FailedPrecondition,
  aborted: Code.Aborted,
  already_exists: Code.AlreadyExists,
  data_loss: Code.DataLoss,
  unavailable: Code.Unavailable,
  internal: Code.Internal,
  permission_denied: Code.PermissionDenied,
  resource_exhausted: Code.ResourceExhausted,
  canceled: Code.Canceled,
  deadline_exceeded: Code.DeadlineExceeded,
  unimplemented: Code.Unimplemented,
};

/**
 * Maps anything a handler threw to a ConnectError. SQLite busy/locked errors become
 * `unavailable` (retryable) and corruption `data_loss`; file-system errors map by errno.
 * Unknown errors become `internal` with a generic sentence: their text may hold paths or
 * values we do not want on the wire, so only the log gets the details.
 */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  if (err instanceof DlineError) {
    const details = err.errorReason
      ? [{ desc: ErrorDetailSchema, value: { reason: reasons[err.errorReason] } }]
      : undefined;
    return new ConnectError(err.message, connectCodes[err.code], undefined, details);
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string") {
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
      return new ConnectError("The database is busy in another process; try again.", Code.Unavailable);
    }
    if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB") {
      return new ConnectError("A database file is damaged; it was left in place.", Code.DataLoss);
    }
    if (code === "ENOENT") return new ConnectError("A file or folder does not exist.", Code.NotFound);
    if (code === "EACCES" || code === "EPERM") {
      return new ConnectError("Permission denied by the file system.", Code.PermissionDenied);
    }
    if (code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL")
      return new ConnectError("The disk is full.", Code.ResourceExhausted);
    if (code === "ENAMETOOLONG") return new ConnectError("A file name is too long.", Code.InvalidArgument);
  }
  return new ConnectError("Internal error in the Dline core; see its log.", Code.Internal);
}
