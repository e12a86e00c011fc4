import { ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema, ErrorReason } from "../../../../core/src/gen/dline/v1/errors_pb.js";
import type { ChatBanner } from "./chat-state.js";

const REASONS: Partial<Record<ErrorReason, string>> = {
  [ErrorReason.NO_MODEL]: "no_model",
  [ErrorReason.NO_DEFAULT_PROFILE]: "no_default_profile",
  [ErrorReason.PROFILE_NOT_FOUND]: "profile_not_found",
};

/** A failure as the chat shows it: the core's sentence, and its reason when the chat can help (set up a model). */
export function bannerOf(err: unknown): ChatBanner {
  if (err instanceof ConnectError) {
    const reason = err.findDetails(ErrorDetailSchema)[0]?.reason;
    return { message: err.rawMessage, reason: (reason !== undefined && REASONS[reason]) || "" };
  }
  return { message: err instanceof Error ? err.message : String(err), reason: "" };
}

/** The sentence a notification shows for a failure: the core's own, without the RPC code. */
export function errorNotice(err: unknown): string {
  return `Dline: ${bannerOf(err).message}`;
}

/** The machine-readable reason a Connect error carries (ErrorDetail), as its enum name; "" when none. */
export function errorReason(err: unknown): string {
  const reason = ConnectError.from(err).findDetails(ErrorDetailSchema)[0]?.reason;
  return reason ? `ERROR_REASON_${ErrorReason[reason]}` : "";
}

/**
 * The folder a task refused for want of one (ERROR_REASON_NO_WORKSPACE) continues in: the
 * window's folder when exactly one is open; undefined otherwise (the refusal stands).
 */
export function continueInFolder(reason: string, folders: readonly string[]): string | undefined {
  return reason === "ERROR_REASON_NO_WORKSPACE" && folders.length === 1 ? folders[0] : undefined;
}
