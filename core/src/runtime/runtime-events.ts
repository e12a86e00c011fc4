/**
 * The runtime's own language for what happens in a task: its statuses, its questions and its
 * events. The runtime emits these; `rpc/task-mapping.ts` turns them into the protocol's
 * `TaskEvent` for clients (the only place that knows both), so the runtime never depends on
 * generated protocol code.
 */
import type { StoredUiMessage, TaskStatusName } from "../tasks/index.js";
import type { CommandLineRecord, FileEditRecord, ToolCallStatusName } from "./tool-call-record.js";

/** A task's status as the runtime sets it (the same names the task index stores). */
export type TaskRunStatus = TaskStatusName;

export type AskKindName = "tool_approval" | "command_approval" | "followup" | "completion" | "resume";

/** A question the task waits on, as it was asked. */
export interface RuntimeAsk {
  askId: string;
  kind: AskKindName;
  tool: string;
  /** One line a person reads. */
  summary: string;
  /** JSON of the tool's arguments. */
  detail: string;
  options: string[];
  /** The change an edit approval is about: what is approved is what is written. */
  edits: FileEditRecord[];
  /** The exact command line of a command approval. */
  command?: CommandLineRecord;
  toolCallId: string;
  /** Why the same call is asked again (the file changed on disk while it waited); absent the first time. */
  askedAgainBecause?: string;
}

/** A file restore of the task (or the Undo of one), as every window of the task is told it. */
export interface FilesRestoredNote {
  /** The checkpoint the files were restored to (for an Undo, a "before restore" checkpoint). */
  checkpointId: string;
  /** The "before restore" checkpoint saved first: restoring it undoes this restore. */
  undoCheckpointId: string;
  /** This restore was an Undo of an earlier one. */
  undo: boolean;
}

/** One thing that happened in a task; `case` names it as the protocol's event oneof does. */
export type RuntimeEventBody =
  | { case: "messageAdded"; value: { message: StoredUiMessage } }
  | { case: "messageDelta"; value: { messageId: string; text: string } }
  | { case: "messageFinalized"; value: { message: StoredUiMessage } }
  | { case: "ask"; value: RuntimeAsk }
  | { case: "askResolved"; value: { askId: string; approved: boolean; text: string; dropped?: boolean } }
  | {
      case: "toolStarted";
      value: {
        toolCallId: string;
        tool: string;
        summary: string;
        detail: string;
        command?: CommandLineRecord;
        messageId: string;
      };
    }
  | { case: "toolOutput"; value: { toolCallId: string; chunk: string } }
  | {
      case: "toolFinished";
      value: {
        toolCallId: string;
        ok: boolean;
        result: string;
        edits?: FileEditRecord[];
        status: ToolCallStatusName;
        /** Why it failed or was interrupted, in one line (the row's reason); "" when done. */
        reason?: string;
      };
    }
  | { case: "checkpointSaved"; value: { checkpointId: string; messageId: string; kind: string } }
  | { case: "statusChanged"; value: { status: TaskRunStatus; reason: string } }
  | {
      case: "usage";
      value: {
        tokensIn: bigint;
        tokensOut: bigint;
        cacheReads: bigint;
        cacheWrites: bigint;
        cost: number;
        costUnknown: boolean;
        contextWindow: bigint;
      };
    }
  | { case: "error"; value: { code: string; message: string; retryable: boolean } }
  | { case: "rewound"; value: { afterMessageId: string } }
  | { case: "filesRestored"; value: FilesRestoredNote }
  | {
      case: "checkpointStatus";
      value: {
        state: string;
        message: string;
        canRetry: boolean;
        canDisable: boolean;
        phase?: string;
        filesDone?: bigint;
        filesTotal?: bigint;
      };
    }
  | { case: "reasoningDelta"; value: { messageId: string; text: string } }
  | {
      case: "modelRetry";
      value: {
        attempt: number;
        maxAttempts: number;
        delayMs: bigint;
        reason: string;
        message: string;
        discardedMessageIds: string[];
      };
    }
  | { case: "modelWaiting"; value: { waitedMs: bigint; timeoutMs: bigint; message: string } };

/** An event as the task's log holds it: numbered, so a subscriber can resume after any seq. */
export interface RuntimeEvent {
  seq: bigint;
  taskId: string;
  /** Milliseconds since the Unix epoch. */
  time: bigint;
  event: RuntimeEventBody;
}
