/**
 * What the checkpoint module needs from the task store / runtime, which owns the
 * conversation. The composition root supplies an implementation; until then, operations that
 * touch the conversation answer `failed_precondition`.
 */
export interface TaskConversationPort {
  /** The workspace roots a task runs in; undefined for an unknown task. */
  workspaceRootsOf(taskId: string): Promise<readonly string[] | undefined>;
  /**
   * Deletes the messages after `messageId` (and the API records and context after it). With
   * `editedText`, the message itself is replaced by that text and the task continues from it
   * (Restore Chat); without, the conversation is rewound to just before the message's
   * follow-ups (Restore Task / Restore All).
   */
  rewindConversation(
    taskId: string,
    messageId: string,
    options?: { editedText?: string; beforeMessage?: boolean },
  ): Promise<void>;
  /**
   * Stops the task's run in this sidecar, if it has one, for `why` ("for a restore of …"), and
   * waits for it to end; undefined when none runs here. The task's status is said at `end()`,
   * once the restore is done (a window that sees the task end may close its sidecar).
   */
  stopRun?(taskId: string, why: string): Promise<{ end(): void } | undefined>;
  /**
   * Holds the task in this sidecar while a restore changes it (when no run of it here does):
   * windows that follow it from other sidecars follow this one meanwhile, and see what the
   * restore tells them. Released at `end()`.
   */
  holdForRestore?(taskId: string): Promise<{ end(): void }>;
  /**
   * Tells every window of the task that its files were restored to `checkpointId` (an Undo when
   * that is a "before restore" checkpoint): which checkpoint reads "restored" changed. Called once
   * the files are written; it never fails the restore.
   */
  filesRestored?(
    taskId: string,
    note: { checkpointId: string; undoCheckpointId: string; undo: boolean },
  ): Promise<void>;
  /**
   * A checkpoint saved for a message of the task outside its run (the turn of a command cut off
   * by a dying sidecar, saved before a restore): recorded on the message, unless it has one, and
   * told to every window, as a turn's checkpoint is. It never fails the save.
   */
  checkpointSaved?(taskId: string, messageId: string, checkpointId: string): Promise<void>;
  /**
   * The ids of the task's messages now. A checkpoint of a message that a restore of the task
   * removed is no longer offered (its marker went with the message). Undefined: unknown.
   */
  messageIds?(taskId: string): Promise<ReadonlySet<string> | undefined>;
  /**
   * The other tasks running or waiting for an answer in this workspace now, in any sidecar: a
   * file restore would overwrite what they are editing, so it waits for them.
   */
  activeTasksIn?(workspaceRoot: string, exceptTaskId: string): Promise<{ id: string; title: string }[]>;
  /**
   * A message's text and time, for EditMessage; undefined when there is no such message. `role`
   * ("user", "assistant", "tool", "system"), when known: only a message the person sent is edited.
   */
  messageInfo(
    taskId: string,
    messageId: string,
  ): Promise<{ text: string; createdAt: number; role?: string } | undefined>;
  /** Paths the task's editing tools recorded, beyond those the checkpoints themselves record. */
  recordedEditedPaths?(taskId: string): Promise<readonly string[]>;
  /**
   * The task's commands that ran (or were cut short), oldest first: their rows' message ids and
   * times. A command whose turn's checkpoint was never saved (its sidecar died first) is found
   * by it: no checkpoint after it says a command ran. `running`: the command is still running
   * (its turn is saved once it ends, or once a restore stops the run).
   */
  commandCalls?(taskId: string): Promise<readonly { messageId: string; time: number; running?: boolean }[]>;
  /**
   * False once the task's history row is gone (a deletion removes the row before the task's
   * checkpoint refs): checkpoints of such a task are not written, since nothing would remove them.
   */
  taskExists?(taskId: string): Promise<boolean>;
  /** For the size budget: a running task's checkpoints are never pruned. Unknown = "deleted". */
  taskState?(taskId: string): Promise<"running" | "finished" | "deleted">;
}

/** The tools docs/checkpoints.md lists as read-only: they do not wait for the baseline and save no turn checkpoint. */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set([
  "read_file",
  "list_files",
  "search_files",
  "list_code_definition_names",
  "find_references",
  "web_search",
  "web_fetch",
  "load_skill",
  "load_workflow",
  "browser_action",
  "browser",
  "ask_followup_question",
  "plan_mode_respond",
  "attempt_completion",
]);

/** Whether a turn that used these tools may have modified the workspace (and needs a checkpoint). */
export function turnMayModify(toolNames: readonly string[]): boolean {
  return toolNames.some((t) => !READ_ONLY_TOOLS.has(t));
}
