import type { CheckpointInfo } from "./checkpoint-record.js";
import type { CaptureAt } from "./edit-captures.js";
import type { FastCommitter } from "./fast-commit.js";
import type { FastImportSession } from "./fast-import-session.js";
import type { ModeRecord } from "./file-modes.js";
import type { BaseMeta, RecordedPathSaver } from "./recorded-save.js";
import { RestoreStopped, stoppedPartWay } from "./restore-stopped.js";
import type { ExcludedNow, FileRestoreResult, KeepCurrent, SnapshotRestore } from "./snapshot-restore.js";

/** What a restore of recorded paths needs from its workspace (callers hold the repository lock). */
export interface PathRestoreDeps {
  fast: FastCommitter;
  recorded: RecordedPathSaver;
  restorer: SnapshotRestore;
  excludedNow: ExcludedNow;
  /** The undo checkpoint saved by staging and committing, when the fast path cannot write it. */
  saveUndoSlowly(): Promise<CheckpointInfo>;
  /** Keeps what the undo checkpoint (made at `undoCreatedAt`) does not hold before it is written over. */
  keepCurrent(undoCreatedAt: number): KeepCurrent;
  /** The files' recorded bits once the restore wrote its files (for the snapshot after it); undefined when unknown. */
  modesAfter(result: FileRestoreResult): Promise<ModeRecord | undefined>;
  /** The undo checkpoint is on disk and the first file is about to be written. */
  writing(undo: CheckpointInfo): void;
}

/**
 * Restores only the paths the task's tools recorded. One fast-import process saves the undo
 * point (checkpointed to disk before any file is touched), reads the target's entries and the
 * blobs to write (checkpoint versions and pre-images), and, after the files are written, moves
 * HEAD to the undo snapshot with the restored paths applied.
 */
export async function restoreRecordedPaths(
  deps: PathRestoreDeps,
  target: CheckpointInfo,
  recorded: string[],
  captures: readonly CaptureAt[],
  undoMeta: BaseMeta,
  carried: Parameters<RecordedPathSaver["save"]>[2],
): Promise<FileRestoreResult & { undo: CheckpointInfo }> {
  let session: FastImportSession | undefined = deps.fast.open({ keepPacks: true });
  let undo: CheckpointInfo | undefined;
  try {
    // The target's entries and blobs are asked for first; the undo checkpoint is written (and
    // checkpointed to disk) while they arrive; files are touched only after both.
    let planning = deps.restorer.planPaths(session, target, recorded, captures, deps.excludedNow);
    planning.catch(() => undefined); // awaited below
    undo = await deps.recorded.save(undoMeta, recorded, carried, { session });
    let undoRef = ":1";
    if (!undo) {
      // No fast path here (no previous snapshot, or HEAD unreadable): stage and commit instead.
      await session.abort();
      session = undefined;
      undo = await deps.saveUndoSlowly();
      undoRef = undo.id;
      session = deps.fast.open({ keepPacks: true });
      planning = deps.restorer.planPaths(session, target, recorded, captures, deps.excludedNow);
    }
    const plan = await planning;
    deps.writing(undo);
    const result = await deps.restorer.applyPlan(session, plan, undoRef, target, deps.keepCurrent(undo.createdAt));
    // HEAD moves on to a snapshot this process does not note (the next scan asks git for it).
    deps.restorer.headAfterPathRestore(session, undo.tree, target.id, result, await deps.modesAfter(result));
    await session.finish();
    return { ...result, undo };
  } catch (err) {
    await session?.abort();
    // The undo checkpoint was on disk before the first file was touched.
    if (err instanceof RestoreStopped && undo) throw stoppedPartWay(err, undo.id);
    throw err;
  }
}
