import {
  accessSync,
  chmodSync,
  constants,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  type Dirent,
  type Stats,
} from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { DlineError } from "../errors.js";
import { afterRestoreSubject, SNAPSHOT_HEAD, type CheckpointInfo } from "./checkpoint-record.js";
import { captureAfter, type CaptureAt } from "./edit-captures.js";
import { sessionEntries, type TreeEntries } from "./fast-commit.js";
import { narrowToRecorded, recordedMode, restoredPermissions, type ModeRecord } from "./file-modes.js";
import type { FastImportSession } from "./fast-import-session.js";
import { CHECKPOINT_IDENTITY, GitError, splitNul, type ShadowGit } from "./git-process.js";
import { existedAt, leftOutBy, skipListTruncated, unchangedOnDiskSince } from "./left-out.js";
import { removeFoldersMadeSince } from "./empty-folders.js";
import { foldersToRemake, movedCopies, removeEmptyTrees } from "./moved-folders.js";
import { removeLeftCopies, restoreCopyOf } from "./restore-copies.js";
import { RestoreStopped } from "./restore-stopped.js";
import { BeyondLinkDetector, lstatIfPresent, toAbsolute, toRepoPath } from "./workspace-paths.js";

/**
 * Why a restore left a file as it is instead of bringing back its checkpoint version;
 * `beyond_link`: a folder on its way is a link now (the person's), and nothing is read, written
 * or deleted through it.
 */
export type KeptReason = "too_large" | "not_tracked" | "beyond_link";

export interface KeptPath {
  path: string;
  reason: KeptReason;
}

/** What a path restore will do, read before any file is touched. */
export interface RestorePlan {
  /** Files to write back (from the checkpoint, or a pre-image taken before the task changed them). */
  entries: TreeEntries;
  blobs: Map<string, Buffer>;
  /** Files the task created after the checkpoint (removed when the undo checkpoint holds them). */
  created: string[];
  kept: KeptPath[];
  /** The permission bits the checkpoint or pre-images recorded (writeVia). */
  permissions: Map<string, number>;
}

export interface FileRestoreResult {
  restored: string[];
  deleted: string[];
  /** Files that existed before and are left as they are (never deleted). */
  kept: KeptPath[];
  /** Mode and blob of each restored path. */
  entries: TreeEntries;
}

/** Which of these paths the workspace's exclusions leave out now (ignored, excluded, nested, too large). */
export type ExcludedNow = (paths: string[]) => Promise<Set<string>>;

/**
 * Keeps, as pre-images taken after the undo checkpoint, the files a restore is about to write
 * over or delete that the undo checkpoint does not hold (over the snapshot's size limit, left out
 * by an exclusion): undoing the restore puts them back. Answers those it could not keep (too
 * large even for a pre-image, unreadable): the restore leaves them as they are.
 */
export type KeepCurrent = (paths: string[]) => Promise<Set<string>>;

/**
 * Writes a checkpoint back into the workspace by the restore rules of docs/checkpoints.md, without ever
 * deleting a file or folder that existed at the checkpoint: a file absent from the checkpoint
 * is deleted only when the task created it after the checkpoint; one the checkpoint left out
 * (excluded, ignored, too large) comes back from the pre-image taken before the task changed
 * it, or is left as it is. Callers hold the repository lock and have saved the "before
 * restore" checkpoint first (`undo`).
 */
export class SnapshotRestore {
  constructor(
    private readonly git: ShadowGit,
    private readonly workspaceRoot: string,
  ) {}

