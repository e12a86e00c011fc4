import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import { commandSavesAfter, type CheckpointInfo } from "./checkpoint-record.js";
import type { TaskConversationPort } from "./ports.js";
import { withLeftOutChanges, type LaterSkips } from "./left-out-changes.js";
import type { FileChange } from "./snapshot-diff.js";
import { skipListTruncated } from "./left-out.js";
import type { KeptPath } from "./snapshot-restore.js";
import type { UnreadableCheckpoints, WorkspaceCheckpoints } from "./workspace-checkpoints.js";
import { MESSAGES } from "./workspace-guard.js";

export type RestoreMode = "files_and_task" | "files" | "task";

export interface RestoreOutcome {
  filesRestored: boolean;
  fileError: string;
  restoredPaths: string[];
  deletedPaths: string[];
  /** Files that existed before and were left as they are (too large to snapshot, or not tracked by checkpoints). */
  keptPaths: KeptPath[];
  /** The look for changed left-out files stopped at its limit: more of them may have changed. */
  keptPathsIncomplete: boolean;
  undoCheckpointId: string;
  conversationRestored: boolean;
  /** The task was running here: its run was stopped, and had ended, before anything was restored. */
  runStopped: boolean;
  /** The person's git repository moved since the checkpoint (its HEAD), which a restore does not undo; "" if not. */
  repositoryNote: string;
}

/** What Restore Chat / Restore All did: for Restore All, the files and the undo point saved first. */
export interface EditOutcome {
  /** False when the text was unchanged and nothing was restored. */
  restored: boolean;
  fileError: string;
  /** The "before restore" checkpoint (restoring it undoes the files' restore); "" when none was made. */
  undoCheckpointId: string;
  restoredPaths: string[];
  deletedPaths: string[];
  /** Restore All: the checkpoint whose files it restored (a dry run: would restore); "" for none. */
  checkpointId: string;
  /** Restore All: what it left as it was (a dry run: would leave), as a files restore names them. */
  keptPaths: KeptPath[];
  keptPathsIncomplete: boolean;
  /** Restore All: the task was running here, and its run was stopped first (CheckpointManager). */
  runStopped?: boolean;
}

/**
 * The checkpoint `checkpointId` of the listing `cps`. `unreadable`: the task's checkpoints the
 * listing left out because their commits are missing (WorkspaceCheckpoints.unreadable): asking
 * for one of those is `data_loss`, not `not_found`.
 */
export function findCheckpoint(
  cps: CheckpointInfo[],
  taskId: string,
  checkpointId: string,
  unreadable?: UnreadableCheckpoints,
): CheckpointInfo {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(checkpointId)) {
    throw new DlineError("invalid_argument", `"${checkpointId.slice(0, 80)}" is not a checkpoint id.`);
  }
  const cp = cps.find((c) => c.id === checkpointId);
  if (!cp && unreadable?.ids.has(checkpointId)) {
    throw new DlineError("data_loss", MESSAGES.checkpointUnreadable(checkpointId, taskId, unreadable.gitDir));
  }
  if (!cp) throw new DlineError("not_found", `Checkpoint ${checkpointId} does not belong to task ${taskId}.`);
  return cp;
}

/** Compaction and snapshot-less checkpoints allow only "task only" restores. */
export function assertFilesRestorable(cp: CheckpointInfo): void {
  if (!cp.hasFiles || cp.kind === "compaction")
    throw new DlineError(
      "failed_precondition",
      "This checkpoint has no file snapshot; only Restore Task Only is available.",
    );
}

/**
 * An undo point ("before restore") holds the files as they were just before a restore and follows
 * no message of the task (it names the message of the checkpoint restored to): restoring the
 * conversation to it cut the task back to that older message while its files went forward, and
 * took the turns between out of reach. Only its files are restored (Restore Files Only, or Undo).
 */
export function assertConversationRestorable(cp: CheckpointInfo): void {
  if (cp.kind === "before_restore")
    throw new DlineError(
      "failed_precondition",
      `Checkpoint ${cp.id.slice(0, 8)} holds the files as they were before a restore and follows no message of the task: only its files can be restored (Restore Files Only, or Undo restore).`,
    );
}

