export { CheckpointManager } from "./checkpoint-manager.js";
export type {
  CheckpointManagerOptions,
  CheckpointTask,
  CheckpointView,
  RestoreMode,
  RestoreOutcome,
  SaveOptions,
  ViewChangesTarget,
} from "./checkpoint-manager.js";
export type { CheckpointInfo, CheckpointKind } from "./checkpoint-record.js";
export type { CheckpointState, CheckpointStatus } from "./checkpoint-status.js";
export { CheckpointDeletionHook } from "./deletion-hook.js";
export { BUILT_IN_EXCLUDES } from "./exclusions.js";
export type { SkippedPath, SkipReason } from "./exclusions.js";
export { READ_ONLY_TOOLS, turnMayModify } from "./ports.js";
export type { TaskConversationPort } from "./ports.js";
export type { FileChange, FileStatus } from "./snapshot-diff.js";
export type { KeptPath, KeptReason } from "./snapshot-restore.js";
export { MESSAGES as CHECKPOINT_MESSAGES } from "./workspace-guard.js";