  /**
   * The task edited files with its tools: only those come back. Reads, from the open
   * fast-import `session`, the checkpoint's entries of those paths and every blob to write,
   * before anything is touched (and while the undo checkpoint is being written).
   */
  async planPaths(
    session: FastImportSession,
    target: CheckpointInfo,
    recordedPaths: readonly string[],
    captures: readonly CaptureAt[],
    excludedNow: ExcludedNow,
  ): Promise<RestorePlan> {
    const paths = [
      ...new Set(recordedPaths.map((p) => toRepoPath(this.workspaceRoot, p)).filter((p): p is string => !!p)),
    ];
    const entries = await sessionEntries(session, target.id, paths);
    const plan: RestorePlan = {
      entries,
      blobs: new Map(),
      created: [],
      kept: [],
      permissions: modesOf(target, entries),
    };
    const undecided: string[] = [];
    for (const p of paths.filter((p) => !entries.has(p))) {
      const capture = captureAfter(captures, p, target.createdAt);
      if (capture?.kind === "preimage") {
        entries.set(p, { mode: capture.mode!, id: capture.id! });
        if (capture.permissions !== undefined) plan.permissions.set(p, capture.permissions);
      } else if (capture?.kind === "too_large") plan.kept.push({ path: p, reason: "too_large" });
      // It existed, but what it was at the checkpoint is unknown: left as it is, and named.
      else if (capture?.kind === "changed_since") plan.kept.push({ path: p, reason: "not_tracked" });
      else if (capture?.kind === "created") plan.created.push(p);
      else if (leftOutBy(target.skipped, p)) this.keepLeftOut(plan, p, target);
      else undecided.push(p);
    }
    // No capture says what these were: past a cut skip list, a path the exclusions leave out now
    // may have been left out then too, so it stays.
    const excluded = undecided.length && skipListTruncated(target) ? await excludedNow(undecided) : new Set<string>();
    for (const p of undecided) {
      if (excluded.has(p)) this.keepLeftOut(plan, p, target);
      else plan.created.push(p);
    }
    const ids = [...new Set([...entries.values()].map((e) => e.id))];
    const contents = await Promise.all(ids.map(async (id) => [id, await session.catBlob(id)] as const));
    for (const [id, content] of contents) plan.blobs.set(id, content);
    return plan;
  }

  /**
   * A file the target left out stays as it is; it is named only when something changed it since
   * (a later scan may have taken in, untouched, a file a command un-ignored: nothing to say).
   */
  private keepLeftOut(plan: RestorePlan, p: string, target: CheckpointInfo): void {
    if (!unchangedOnDiskSince(this.workspaceRoot, p, target.createdAt))
      plan.kept.push({ path: p, reason: "not_tracked" });
  }