/**
 * One restore of one task: the mode rules (compaction and snapshot-less checkpoints allow only
 * "task only"), the files part through WorkspaceCheckpoints, the conversation part through the
 * task store's port, and "Files & Task" restoring the conversation even when files fail.
 */
export class RestoreFlow {
  /**
   * `aloneCheck`: throws when another task runs in the workspace; a file restore asks it again
   * under the repository lock, before any file is touched.
   */
  constructor(
    private readonly engine: WorkspaceCheckpoints,
    private readonly taskId: string,
    private readonly conversation: TaskConversationPort | undefined,
    private readonly logger: Logger,
    private readonly aloneCheck?: () => Promise<void>,
  ) {}

  async restore(checkpointId: string, mode: RestoreMode): Promise<RestoreOutcome> {
    const cps = await this.engine.list(this.taskId);
    const cp = findCheckpoint(cps, this.taskId, checkpointId, this.engine.unreadable(this.taskId));
    const outcome: RestoreOutcome = {
      filesRestored: false,
      fileError: "",
      restoredPaths: [],
      deletedPaths: [],
      keptPaths: [],
      keptPathsIncomplete: false,
      undoCheckpointId: "",
      conversationRestored: false,
      runStopped: false,
      repositoryNote: "",
    };
    if (mode !== "task") assertFilesRestorable(cp);
    if (mode !== "files") assertConversationRestorable(cp);
    const port = mode === "files" ? undefined : this.requireConversation();
    if (mode !== "task") {
      try {
        const result = await this.engine.restoreFiles(this.taskId, cp, await this.recordedPaths(cps), {
          commandSaves: commandSavesAfter(cps, cp),
          leftOutSince: leftOutAfter(cps, cp),
          aloneCheck: this.aloneCheck,
        });
        Object.assign(outcome, {
          filesRestored: true,
          restoredPaths: inPathOrder(result.restored),
          deletedPaths: inPathOrder(result.deleted),
          keptPaths: result.kept,
          keptPathsIncomplete: result.keptIncomplete,
          undoCheckpointId: result.undo.id,
          repositoryNote: this.engine.repositoryMovedSince(cp),
        });
        await this.tellFilesRestored(cp, result.undo.id);
      } catch (err) {
        if (mode === "files") throw err;
        // Restore Files & Task: the conversation is still restored; the file error is reported.
        outcome.fileError = `Restoring files failed: ${(err as Error).message}`;
        this.logger.error("file restore failed", { task: this.taskId, error: String(err) });
      }
    }
    if (port) {
      await port.rewindConversation(this.taskId, cp.messageId);
      outcome.conversationRestored = true;
    }
    return outcome;
  }

  /**
   * Restore Chat rewinds to just before the message and continues with the edited text;
   * Restore All also restores files to the checkpoint of that message (only Restore Chat sends
   * the edited text, as docs/checkpoints.md says). `checkpointError` answers the header's error, if any,
   * which hides Restore All. A `dryRun` answers the same (the same refusals, the same checkpoint)
   * and changes nothing: the files it names are those the restore would write and delete now.
   */
  async editMessage(
    messageId: string,
    text: string,
    mode: "restore_chat" | "restore_all",
    checkpointError: () => Promise<string | undefined>,
    options: {
      dryRun?: boolean;
      offered?: (c: CheckpointInfo) => boolean;
      /** A dry run's restore will take in every change since the checkpoint (a command's missed save). */
      everyChange?: boolean;
      /** A dry run's restore will also take in these paths: what a command still running changed. */
      runningChanges?: ReadonlySet<string>;
    } = {},
  ): Promise<EditOutcome> {
    const port = this.requireConversation();
    const message = await port.messageInfo(this.taskId, messageId);
    if (!message)
      throw new DlineError("not_found", `Message ${messageId.slice(0, 80)} does not exist in task ${this.taskId}.`);
    const nothing = {
      undoCheckpointId: "",
      restoredPaths: [],
      deletedPaths: [],
      checkpointId: "",
      keptPaths: [],
      keptPathsIncomplete: false,
    };
    if (message.text === text) return { restored: false, fileError: "", ...nothing };
    if (mode === "restore_chat") {
      if (!options.dryRun)
        await port.rewindConversation(this.taskId, messageId, { editedText: text, beforeMessage: true });
      return { restored: true, fileError: "", ...nothing };
    }
    const error = await checkpointError();
    if (error) throw new DlineError("failed_precondition", `Restore All is not available: ${error}`);
    const all = await this.engine.list(this.taskId);
    // Among the checkpoints still part of the task: one of messages a restore removed holds
    // files of a conversation that is gone, not those the message was sent with.
    const offered = options.offered ?? (() => true);
    const cp = restoreAllTarget(
      all.filter((c) => offered(c)),
      messageId,
      message.createdAt,
    );
    if (options.dryRun)
      return {
        restored: true,
        fileError: "",
        ...nothing,
        ...(cp ? await this.wouldRestore(cp, all, options.everyChange ?? false, options.runningChanges) : {}),
      };
    let fileError = "";
    let files: Omit<EditOutcome, "restored" | "fileError"> = { ...nothing, checkpointId: cp?.id ?? "" };
    if (cp) {
      try {
        const result = await this.engine.restoreFiles(this.taskId, cp, await this.recordedPaths(all), {
          commandSaves: commandSavesAfter(all, cp),
          leftOutSince: leftOutAfter(all, cp),
          aloneCheck: this.aloneCheck,
        });
        files = {
          undoCheckpointId: result.undo.id,
          restoredPaths: inPathOrder(result.restored),
          deletedPaths: inPathOrder(result.deleted),
          checkpointId: cp.id,
          keptPaths: result.kept,
          keptPathsIncomplete: result.keptIncomplete,
        };
        await this.tellFilesRestored(cp, result.undo.id);
      } catch (err) {
        fileError = `Restoring files failed: ${(err as Error).message}`;
      }
    }
    await port.rewindConversation(this.taskId, messageId, { beforeMessage: true });
    return { restored: true, fileError, ...files };
  }

