import * as fs from "node:fs/promises";
import * as path from "node:path";
import { DlineError } from "../errors.js";
import { SNAPSHOT_HEAD } from "./checkpoint-record.js";
import { sessionEntries, type TreeEntries } from "./fast-commit.js";
import type { FastImportSession } from "./fast-import-session.js";
import { CHECKPOINT_IDENTITY, GitError, splitNul, type ShadowGit } from "./git-process.js";
import { toAbsolute, toRepoPath } from "./workspace-paths.js";

/** The entries and contents of the paths to restore, read before any file is touched. */
export interface TargetFiles {
  paths: string[];
  entries: TreeEntries;
  blobs: Map<string, Buffer>;
}

export interface FileRestoreResult {
  restored: string[];
  deleted: string[];
  /** Mode and blob of each restored path in the checkpoint. */
  entries: TreeEntries;
}

/**
 * Writes a checkpoint back into the workspace by the spec's restore rules. Callers hold the
 * repository lock and have already saved the "before restore" checkpoint (`undoCommit`).
 */
export class SnapshotRestore {
  constructor(
    private readonly git: ShadowGit,
    private readonly workspaceRoot: string,
  ) {}

  /**
   * Contents of blobs by id in one `cat-file --batch`. Every blob must be there: a missing one
   * fails the restore before the first file is touched (git's own checkout would already have
   * removed the file by then).
   */
  private async readAll(ids: string[]): Promise<Map<string, Buffer>> {
    const result = new Map<string, Buffer>();
    const unique = [...new Set(ids)];
    if (!unique.length) return result;
    const out = (await this.git.run(["cat-file", "--batch"], { input: unique.join("\n") + "\n" })).stdout;
    let pos = 0;
    while (pos < out.length) {
      const nl = out.indexOf(10, pos);
      const header = out.subarray(pos, nl).toString("latin1").split(" ");
      if (header[1] === "missing" || header[1] !== "blob") {
        throw new GitError("checkpoint objects are missing", ["cat-file"], `missing blob ${header[0]}`, 1);
      }
      const size = Number(header[2]);
      result.set(header[0], out.subarray(nl + 1, nl + 1 + size));
      pos = nl + 1 + size + 1;
    }
    return result;
  }

  /**
   * The task edited files with its tools: only those come back. Reads, from the open
   * fast-import `session`, the checkpoint's entries of those paths and every blob to write,
   * before anything is touched (and while the undo checkpoint is being written).
   */
  readTarget(session: FastImportSession, commit: string, recordedPaths: readonly string[], leftOut: ReadonlySet<string>): Promise<TargetFiles> {
    const paths = [...new Set(recordedPaths.map((p) => toRepoPath(this.workspaceRoot, p)).filter((p): p is string => !!p))].filter(
      (p) => !leftOut.has(p),
    );
    return (async () => {
      const entries = await sessionEntries(session, commit, paths);
      const ids = [...new Set([...entries.values()].map((e) => e.id))];
      const contents = await Promise.all(ids.map((id) => session.catBlob(id)));
      return { paths, entries, blobs: new Map(ids.map((id, i) => [id, contents[i]])) };
    })();
  }

  /**
   * Writes what `readTarget` read. A path in the checkpoint gets its content back; a path absent
   * from it is deleted, but only when the undo checkpoint (`undo`, a commit or a mark of the
   * session) holds it, so the restore itself can be undone, and the checkpoint did not merely
   * leave it out. The index is not written: the next scan restages from HEAD, index and work tree.
   */
  async restorePaths(session: FastImportSession, target: TargetFiles, undo: string): Promise<FileRestoreResult> {
    const { paths, entries, blobs } = target;
    const restore = paths.filter((p) => entries.has(p));
    const absent = paths.filter((p) => !entries.has(p));
    const backedUp = absent.length ? await sessionEntries(session, undo, absent) : new Map();
    const remove = absent.filter((p) => backedUp.has(p));
    for (const p of restore) await this.assertWritable(p);
    for (const p of restore) {
      const e = entries.get(p)!;
      await this.writeFile(toAbsolute(this.workspaceRoot, p), e.mode, blobs.get(e.id)!);
    }
    const deleted: string[] = [];
    for (const p of remove) {
      const abs = toAbsolute(this.workspaceRoot, p);
      if (await fs.rm(abs).then(() => true, () => false)) deleted.push(p);
      await this.removeEmptyParents(path.dirname(abs));
    }
    return { restored: restore, deleted, entries };
  }