  /**
   * Carries out a plan. A created file is deleted only when the undo checkpoint (`undo`, a
   * commit or a mark of the session) holds it, so that the restore itself can be undone; the
   * folders it leaves empty go only when they were made after the checkpoint. The index is not
   * written: the next scan restages from HEAD, index and work tree.
   */
  async applyPlan(
    session: FastImportSession,
    plan: RestorePlan,
    undo: string,
    target: CheckpointInfo,
    keepCurrent: KeepCurrent,
  ): Promise<FileRestoreResult> {
    // A file already as the checkpoint has it is not written again (nor reported): an editor or
    // a build watching it would see a change that is none.
    let restore = [...plan.entries].flatMap(([p, e]) => (this.alreadyIs(p, e.mode, plan.blobs.get(e.id)!) ? [] : [p]));
    // A path whose folder is a link the undo checkpoint does not hold (the person's, made since):
    // neither read, written nor refused; named kept. Before, the whole restore (or its undo) was
    // refused ("lib is a link now"), the other files not put back.
    const beyond = await this.beyondLinksNotHeld(restore, async (links) => {
      const held = await sessionEntries(session, undo, links);
      return new Set([...held].filter(([, e]) => e.mode === "120000").map(([p]) => p));
    });
    restore = restore.filter((p) => !beyond.has(p));
    // Every file written over or deleted must come back when the restore is undone: from the
    // undo checkpoint, else from a pre-image kept now; one that cannot be kept stays as it is.
    const present = [...restore, ...plan.created].filter((p) => isFileOrLink(toAbsolute(this.workspaceRoot, p)));
    const inUndo = present.length ? await sessionEntries(session, undo, present) : new Map();
    const unkept = await keepCurrent(present.filter((p) => !inUndo.has(p)));
    const kept = [
      ...plan.kept,
      ...[...unkept].map((p): KeptPath => ({ path: p, reason: "too_large" })),
      ...[...beyond].map((p): KeptPath => ({ path: p, reason: "beyond_link" })),
    ];
    restore = restore.filter((p) => !unkept.has(p));
    const created = plan.created.filter((p) => !unkept.has(p));
    // What stands in the way (a folder a command made where a file was) goes when the undo
    // checkpoint holds all of it, as in resetHard: undoing the restore brings it back.
    // An empty folder stays (and refuses the restore): no checkpoint would bring it back. But
    // undoing a restore removes a folder that restore made (CheckpointMeta.foldersMadeAfter).
    const obstacles = await this.obstaclesHeldBy(restore, async (wanted) => {
      const held = await sessionEntries(session, undo, wanted);
      return new Set([...held].filter(([, e]) => e.mode !== "040000").map(([p]) => p));
    });
    const madeByUndoneRestore = new Set(target.kind === "before_restore" ? (target.foldersMadeAfter ?? []) : []);
    for (const [o, held] of obstacles) if (!held.length && !madeByUndoneRestore.has(o)) obstacles.delete(o);
    const removable = new Set(obstacles.keys());
    for (const p of restore) this.assertWritable(p, removable);
    for (const p of created) this.assertFolderWritable(p, path.dirname(toAbsolute(this.workspaceRoot, p)));
    for (const o of removable) await fs.rm(toAbsolute(this.workspaceRoot, o), { recursive: true, force: true });
    const remade = foldersToRemake(this.workspaceRoot, restore);
    const notWritten = await this.writeEach(
      restore.map((p) => [p, plan.entries.get(p)!]),
      plan.blobs,
      plan.permissions,
    );
    restore = restore.filter((p) => !notWritten.has(p));
    kept.push(...[...notWritten].map((p): KeptPath => ({ path: p, reason: "beyond_link" })));
    // A created file inside a folder that went as an obstacle went with it (named below); what
    // its path names now (where a link written there points) is not looked at.
    const { deleted, kept: beyondLinks } = await this.deleteCreated(outside(created, removable), target, {
      written: restore,
      remade,
    });
    kept.push(...beyondLinks);
    // What was in the way went too (a file where a path restored here goes is not deleted: it is restored).
    for (const held of obstacles.values())
      for (const p of held) if (!plan.entries.has(p) && !deleted.includes(p)) deleted.push(p);
    const entries = new Map([...plan.entries].filter(([p]) => !unkept.has(p) && !notWritten.has(p)));
    const narrowed = narrowToRecorded(this.workspaceRoot, target.modes, new Set([...restore, ...deleted]));
    return { restored: [...restore, ...narrowed], deleted, kept, entries };
  }

  /**
   * After a path restore the newest snapshot (what fast commits build on) must show the restored
   * files: the undo snapshot with the restored and deleted paths applied, at HEAD only.
   * False when nothing changed (HEAD stays at the undo snapshot).
   */
  headAfterPathRestore(
    session: FastImportSession,
    undoTree: string,
    targetId: string,
    result: FileRestoreResult,
    /** The files' recorded bits now, carried to the next process's saves (file-modes.ts modesIn). */
    modes?: ModeRecord,
  ): boolean {
    if (!result.restored.length && !result.deleted.length) return false;
    session.commit({
      ref: SNAPSHOT_HEAD,
      mark: 2,
      message: `${afterRestoreSubject(targetId)}\n${modes ? `\n${JSON.stringify({ modes })}\n` : ""}`,
      timeMs: Date.now(),
      identity: CHECKPOINT_IDENTITY,
      baseTree: undoTree,
      changes: [
        ...[...result.entries].map(([p, e]) => ({ path: p, mode: e.mode, id: e.id })),
        ...result.deleted.map((p) => ({ path: p, mode: "delete" })),
      ],
    });
    return true;
  }

