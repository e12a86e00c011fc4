import {
  encodeMessage,
  MAX_RECORDED_SKIPS,
  SNAPSHOT_HEAD,
  type CheckpointInfo,
  type CheckpointMeta,
} from "./checkpoint-record.js";
import type { CheckpointLog } from "./checkpoint-log.js";
import { dedupeSkips, type SkippedPath } from "./exclusions.js";
import { changesTree, readPathChanges, sessionEntries, type FastCommitter, type PathChange } from "./fast-commit.js";
import type { FastImportSession } from "./fast-import-session.js";
import { CHECKPOINT_IDENTITY } from "./git-process.js";
import type { SnapshotStager } from "./snapshot-stager.js";
import { commitBody } from "./git-objects.js";
import { writePack } from "./pack-writer.js";
import { ObjectBatch, TreeUnavailable, type TreeEditor } from "./tree-editor.js";

/**
 * The per-turn fast path: a checkpoint that is the previous snapshot (HEAD) plus the paths the
 * editing tools recorded. No index read or write, no status: the cost follows the recorded
 * paths. Two ways to write it:
 * - without any git process (a turn's usual case): the trees along the changed paths are
 *   rewritten (TreeEditor), the new blobs, trees and commit written as one pack and the refs
 *   directly; this needs HEAD's commit and the trees on the way remembered from the previous
 *   turn or readable as loose objects;
 * - otherwise with one fast-import process: HEAD's tree and the old entries of the paths are
 *   asked of it and the commit follows in the same stream (also the way restores save their
 *   undo point, on the restore's own session).
 */
export type BaseMeta = Omit<CheckpointMeta, "skipped" | "skippedTotal" | "reused">;

export class RecordedPathSaver {
  constructor(
    private readonly log: CheckpointLog,
    private readonly stager: SnapshotStager,
    private readonly fast: FastCommitter,
    private readonly workspaceRoot: string,
    private readonly objectsDir: string,
    private readonly editor: TreeEditor,
  ) {}

  /**
   * Saves the checkpoint; undefined when it cannot be built this way (no previous snapshot,
   * a ref store we do not write directly, HEAD unreadable): the caller then stages and scans.
   * With `session` (a restore), the commit is written on it as mark 1 and checkpointed, so the
   * undo point is on disk before any file is touched; the caller finishes the session.
   */
  async save(
    meta: BaseMeta,
    editedPaths: readonly string[],
    carried: SkippedPath[],
    options: {
      session?: FastImportSession;
      signal?: AbortSignal;
    } = {},
  ): Promise<CheckpointInfo | undefined> {
    if (!(await this.fast.usable())) return undefined;
    const head = await this.log.readRef(SNAPSHOT_HEAD);
    if (!head) return undefined;
    if (!options.session) {
      const saved = await this.saveWithoutGit(meta, head, editedPaths, carried);
      if (saved) return saved;
    }
    const own = !options.session;
    const session = options.session ?? this.fast.open({ signal: options.signal });
    try {
      const baseTreeAnswer = session.rootTree(head);
      baseTreeAnswer.catch(() => undefined); // awaited below; not unhandled meanwhile
      const { changes, skipped } = await this.changesOf(editedPaths);
      let baseTree: string;
      let baseEntries;
      try {
        [baseTree, baseEntries] = await Promise.all([
          baseTreeAnswer,
          sessionEntries(
            session,
            head,
            changes.map((c) => c.path),
          ),
        ]);
      } catch {
        // HEAD unreadable (e.g. damaged objects): the staging path finds out and repairs.
        if (own) await session.abort();
        return undefined;
      }
      const full = withSkips(meta, skipped, carried, !changesTree(baseEntries, changes));
      const ref = await this.log.freeTaskRef(meta.task, meta.createdAt);
      session.commit({
        ref,
        mark: 1,
        message: encodeMessage(full),
        timeMs: full.createdAt,
        identity: CHECKPOINT_IDENTITY,
        baseTree,
        changes,
      });
      session.resetTo(SNAPSHOT_HEAD, 1);
      if (!own) session.checkpoint();
      const [commit, tree] = await Promise.all([session.getMark(1), session.rootTree(":1")]);
      if (own) await session.finish();
      this.log.noteHead(commit, tree);
      await this.log.clearRestoredMarker(meta.task, options.signal);
      const checkpoint = { ...full, id: commit, tree, seq: 0, ref };
      this.log.remember(checkpoint);
      return checkpoint;
    } catch (err) {
      if (own) await session.abort();
      throw err;
    }
  }

  /** The git-less way (see above); undefined when a tree on the way is neither remembered nor loose. */
  private async saveWithoutGit(
    meta: BaseMeta,
    head: string,
    editedPaths: readonly string[],
    carried: SkippedPath[],
  ): Promise<CheckpointInfo | undefined> {
    try {
      const baseTree = this.log.knownTreeOf(head) ?? this.editor.treeOfCommit(head);
      const { changes, skipped } = await this.changesOf(editedPaths);
      const batch = new ObjectBatch();
      // Nothing to change (a completion after tool edits the turns saved): HEAD's tree as it is.
      const tree = changes.length ? this.editor.apply(baseTree, changes, batch) : baseTree;
      const full = withSkips(meta, skipped, carried, tree === baseTree);
      const commit = batch.put("commit", commitBody(tree, CHECKPOINT_IDENTITY, full.createdAt, encodeMessage(full)));
      await writePack(this.objectsDir, batch.objects);
      // Objects first, then the checkpoint's ref, then HEAD: a crash leaves no ref to a missing object.
      const ref = await this.log.addTaskRef(meta.task, meta.createdAt, commit);
      await this.log.moveHead(commit, tree);
      await this.log.clearRestoredMarker(meta.task);
      const checkpoint = { ...full, id: commit, tree, seq: 0, ref };
      this.log.remember(checkpoint);
      return checkpoint;
    } catch (err) {
      if (err instanceof TreeUnavailable) return undefined;
      throw err;
    }
  }

  /**
   * The recorded paths' changes as read from the work tree (left-out large files removed), and
   * what was left out (repository paths).
   */
  private async changesOf(editedPaths: readonly string[]): Promise<{ changes: PathChange[]; skipped: SkippedPath[] }> {
    const { take, drop, skipped } = await this.stager.classifyPaths(editedPaths);
    const read = await readPathChanges(this.workspaceRoot, take);
    return { changes: [...read, ...drop.map((p): PathChange => ({ path: p, mode: "delete" }))], skipped };
  }
}

/** The checkpoint's metadata with what this save and the earlier scan left out (capped). */
function withSkips(meta: BaseMeta, skipped: SkippedPath[], carried: SkippedPath[], reused: boolean): CheckpointMeta {
  const unique = dedupeSkips([...skipped, ...carried]);
  return { ...meta, skipped: unique.slice(0, MAX_RECORDED_SKIPS), skippedTotal: unique.length, reused };
}
