// The tasks folder's public surface: the history index, per-task stores, ownership, deletion and
// legacy imports. Other folders import only this file.
export { ActivityStore } from "./activity-store.js";
export { CommandLogs } from "./command-logs.js";
export type { DeleteMode } from "./deletion-coordinator.js";
export type { TaskDeletionHook } from "./deletion-hooks.js";
export type { HistorySort } from "./history-query.js";
export { readNotice } from "./history-watcher.js";
export { JournalStore } from "./journal-store.js";
export type { JournalAppend, JournalEntry } from "./journal-store.js";
export { lazyTaskStorage } from "./lazy-task-storage.js";
export { LEGACY_CONVERSATION_KIND, importLegacyConversation } from "./legacy-import.js";
export { clineMessagesToUi } from "./legacy-parsers.js";
export { MessageStore, uiMessage } from "./message-store.js";
export type { StoredUiMessage } from "./message-store.js";
export { MetricsStore, metricsFingerprint } from "./metrics-store.js";
export type { RequestMetrics } from "./metrics-store.js";
export { currentProcessIdentity, isClaimLive, isProcessAlive } from "./process-alive.js";
export type { ProcessIdentity } from "./process-alive.js";
export { StateFile } from "./state-file.js";
export { IN_MEMORY, TaskFileDamaged } from "./task-db.js";
export { TaskHistory } from "./task-history.js";
export { TaskJsonFiles } from "./task-json-files.js";
export { TaskOwnedElsewhere, TaskOwnership } from "./task-ownership.js";
export type { TaskRecord, TaskRecordInit, TaskStatusName } from "./task-record.js";
export type { TaskStorage } from "./task-storage.js";