  /**
   * The task has no recorded edits: `reset --hard` semantics in the shadow repository, carried
   * out file by file. Every file the snapshot tracks returns (all blobs are read before the
   * first file is touched); a file the undo snapshot tracks but the checkpoint does not is
   * removed, unless the checkpoint left it out or it existed before the checkpoint. Untracked,
   * ignored and nested-repository files are not touched, but for those the task's pre-images
   * hold as they were at the checkpoint (`captures`), which come back. A file the undo checkpoint
   * does not hold is kept first (`keepCurrent`), or left as it is.
   */
  async resetHard(
    target: CheckpointInfo,
    undoCommit: string,
    captures: readonly CaptureAt[],
    keepCurrent: KeepCurrent,
  ): Promise<FileRestoreResult> {
    const fields = splitNul(
      await this.git.text(["diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", undoCommit, target.id]),
    );
    const entries: TreeEntries = new Map();
    const gone: string[] = [];
    /** Paths the undo checkpoint does not hold that the restore writes. */
    const notInUndo: string[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      // ":<old mode> <new mode> <old id> <new id> <letter>", then the path (both inside the loop's bound).
      const [oldMode, newMode, , newId, letter] = fields[i]!.slice(1).split(" ");
      const p = fields[i + 1]!;
      if (newMode === undefined || newId === undefined)
        throw new GitError("unexpected output of git diff-tree", ["diff-tree"], `${fields[i]} ${p}`, 1);
      if (letter === "D") gone.push(p);
      else if (newMode !== "160000") {
        entries.set(p, { mode: newMode, id: newId });
        if (oldMode === "000000") notInUndo.push(p);
      }
    }
    const permissions = modesOf(target, entries);
    const kept: KeptPath[] = [];
    const created: string[] = [];
    const truncated = skipListTruncated(target);
    for (const p of gone) {
      // Left out of the checkpoint, but a pre-image says what it was then.
      const capture = captureAfter(captures, p, target.createdAt);
      if (capture?.kind === "preimage") {
        entries.set(p, { mode: capture.mode!, id: capture.id! });
        if (capture.permissions !== undefined) permissions.set(p, capture.permissions);
        continue;
      }
      if (capture?.kind === "too_large") {
        kept.push({ path: p, reason: "too_large" });
        continue;
      }
      if (capture?.kind === "changed_since") {
        kept.push({ path: p, reason: "not_tracked" });
        continue;
      }
      const born = lstatIfPresent(toAbsolute(this.workspaceRoot, p))?.birthtimeMs ?? 0;
      // A cut skip list cannot tell; a file whose inode is older than the checkpoint was there.
      if (
        capture?.kind !== "created" &&
        (leftOutBy(target.skipped, p) || (truncated && existedAt(born, target.createdAt)))
      ) {
        // Left as it is; named only when something changed it since (a later scan took in a
        // file a command un-ignored, untouched: nothing to say).
        if (!unchangedOnDiskSince(this.workspaceRoot, p, target.createdAt))
          kept.push({ path: p, reason: "not_tracked" });
      } else created.push(p);
    }
    const unkept = await keepCurrent(notInUndo.filter((p) => isFileOrLink(toAbsolute(this.workspaceRoot, p))));
    for (const p of unkept) {
      entries.delete(p);
      kept.push({ path: p, reason: "too_large" });
    }
    // As in applyPlan: a path beyond a link the undo checkpoint does not hold is kept, not refused.
    const beyond = await this.beyondLinksNotHeld(
      [...entries.keys()],
      async (links) =>
        new Set(
          splitNul(await this.git.text(["ls-tree", "-z", "--name-only", undoCommit, "--", ...links])).filter((p) =>
            links.includes(p),
          ),
        ),
    );
    for (const p of beyond) {
      entries.delete(p);
      kept.push({ path: p, reason: "beyond_link" });
    }
    const blobs = await this.readAll([...new Set([...entries.values()].map((e) => e.id))]);
    // reset --hard: what stands in the way goes when the undo checkpoint holds all of it.
    const obstacles = await this.obstaclesHeldBy(
      [...entries.keys()],
      async (wanted) =>
        new Set(splitNul(await this.git.text(["ls-tree", "-r", "-z", "--name-only", undoCommit, "--", ...wanted]))),
    );
    const removable = new Set(obstacles.keys());
    for (const p of entries.keys()) this.assertWritable(p, removable);
    for (const p of created) this.assertFolderWritable(p, path.dirname(toAbsolute(this.workspaceRoot, p)));
    for (const o of removable) await fs.rm(toAbsolute(this.workspaceRoot, o), { recursive: true, force: true });
    const remade = foldersToRemake(this.workspaceRoot, [...entries.keys()]);
    for (const p of await this.writeEach(entries, blobs, permissions)) {
      entries.delete(p);
      kept.push({ path: p, reason: "beyond_link" });
    }
    const { deleted, kept: beyondLinks } = await this.deleteCreated(outside(created, removable), target, {
      written: [...entries.keys()],
      remade,
    });
    kept.push(...beyondLinks);
    // What was in the way went too (the snapshot has none of it at that path).
    const removedToo = new Set(created);
    for (const held of obstacles.values())
      for (const p of held) if (removedToo.has(p) && !deleted.includes(p)) deleted.push(p);
    const narrowed = narrowToRecorded(this.workspaceRoot, target.modes, new Set([...entries.keys(), ...deleted]));
    return { restored: [...entries.keys(), ...narrowed], deleted, kept, entries };
  }