  /**
   * What a file restore to `cp` would write, delete and keep now, without touching anything: the
   * changes since it (a Compare) within the restore's scope; a file created since goes; one the
   * checkpoints never tracked (its earlier content unknown) or whose earlier content was too
   * large to keep stays as it is, as do the left-out files changed since (the restore's look).
   */
  private async wouldRestore(
    cp: CheckpointInfo,
    all: CheckpointInfo[],
    everyChange: boolean,
    runningChanges?: ReadonlySet<string>,
  ): Promise<Omit<EditOutcome, "restored" | "fileError" | "undoCheckpointId">> {
    const changes = await this.engine.compare(this.taskId, cp);
    const recorded = everyChange
      ? undefined
      : await this.engine.restoreScope(await this.recordedPaths(all), {
          commandSaves: commandSavesAfter(all, cp),
        });
    const scope = recorded && runningChanges?.size ? new Set([...recorded, ...runningChanges]) : recorded;
    const inScope = changes.filter((f) => !scope || scope.has(f.path));
    // A file too large for a pre-image now could not be brought back by an undo: it stays.
    const tooLargeNow = this.engine.tooLargeForPreimage(inScope.map((f) => f.path));
    const written = inScope.filter((f) => !f.notTracked && !f.tooLargeToKeep && !tooLargeNow.has(f.path));
    const restoredPaths = inPathOrder(written.filter((f) => f.status !== "added").map((f) => f.path));
    const deletedPaths = inPathOrder(written.filter((f) => f.status === "added").map((f) => f.path));
    const kept: KeptPath[] = inScope.flatMap((f): KeptPath[] =>
      f.tooLargeToKeep || (tooLargeNow.has(f.path) && !f.notTracked)
        ? [{ path: f.path, reason: "too_large" }]
        : f.notTracked
          ? [{ path: f.path, reason: "not_tracked" }]
          : [],
    );
    const look = await this.engine.leftOutChanges(cp, leftOutAfter(all, cp));
    // A path of the restore's scope that Compare does not list is as the checkpoint has it.
    const listed = new Set(changes.map((f) => f.path));
    const unchanged = [...(scope ?? [])].filter((p) => !listed.has(p));
    return {
      checkpointId: cp.id,
      restoredPaths,
      deletedPaths,
      keptPaths: withLeftOutChanges(
        this.engine.workspaceRoot,
        { restored: restoredPaths, deleted: deletedPaths, kept },
        look,
        unchanged,
      ),
      keptPathsIncomplete: look.cut,
    };
  }

