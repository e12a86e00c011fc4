import type { SkippedPath } from "./exclusions.js";
import type { ScanProgress } from "./snapshot-stager.js";

export type CheckpointState = "ready" | "initializing" | "slow" | "failed" | "unavailable" | "disabled";

/** What the task header shows about checkpoints of one workspace. */
export interface CheckpointStatus {
  state: CheckpointState;
  /** The sentence a person reads (docs/checkpoints.md, "Limits"). */
  message: string;
  canRetry: boolean;
  canDisable: boolean;
  /** What the latest scan left out and why. */
  skipped: SkippedPath[];
  repositorySizeBytes: number;
  /** While a baseline scan runs: its phase and, when staging, files done of total. */
  progress?: ScanProgress;
  /** Another process has held the repository for a while: its pid (the workspace's calls wait for it). */
  waitingForPid?: number;
}

export function makeStatus(
  state: CheckpointState,
  message: string,
  extra: Partial<Omit<CheckpointStatus, "state" | "message">> = {},
): CheckpointStatus {
  return {
    state,
    message,
    canRetry: extra.canRetry ?? (state === "failed" || state === "unavailable"),
    canDisable: extra.canDisable ?? (state === "failed" || state === "slow"),
    skipped: extra.skipped ?? [],
    repositorySizeBytes: extra.repositorySizeBytes ?? 0,
    ...(extra.progress ? { progress: extra.progress } : {}),
    ...(extra.waitingForPid ? { waitingForPid: extra.waitingForPid } : {}),
  };
}