  /**
   * Contents of blobs by id in one `cat-file --batch`. Every blob must be there: a missing one
   * fails the restore before the first file is touched.
   */
  private async readAll(ids: string[]): Promise<Map<string, Buffer>> {
    const result = new Map<string, Buffer>();
    if (!ids.length) return result;
    const out = (await this.git.run(["cat-file", "--batch"], { input: ids.join("\n") + "\n" })).stdout;
    let pos = 0;
    while (pos < out.length) {
      const nl = out.indexOf(10, pos);
      const [id = "", type, sizeText] = out.subarray(pos, nl).toString("latin1").split(" ");
      if (type !== "blob") throw new GitError("checkpoint objects are missing", ["cat-file"], `missing blob ${id}`, 1);
      const size = Number(sizeText);
      result.set(id, out.subarray(nl + 1, nl + 1 + size));
      pos = nl + 1 + size + 1;
    }
    return result;
  }

  /**
   * Deletes files; then the folders this left empty, when they were made after the checkpoint
   * and it does not record them as the workspace's empty folders, and the folders a command
   * moved whose files came back at their old place (`moved`: the paths written and the folders
   * remade for them; moved-folders.ts), whatever their birth time.
   */
  private async deleteCreated(
    paths: string[],
    target: CheckpointInfo,
    moved: { written: readonly string[]; remade: readonly string[] },
  ): Promise<{ deleted: string[]; kept: KeptPath[] }> {
    const deleted: string[] = [];
    const kept: KeptPath[] = [];
    const links = new BeyondLinkDetector(this.workspaceRoot);
    for (const p of paths) {
      const abs = toAbsolute(this.workspaceRoot, p);
      // A folder on its way is a link now (the person's, made since): the file there is not the
      // task's but where the link points, maybe outside the workspace. Never deleted through it.
      if (links.beyondLink(p)) {
        if (lstatIfPresent(abs)) kept.push({ path: p, reason: "beyond_link" });
        continue;
      }
      const st = lstatIfPresent(abs);
      if (!st || st.isDirectory()) continue;
      if (
        await fs.rm(abs).then(
          () => true,
          () => false,
        )
      )
        deleted.push(p);
      const folder = path.posix.dirname(p);
      if (folder !== ".")
        removeFoldersMadeSince(this.workspaceRoot, [folder], target.createdAt, target.emptyFolders ?? []);
    }
    const copies = movedCopies(deleted, moved.written, moved.remade, target.emptyFolders ?? []);
    for (const copy of copies) {
      if (!removeEmptyTrees(this.workspaceRoot, [copy]).length) continue;
      // Its parents go too when the copy was all they held and they were made since (`mv lib a/b/lib`).
      const parent = path.posix.dirname(copy);
      if (parent !== ".")
        removeFoldersMadeSince(this.workspaceRoot, [parent], target.createdAt, target.emptyFolders ?? []);
    }
    return { deleted, kept };
  }

