import type { SkippedPath } from "./exclusions.js";
import type { ModeRecord } from "./file-modes.js";
import type { RepositoryHead } from "./repo-head.js";

export type CheckpointKind = "baseline" | "turn" | "completion" | "compaction" | "before_restore";

/** What a checkpoint commit records about itself (JSON in its message body). */
export interface CheckpointMeta {
  v: 1;
  task: string;
  kind: CheckpointKind;
  createdAt: number;
  messageId: string;
  hasFiles: boolean;
  /** Paths recorded by editing tools for this save (workspace-relative, '/' separated). */
  edited: string[];
  /** A command ran before this save (its scan holds what the command changed); absent in older checkpoints. */
  commandRan?: boolean;
  /**
   * Only after a command: the tree of the snapshot this save built on (the newest then, whoever
   * saved it). This tree against that one is what the save took in: what the command changed
   * (and whatever else changed meanwhile), not what another task or the person changed later.
   * Absent in older checkpoints.
   */
  baseTree?: string;
  /** What this snapshot left out and why (capped; `skippedTotal` is the full count). */
  skipped: SkippedPath[];
  skippedTotal: number;
  /** Staging found no change: the snapshot (tree) of the previous checkpoint is reused. */
  reused: boolean;
  /**
   * The workspace's empty folders (snapshots hold files only), as its first scan found them and
   * later tasks' baselines still found them (capped): a restore that empties one of them keeps
   * it, even when a command deleted and made it again. Absent in older checkpoints.
   */
  emptyFolders?: string[];
  /**
   * The permission bits of the workspace's files that git's 644/755 would open up (a private key
   * at 600, a script at 700: file-modes.ts), as octal text by path, as far as the saves learned
   * them (capped): a restore that makes such a file again gives it these. Absent in older
   * checkpoints; empty when there is none.
   */
  modes?: ModeRecord;
  /**
   * Only in a "before restore" checkpoint: the folders the restore it was saved for then made
   * again (empty folders of the person's that a command had deleted, and the folders on their
   * way). A restore to this checkpoint undoes that restore: it removes those still empty.
   */
  foldersMadeAfter?: string[];
  /**
   * Where the person's own repository stood at this save (repo-head.ts): a restore to it says
   * when their git history moved since, which it does not undo. Absent in older checkpoints and
   * in workspaces that are not a repository's top folder.
   */
  repoHead?: RepositoryHead;
}

export interface CheckpointInfo extends CheckpointMeta {
  /** The commit id; what RPCs call the checkpoint id. */
  id: string;
  tree: string;
  /** Position in the task's sequence (1-based). */
  seq: number;
  ref: string;
}

/** What one save after a command took in: its tree against the one it built on. */
export interface CommandSave {
  before: string;
  after: string;
  /** The target's tree: what the command's changes are taken against when `before` is unreadable (lost objects). */
  target: string;
}

/**
 * The task's saves after a command since `target` (`cps`: the task's checkpoints, oldest
 * first). One without `baseTree` (older checkpoints) is taken against the task's checkpoint
 * with files before it.
 */
export function commandSavesAfter(cps: readonly CheckpointInfo[], target: CheckpointInfo): CommandSave[] {
  return cps.flatMap((c, i) => {
    if (c.createdAt <= target.createdAt || c.commandRan !== true) return [];
    const before = c.baseTree ?? cps.slice(0, i).findLast((p) => p.hasFiles)?.tree ?? target.tree;
    return [{ before, after: c.tree, target: target.tree }];
  });
}

export const MAX_RECORDED_SKIPS = 500;
const TASK_REFS = "refs/dline/tasks";
export const SNAPSHOT_HEAD = "refs/heads/dline-snapshots";

/** The first line of the snapshot a path restore leaves at SNAPSHOT_HEAD (snapshot-restore.ts). */
export function afterRestoreSubject(targetId: string): string {
  return `Dline snapshot after restoring ${targetId}`;
}

export function taskRefPrefix(taskId: string): string {
  return `${TASK_REFS}/${taskId}/`;
}
/** Ref names sort by creation time: milliseconds, then a tie-breaker within one millisecond. */
export function taskRef(taskId: string, timeMs: number, tie: number): string {
  return `${taskRefPrefix(taskId)}${String(timeMs).padStart(14, "0")}-${String(tie).padStart(3, "0")}`;
}
export function restoredRef(taskId: string): string {
  return `refs/dline/restored/${taskId}`;
}
export const ALL_TASK_REFS = `${TASK_REFS}/`;

const SUBJECTS: Record<CheckpointKind, string> = {
  baseline: "baseline",
  turn: "turn",
  completion: "completion",
  compaction: "compaction",
  before_restore: "before restore",
};

/** The commit message: a subject, the JSON record, and trailers a person can grep for. */
export function encodeMessage(meta: CheckpointMeta): string {
  return `Dline checkpoint: ${SUBJECTS[meta.kind]}\n\n${JSON.stringify(meta)}\n\nDline-Task: ${meta.task}\nDline-Kind: ${meta.kind}\n`;
}

export function decodeMessage(message: string): CheckpointMeta | undefined {
  const line = message.split("\n").find((l) => l.startsWith("{"));
  if (!line) return undefined;
  try {
    const meta = JSON.parse(line) as CheckpointMeta;
    return meta && meta.v === 1 && typeof meta.task === "string" ? meta : undefined;
  } catch {
    return undefined;
  }
}

/** `for-each-ref` format producing one record per ref, fields NUL-separated, records \x01-ended. */
export const REF_FORMAT = "%(refname)%00%(objectname)%00%(tree)%00%(contents)%01";

export function parseRefRecords(out: string): CheckpointInfo[] {
  const result: CheckpointInfo[] = [];
  for (const rec of out.split("\x01")) {
    const r = rec.replace(/^\n/, "");
    if (!r) continue;
    const [ref, id, tree, contents] = r.split("\0");
    const meta = decodeMessage(contents ?? "");
    if (!meta || !ref || id === undefined || tree === undefined) continue;
    result.push({ ...meta, id, tree, seq: 0, ref });
  }
  return inRefOrder(result);
}

/** Sorted by ref name (creation time), numbered from 1. */
export function inRefOrder(checkpoints: CheckpointInfo[]): CheckpointInfo[] {
  checkpoints.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  checkpoints.forEach((c, i) => (c.seq = i + 1));
  return checkpoints;
}

/** A checkpoint ref's last part: `<14-digit milliseconds>-<3-digit tie>` (see taskRef). */
export const TASK_REF_NAME = /^\d{14}-\d{3}$/;