  /**
   * After a path restore the newest snapshot (what fast commits build on) must show the restored
   * files: the undo snapshot with the restored and deleted paths applied, at HEAD only.
   * False when nothing changed (HEAD stays at the undo snapshot).
   */
  headAfterPathRestore(session: FastImportSession, undoTree: string, targetId: string, result: FileRestoreResult): boolean {
    if (!result.restored.length && !result.deleted.length) return false;
    session.commit({
      ref: SNAPSHOT_HEAD,
      mark: 2,
      message: `Dline snapshot after restoring ${targetId}\n`,
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

  /** A file can go back where a folder now stands only by deleting the folder: refused. */
  private async assertWritable(repoPath: string): Promise<void> {
    const abs = toAbsolute(this.workspaceRoot, repoPath);
    const st = await fs.lstat(abs).catch(() => undefined);
    if (st?.isDirectory()) {
      throw new DlineError("failed_precondition", `Cannot restore ${repoPath}: a folder of that name is in the way.`);
    }
    let dir = path.dirname(abs);
    while (dir.startsWith(this.workspaceRoot + path.sep)) {
      const d = await fs.lstat(dir).catch(() => undefined);
      if (d && !d.isDirectory()) {
        throw new DlineError("failed_precondition", `Cannot restore ${repoPath}: ${path.relative(this.workspaceRoot, dir)} is a file now.`);
      }
      dir = path.dirname(dir);
    }
  }

  /** Writes atomically (temporary file, then rename), as a symbolic link for mode 120000. */
  private async writeFile(abs: string, mode: string, content: Buffer): Promise<void> {
    await fs.mkdir(path.dirname(abs), { recursive: true });
    const tmp = `${abs}.dline-restore-${process.pid}`;
    await fs.rm(tmp, { force: true });
    if (mode === "120000") {
      await fs.symlink(content.toString("utf8"), tmp);
    } else {
      await fs.writeFile(tmp, content, { mode: mode === "100755" ? 0o755 : 0o644 });
      await fs.chmod(tmp, mode === "100755" ? 0o755 : 0o644);
    }
    await fs.rename(tmp, abs);
  }

  /**
   * The task has no recorded edits: `reset --hard` semantics in the shadow repository. Every
   * file the snapshot tracks returns; files tracked now but absent from it are removed. The
   * index and HEAD follow; untracked, ignored and nested-repository files are not touched.
   */
  async resetHard(commit: string, undoCommit: string): Promise<FileRestoreResult> {
    const changed = splitNul(
      (await this.git.run(["diff-tree", "-r", "-z", "--name-status", "--no-renames", undoCommit, commit])).stdout,
    );
    const listing = splitNul((await this.git.run(["ls-tree", "-r", "-z", "--full-tree", commit])).stdout);
    // Reads every blob (and fails on a missing one) before read-tree writes anything.
    await this.readAll(listing.filter((e) => e.includes(" blob ")).map((e) => e.split(" ")[2].split("\t")[0]));
    await this.git.run(["read-tree", "--reset", "-u", commit]);
    const restored: string[] = [];
    const deleted: string[] = [];
    for (let i = 0; i + 1 < changed.length; i += 2) {
      if (changed[i] === "D") deleted.push(changed[i + 1]);
      else restored.push(changed[i + 1]);
    }
    return { restored, deleted, entries: new Map() };
  }

  private async removeEmptyParents(dir: string): Promise<void> {
    let current = dir;
    while (current.startsWith(this.workspaceRoot + path.sep)) {
      if (!(await fs.rmdir(current).then(() => true, () => false))) return;
      current = path.dirname(current);
    }
  }
}