  /**
   * What stands where these paths go back (a folder where a file goes, a file or link where one
   * of its folders goes: a command swapped one for the other) and the undo checkpoint holds in
   * full: the folder's every file, or the file itself (each with the paths it holds). Those can
   * be removed, since undoing the restore brings them back; anything else in the way refuses the
   * restore (assertWritable).
   */
  private async obstaclesHeldBy(
    paths: string[],
    /** Which of these files the undo checkpoint holds. */
    heldByUndo: (files: string[]) => Promise<Set<string>>,
  ): Promise<Map<string, string[]>> {
    const folders = new Set<string>();
    const files = new Set<string>();
    for (const p of paths) {
      const abs = toAbsolute(this.workspaceRoot, p);
      if (lstatOrUndefined(abs)?.isDirectory()) folders.add(p);
      const parts = p.split("/");
      for (let i = 1; i < parts.length; i++) {
        const ancestor = parts.slice(0, i).join("/");
        const st = lstatOrUndefined(toAbsolute(this.workspaceRoot, ancestor));
        if (!st) break;
        if (!st.isDirectory()) {
          files.add(ancestor);
          break;
        }
      }
    }
    if (!folders.size && !files.size) return new Map();
    const inside = new Map([...folders].map((f) => [f, filesUnder(this.workspaceRoot, f)] as const));
    const wanted = [...files, ...[...inside.values()].flatMap((list) => list ?? [])];
    const held = wanted.length ? await heldByUndo(wanted) : new Set<string>();
    const removable = new Map<string, string[]>();
    for (const f of files) if (held.has(f)) removable.set(f, [f]);
    // An empty folder holds nothing to lose; a folder of too many files is not listed (left).
    for (const [f, list] of inside) if (list && list.every((x) => held.has(x))) removable.set(f, list);
    return removable;
  }

  /**
   * A file can go back where a folder now stands only by deleting the folder: refused, unless
   * the folder (or the file standing where a folder goes) is `removable` (obstaclesHeldBy).
   * Synchronous: a few stat calls per path, where each asynchronous one is a thread-pool round trip.
   */
  private assertWritable(repoPath: string, removable: ReadonlySet<string> = new Set()): void {
    const abs = toAbsolute(this.workspaceRoot, repoPath);
    const st = lstatOrUndefined(abs);
    if (st?.isDirectory() && !removable.has(repoPath))
      throw new DlineError("failed_precondition", folderInTheWay(this.workspaceRoot, repoPath));
    let dir = path.dirname(abs);
    let nearestFolder: string | undefined;
    while (dir.startsWith(this.workspaceRoot + path.sep)) {
      const d = lstatOrUndefined(dir);
      if (d && !d.isDirectory() && !removable.has(path.relative(this.workspaceRoot, dir).split(path.sep).join("/"))) {
        throw new DlineError(
          "failed_precondition",
          `Cannot restore ${repoPath}: ${path.relative(this.workspaceRoot, dir)} is ${d.isSymbolicLink() ? "a link" : "a file"} now.`,
        );
      }
      if (d?.isDirectory()) nearestFolder ??= dir;
      dir = path.dirname(dir);
    }
    this.assertFolderWritable(repoPath, nearestFolder ?? this.workspaceRoot);
  }

  /**
   * A file is written or deleted in `folder`, the nearest folder on its way there is: one made
   * read-only (0555) stopped the restore part-way, some files restored and others not. Checked
   * before any file is touched.
   */
  private assertFolderWritable(repoPath: string, folder: string): void {
    try {
      accessSync(folder, constants.W_OK);
    } catch (err) {
      // Gone, or a file now: nothing to delete there (a file to write makes its folders).
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return;
      const shown = path.relative(this.workspaceRoot, folder) || "the workspace folder";
      throw new DlineError(
        "permission_denied",
        `Cannot restore ${repoPath}: ${shown} cannot be written (${(err as NodeJS.ErrnoException).code ?? "denied"}). No file was restored. Make it writable and restore again.`,
      );
    }
  }