  /**
   * What the checkpoints left out and was changed since the checkpoint (a file restore to it
   * leaves those as they are), as Compare lists it: not tracked. `listed`: paths Compare shows already.
   */
  async notTrackedSince(checkpointId: string, listed: ReadonlySet<string>): Promise<FileChange[]> {
    const cps = await this.engine.list(this.taskId);
    const cp = findCheckpoint(cps, this.taskId, checkpointId, this.engine.unreadable(this.taskId));
    return this.engine.notTrackedSince(this.taskId, cp, leftOutAfter(cps, cp), listed);
  }

  /**
   * The paths among `changed` (a Compare's) that a file restore to the checkpoint would change
   * now: those in the restore's scope, or all of them when the restore resets every file.
   */
  async pathsRestored(checkpointId: string, changed: readonly string[]): Promise<string[]> {
    const cps = await this.engine.list(this.taskId);
    const cp = findCheckpoint(cps, this.taskId, checkpointId, this.engine.unreadable(this.taskId));
    const scope = await this.engine.restoreScope(await this.recordedPaths(cps), {
      commandSaves: commandSavesAfter(cps, cp),
    });
    return scope ? changed.filter((p) => scope.has(p)) : [...changed];
  }

  /**
   * Every window of the task hears of a file restore (the "restored" mark moved), an Undo too:
   * without it, another window kept showing the mark an Undo had taken away.
   */
  private async tellFilesRestored(cp: CheckpointInfo, undoCheckpointId: string): Promise<void> {
    const note = { checkpointId: cp.id, undoCheckpointId, undo: cp.kind === "before_restore" };
    await this.conversation?.filesRestored?.(this.taskId, note).catch((err: unknown) => {
      this.logger.warn("other windows could not be told of a file restore", {
        task: this.taskId,
        error: (err as Error).message,
      });
    });
  }

  /** Paths this task's editing tools recorded: from its checkpoints and from the task store. */
  private async recordedPaths(cps: CheckpointInfo[]): Promise<string[]> {
    const fromPort = (await this.conversation?.recordedEditedPaths?.(this.taskId)) ?? [];
    return [...new Set([...cps.flatMap((c) => c.edited), ...fromPort])];
  }

  private requireConversation(): TaskConversationPort {
    if (!this.conversation) {
      throw new DlineError(
        "failed_precondition",
        "Restoring the conversation needs the task store, which is not available in this version yet.",
      );
    }
    return this.conversation;
  }
}

/**
 * The checkpoint whose files Restore All of a message puts back: the message's own with files,
 * else the last one saved before the message (`createdAt`), else the first; never a "before
 * restore" one (it names the message an earlier restore went to, but holds the files as they
 * were before that restore). `cps` are those still part of the task (a file restore leaves the
 * files as the checkpoint it went to has them, and a message sent after it starts from there).
 * Undefined when the task has no checkpoint with files.
 */
export function restoreAllTarget(
  cps: readonly CheckpointInfo[],
  messageId: string,
  createdAt: number,
): CheckpointInfo | undefined {
  const candidates = cps.filter((c) => c.hasFiles && c.kind !== "before_restore").reverse();
  return (
    candidates.find((c) => c.messageId === messageId) ??
    candidates.find((c) => c.createdAt <= createdAt) ??
    candidates[candidates.length - 1]
  );
}

/**
 * What the checkpoints saved after `target` left out: a restore to it names those changed since
 * too. A skip list cut at its limit (theirs or the target's) names only some of what was left
 * out: a change to the others cannot be named, and the answer says more may have changed.
 */
function leftOutAfter(cps: readonly CheckpointInfo[], target: CheckpointInfo): LaterSkips {
  const later = cps.filter((c) => c.createdAt > target.createdAt);
  return {
    skipped: later.flatMap((c) => c.skipped),
    cut: [target, ...later].some(skipListTruncated),
    commandRan: later.some((c) => c.commandRan === true),
  };
}

/**
 * Paths in git's order (bytewise, as Compare lists them): a restore writes files in the order its
 * plan met them, and a person reading "restored" and "deleted" (or comparing a dry run with the
 * real restore) should see one stable order.
 */
function inPathOrder(paths: readonly string[]): string[] {
  return paths
    .map((p) => ({ p, key: Buffer.from(p, "utf8") }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ p }) => p);
}
