import { CheckpointState, type GetStatusResponse } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import type { CheckpointHeader } from "../chat/chat-state.js";

/** The sentences of docs/checkpoints.md ("Limits") for what the editor knows before the core is asked. */
export const NO_WORKSPACE = "No workspace detected. Please open Dline in a workspace to use checkpoints.";
export const MULTI_ROOT = "Checkpoints are not currently supported in multi-root workspaces.";

/**
 * What the task header shows about checkpoints: nothing when they work; otherwise the core's
 * sentence with Retry Checkpoints / Disable Checkpoints where the core offers them.
 */
export function checkpointHeader(
  folders: readonly string[],
  status: GetStatusResponse | undefined,
): CheckpointHeader | undefined {
  if (folders.length === 0) return { state: "unavailable", message: NO_WORKSPACE, canRetry: false, canDisable: false };
  if (folders.length > 1) return { state: "unavailable", message: MULTI_ROOT, canRetry: false, canDisable: false };
  if (!status) return undefined;
  const names: Partial<Record<CheckpointState, string>> = {
    [CheckpointState.SLOW_INITIALIZATION]: "slow",
    [CheckpointState.FAILED]: "failed",
    [CheckpointState.UNAVAILABLE]: "unavailable",
    [CheckpointState.DISABLED]: "disabled",
  };
  const state = names[status.state];
  if (!state) return undefined; // ready, initializing
  return { state, message: status.message, canRetry: status.canRetry, canDisable: status.canDisable };
}