  /**
   * Of `paths`, those with a link on their way that the undo checkpoint does not hold (`held`:
   * which of these link paths it holds): a command's link it holds goes as an obstacle, and the
   * path is written; the person's stays, and so does the path.
   */
  private async beyondLinksNotHeld(
    paths: readonly string[],
    held: (links: string[]) => Promise<Set<string>>,
  ): Promise<Set<string>> {
    const links = new BeyondLinkDetector(this.workspaceRoot);
    const byLink = new Map<string, string[]>();
    for (const p of paths) {
      const link = links.linkOnWay(p);
      if (link) byLink.set(link, [...(byLink.get(link) ?? []), p]);
    }
    if (!byLink.size) return new Set();
    const inUndo = await held([...byLink.keys()]);
    return new Set([...byLink].filter(([link]) => !inUndo.has(link)).flatMap(([, ps]) => ps));
  }

  /** Whether the workspace's file at `repoPath` is this content with this mode (a link: this target). */
  private alreadyIs(repoPath: string, mode: string, content: Buffer): boolean {
    const abs = toAbsolute(this.workspaceRoot, repoPath);
    // Read through a link standing for a folder on its way, it is another file (maybe outside).
    if (new BeyondLinkDetector(this.workspaceRoot).beyondLink(repoPath)) return false;
    const st = lstatOrUndefined(abs);
    if (!st) return false;
    try {
      if (mode === "120000") return st.isSymbolicLink() && readlinkSync(abs) === content.toString("utf8");
      const executable = (st.mode & 0o111) !== 0;
      return (
        st.isFile() &&
        st.size === content.length &&
        executable === (mode === "100755") &&
        readFileSync(abs).equals(content)
      );
    } catch {
      return false;
    }
  }

  /**
   * Writes each entry in turn; a failure after the first throws RestoreStopped, naming those
   * written. Answers the paths not written because a folder on their way is a link by then (one
   * this restore just wrote, or one already there): writing there would write where the link
   * points, maybe outside the workspace.
   */
  private async writeEach(
    entries: Iterable<[string, { mode: string; id: string }]>,
    blobs: ReadonlyMap<string, Buffer>,
    permissions: ReadonlyMap<string, number>,
  ): Promise<Set<string>> {
    const planned = [...entries];
    // What a killed restore left beside these files goes now (a re-run writes them again).
    removeLeftCopies(planned.map(([p]) => toAbsolute(this.workspaceRoot, p)));
    const written: string[] = [];
    const beyondLink = new Set<string>();
    let links = new BeyondLinkDetector(this.workspaceRoot);
    for (const [p, e] of planned) {
      if (links.beyondLink(p)) {
        beyondLink.add(p);
        continue;
      }
      // A link written here may stand on the way of the paths after it.
      if (e.mode === "120000") links = new BeyondLinkDetector(this.workspaceRoot);
      try {
        await this.writeFile(toAbsolute(this.workspaceRoot, p), e.mode, blobs.get(e.id)!, permissions.get(p));
      } catch (err) {
        if (written.length) throw new RestoreStopped(err, written);
        throw err;
      }
      written.push(p);
    }
    return beyondLink;
  }

  /**
   * Writes atomically (temporary file, then rename), as a symbolic link for mode 120000. Small
   * files (most restores) with synchronous calls: six steps of microseconds each instead of six
   * thread-pool round trips; large ones asynchronously, so the event loop is not held up.
   * `recorded`: the permission bits the checkpoint or a pre-image recorded of the file. Only
   * the temporary file this writes is given bits: no other file is chmod-ed.
   */
  private async writeFile(abs: string, mode: string, content: Buffer, recorded?: number): Promise<void> {
    const tmp = restoreCopyOf(abs);
    try {
      await this.writeVia(tmp, abs, mode, content, recorded);
    } catch (err) {
      // A half-written copy (a full disk) would hold the space and stay in the person's folder.
      try {
        rmSync(tmp, { force: true });
      } catch {
        // not removable either: the error below is what the person needs to know
      }
      throw err;
    }
  }

  private async writeVia(tmp: string, abs: string, mode: string, content: Buffer, recorded?: number): Promise<void> {
    // A file there keeps its permissions (a private key stays private) with the snapshot's
    // executable bit, narrowed to those recorded. One gone gets those the checkpoint or its
    // pre-image recorded (a key or an `.env` a command deleted comes back as private as it was),
    // else the umask's, as git checkout gives (the snapshot holds only 644 or 755).
    const keep = restoredPermissions(currentPermissions(abs), recorded, mode === "100755");
    const createMode = mode === "100755" ? 0o777 : 0o666;
    if (content.length <= SMALL_FILE || mode === "120000") {
      mkdirSync(path.dirname(abs), { recursive: true });
      rmSync(tmp, { force: true });
      if (mode === "120000") {
        symlinkSync(content.toString("utf8"), tmp);
      } else {
        writeFileSync(tmp, content, { mode: keep ?? createMode });
        if (keep !== undefined) chmodSync(tmp, keep);
      }
      renameSync(tmp, abs);
      return;
    }
    await fs.mkdir(path.dirname(abs), { recursive: true });
    await fs.rm(tmp, { force: true });
    await fs.writeFile(tmp, content, { mode: keep ?? createMode });
    if (keep !== undefined) await fs.chmod(tmp, keep);
    await fs.rename(tmp, abs);
  }
}

/** Of `paths`, those not inside one of `folders` (repository paths). */
function outside(paths: readonly string[], folders: ReadonlySet<string>): string[] {
  if (!folders.size) return [...paths];
  return paths.filter((p) => ![...folders].some((f) => p.startsWith(`${f}/`)));
}

/** The permission bits of the regular file at `abs`; undefined when there is none. */
function currentPermissions(abs: string): number | undefined {
  const st = lstatOrUndefined(abs);
  return st?.isFile() ? st.mode & 0o777 : undefined;
}

/** The bits `target` recorded (CheckpointMeta.modes) of those of `entries` that are files. */
function modesOf(target: CheckpointInfo, entries: TreeEntries): Map<string, number> {
  const permissions = new Map<string, number>();
  if (!target.modes) return permissions;
  for (const [p, e] of entries) {
    const bits = e.mode === "100644" || e.mode === "100755" ? recordedMode(target.modes, p) : undefined;
    if (bits !== undefined) permissions.set(p, bits);
  }
  return permissions;
}

const SMALL_FILE = 256 * 1024;
/** A folder in the way is looked through up to this many entries (more: it stays, the restore is refused). */
const MAX_OBSTACLE_ENTRIES = 10_000;

/** The repository paths of everything under a folder but folders; undefined past MAX_OBSTACLE_ENTRIES. */
function filesUnder(workspaceRoot: string, folder: string): string[] | undefined {
  const out: string[] = [];
  const walk = (rel: string): boolean => {
    let entries: Dirent[];
    try {
      entries = readdirSync(toAbsolute(workspaceRoot, rel), { withFileTypes: true });
    } catch {
      return true;
    }
    for (const e of entries) {
      if (out.length >= MAX_OBSTACLE_ENTRIES) return false;
      const child = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!walk(child)) return false;
      } else out.push(child);
    }
    return true;
  };
  return walk(folder) ? out : undefined;
}

/**
 * Why a restore is refused where a folder stands in place of a file it puts back: what is in it
 * that no checkpoint holds would be lost (an ignored `conf/x.log`), named with what to do. The
 * message said only "a folder of that name is in the way".
 */
function folderInTheWay(workspaceRoot: string, repoPath: string): string {
  const files = filesUnder(workspaceRoot, repoPath);
  const shown = (files ?? []).slice(0, 3).join(", ");
  const more = files === undefined ? " and more" : files.length > 3 ? ` and ${files.length - 3} more` : "";
  const what =
    files?.length === 0
      ? "an empty folder is in its place (no checkpoint would make it again)"
      : `a folder holding ${shown}${more} is in its place, and no checkpoint holds all of it (the restore would lose it)`;
  return `Cannot restore ${repoPath}: ${what}. No file was restored. Move that folder elsewhere (or delete it) and restore again.`;
}

/** Whether a file or a link stands at `abs` (what a restore would write over or delete). */
function isFileOrLink(abs: string): boolean {
  const st = lstatOrUndefined(abs);
  return !!st && !st.isDirectory();
}

/** Any error (missing, not a folder on the way, no access) reads as "nothing there". */
function lstatOrUndefined(abs: string): Stats | undefined {
  try {
    return lstatSync(abs);
  } catch {
    return undefined;
  }
}
