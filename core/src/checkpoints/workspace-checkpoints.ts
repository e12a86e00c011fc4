import * as fs from "node:fs/promises";
import * as path from "node:path";
import type { Logger } from "../logging/logger.js";
import { CheckpointLog } from "./checkpoint-log.js";
import {
  encodeMessage,
  MAX_RECORDED_SKIPS,
  SNAPSHOT_HEAD,
  type CheckpointInfo,
  type CheckpointKind,
  type CheckpointMeta,
} from "./checkpoint-record.js";
import { changesTree, FastCommitter, readPathChanges, type PathChange } from "./fast-commit.js";
import { readLfsPatterns, writeExcludeFile, type SkippedPath } from "./exclusions.js";
import { CHECKPOINT_IDENTITY, GitError, looksCorrupt } from "./git-process.js";
import { RepoLock } from "./repo-lock.js";
import { ShadowRepo } from "./shadow-repo.js";
import { SnapshotDiff, type FileChange } from "./snapshot-diff.js";
import { SnapshotRestore, type FileRestoreResult } from "./snapshot-restore.js";
import { SnapshotStager } from "./snapshot-stager.js";
import { toRepoPath } from "./workspace-paths.js";
import { MESSAGES } from "./workspace-guard.js";
import { DlineError } from "../errors.js";

export interface WorkspaceCheckpointsOptions {
  workspaceRoot: string;
  repoDir: string;
  env: NodeJS.ProcessEnv;
  sizeLimitBytes: number;
  lockStaleMs: number;
  logger: Logger;
}

export interface SaveRequest {
  taskId: string;
  kind: CheckpointKind;
  messageId: string;
  editedPaths: readonly string[];
  /** Scan the workspace (baseline, a command ran, no recorded paths). */
  scan: boolean;
  /** False for compaction checkpoints: no new snapshot. */
  hasFiles: boolean;
  /** Force a listing of ignored files (otherwise the last listing is carried over). */
  listIgnored?: boolean;
}

const STALE_LOCK = /\.lock': File exists|cannot lock ref/i;
const INDEX_DAMAGE = /index file corrupt|bad signature 0x|bad index file|index file smaller than expected|sharedindex/i;

/**
 * The checkpoints of one workspace: its shadow repository, behind one cross-process lock.
 * Every operation runs under the lock, recovers stale git locks first, and on a damaged
 * repository sets it aside, rebuilds it and tries once more.
 */
export class WorkspaceCheckpoints {
  readonly repo: ShadowRepo;
  readonly log: CheckpointLog;
  private readonly lock: RepoLock;
  private readonly stager: SnapshotStager;
  private readonly diff: SnapshotDiff;
  private readonly restorer: SnapshotRestore;
  private readonly fast: FastCommitter;
  /** What the last full listing of ignored files found (carried into later checkpoints). */
  private lastIgnored: SkippedPath[] | undefined;
  /** Where a damaged repository was moved, when it was rebuilt in this process. */
  rebuiltFrom: string | undefined;
  private opened = false;
  /** When prepare() last scanned; the save right after it (the baseline) need not scan again. */
  private freshScanAt = 0;
  private freshSizeSkips: SkippedPath[] = [];

  constructor(readonly options: WorkspaceCheckpointsOptions) {
    this.repo = new ShadowRepo(options.workspaceRoot, options.repoDir, options.env);
    this.log = new CheckpointLog(this.repo.git);
    this.lock = new RepoLock(this.repo.paths.lockTarget, options.lockStaleMs, 120_000, (err) =>
      options.logger.warn("checkpoint repository lock was taken over while held", { error: err.message }),
    );
    this.stager = new SnapshotStager(this.repo.git, options.workspaceRoot, options.sizeLimitBytes);
    this.diff = new SnapshotDiff(this.repo.git, options.workspaceRoot, options.sizeLimitBytes);
    this.fast = new FastCommitter(this.repo.git, this.repo.paths.gitDir);
    this.restorer = new SnapshotRestore(this.repo.git, this.fast, options.workspaceRoot);
  }

  get workspaceRoot(): string {
    return this.options.workspaceRoot;
  }

  /** Opens (or creates) the repository and scans the whole workspace into its index. */
  async prepare(signal?: AbortSignal): Promise<SkippedPath[]> {
    return this.locked(async () => {
      await this.open(signal);
      const { skipped } = await this.stager.stageScan({ listIgnored: true, signal });
      this.rememberScan(skipped, true);
      this.freshScanAt = Date.now();
      this.freshSizeSkips = skipped.filter((x) => x.reason === "size");
      return skipped;
    });
  }

  async save(req: SaveRequest, signal?: AbortSignal): Promise<CheckpointInfo> {
    return this.locked(async () => {
      await this.open(signal);
      return this.saveLocked(req, signal);
    });
  }

  /** One checkpoint; the caller holds the lock and opened the repository. */
  private async saveLocked(req: SaveRequest, signal?: AbortSignal): Promise<CheckpointInfo> {
    // prepare() scanned the whole workspace a moment ago (the baseline right after it).
    const fresh = Date.now() - this.freshScanAt < 2000;
    this.freshScanAt = 0;
    if (req.hasFiles && !req.scan && req.editedPaths.length && (await this.fast.usable())) {
      const quick = await this.saveRecordedPaths(req, signal);
      if (quick) return quick;
    }
    const skipped: SkippedPath[] = [];
    let tree: string | undefined;
    if (!req.hasFiles) {
      tree = await this.log.headTree(signal);
      tree ??= await this.log.emptyTree(signal);
    } else {
      if (req.editedPaths.length) skipped.push(...(await this.stager.stagePaths(req.editedPaths, signal)).skipped);
      // Without a scan, the index may lag the newest snapshot (fast commits): scan then too.
      if (!(fresh && !req.listIgnored)) {
        // LFS patterns may have changed since the repository was opened.
        await writeExcludeFile(this.repo.paths.gitDir, await readLfsPatterns(this.workspaceRoot));
        const listIgnored = !!req.listIgnored || this.lastIgnored === undefined;
        const scanned = (await this.stager.stageScan({ listIgnored, signal })).skipped;
        this.rememberScan(scanned, listIgnored);
        skipped.push(...scanned.filter((s) => s.reason === "size"));
      } else {
        skipped.push(...this.freshSizeSkips);
      }
      skipped.push(...(this.lastIgnored ?? []));
    }
    const unique = dedupeSkips(skipped);
    return this.log.commit(
      {
        ...this.meta(req),
        skipped: unique.slice(0, MAX_RECORDED_SKIPS),
        skippedTotal: unique.length,
      },
      { tree, signal },
    );
  }

  /**
   * The per-turn fast path: the previous snapshot plus the recorded paths, in one fast-import
   * (no index read or write). Undefined when there is no previous snapshot to build on.
   */
  private async saveRecordedPaths(req: SaveRequest, signal?: AbortSignal): Promise<CheckpointInfo | undefined> {
    const { take, drop, skipped } = await this.stager.classifyPaths(req.editedPaths);
    const paths = [...take, ...drop];
    const [baseTree, baseEntries, read] = await Promise.all([
      this.log.headTree(signal),
      this.fast.entries(SNAPSHOT_HEAD, paths, signal).catch(() => undefined),
      readPathChanges(this.workspaceRoot, take),
    ]);
    if (!baseTree || !baseEntries) return undefined;
    const changes: PathChange[] = [...read, ...drop.map((p): PathChange => ({ path: p, mode: "delete" }))];
    const unique = dedupeSkips([...skipped, ...(this.lastIgnored ?? [])]);
    const meta: CheckpointMeta = {
      ...this.meta(req),
      skipped: unique.slice(0, MAX_RECORDED_SKIPS),
      skippedTotal: unique.length,
      reused: !changesTree(baseEntries, changes),
    };
    const ref = await this.log.freeTaskRef(req.taskId, meta.createdAt);
    const { commit, tree } = await this.fast.commit({
      baseTree,
      changes,
      message: encodeMessage(meta),
      ref,
      headRef: SNAPSHOT_HEAD,
      timeMs: meta.createdAt,
      identity: CHECKPOINT_IDENTITY,
      signal,
    });
    await this.log.clearRestoredMarker(req.taskId, signal);
    return { ...meta, id: commit, tree, seq: 0, ref };
  }

  private meta(req: SaveRequest): Omit<CheckpointMeta, "skipped" | "skippedTotal" | "reused"> {
    return {
      v: 1,
      task: req.taskId,
      kind: req.kind,
      createdAt: Date.now(),
      messageId: req.messageId,
      hasFiles: req.hasFiles,
      edited: [...new Set(req.editedPaths.map((p) => toRepoPath(this.workspaceRoot, p)).filter((p): p is string => !!p))],
    };
  }

  async list(taskId: string): Promise<CheckpointInfo[]> {
    return this.locked(async () => {
      await this.open();
      return this.log.list(taskId);
    });
  }

  async restoredMarker(taskId: string): Promise<string | undefined> {
    return this.locked(async () => {
      await this.open();
      return this.log.restoredMarker(taskId);
    });
  }

  /** The checkpoint against the current workspace ("Changes since snapshot"). */
  async compare(commit: string): Promise<FileChange[]> {
    return this.locked(async () => {
      await this.open();
      await this.stager.stageScan({ listIgnored: false });
      return this.diff.againstWorkspace(commit);
    }, false);
  }

  async between(from: string, to: string): Promise<FileChange[]> {
    return this.locked(async () => {
      await this.open();
      return this.diff.betweenCommits(from, to);
    });
  }

  /**
   * Restores files to `target` for `taskId`: saves the "before restore" checkpoint first, then
   * applies the recorded-paths rule or `reset --hard` semantics, then sets the restored marker.
   */
  async restoreFiles(
    taskId: string,
    target: CheckpointInfo,
    recordedPaths: readonly string[],
  ): Promise<FileRestoreResult & { undo: CheckpointInfo }> {
    return this.locked(async () => {
      await this.open();
      const recorded = [...new Set(recordedPaths.map((p) => toRepoPath(this.workspaceRoot, p)).filter((p): p is string => !!p))];
      // The undo point: the recorded paths are all a path restore touches; reset --hard
      // semantics touch every tracked file, so then the whole workspace is scanned.
      const undo = await this.saveLocked({
        taskId,
        kind: "before_restore",
        messageId: target.messageId,
        editedPaths: recorded,
        scan: recorded.length === 0,
        hasFiles: true,
      });
      let result: FileRestoreResult;
      if (recorded.length) {
        const leftOut = new Set(target.skipped.map((s) => s.path));
        result = await this.restorer.restorePaths(target.id, undo.id, recorded, leftOut);
        await this.moveHeadAfterPathRestore(undo, target, result);
      } else {
        result = await this.restorer.resetHard(target.id, undo.id);
        await this.log.moveHead(target.id);
      }
      await this.log.setRestoredMarker(taskId, target.id);
      return { ...result, undo };
    }, false);
  }

  /** Removes the refs of one task, then lets git drop what nothing else references. */
  async deleteTask(taskId: string): Promise<void> {
    await this.locked(async () => {
      if (!(await this.repo.exists())) return;
      await this.open();
      const refs = (await this.log.list(taskId)).map((c) => c.ref);
      const marker = await this.log.restoredMarker(taskId);
      await this.log.deleteRefs(marker ? [...refs, `refs/dline/restored/${taskId}`] : refs);
      await this.pruneUnlocked();
    });
  }

  /**
   * Keeps the objects under `budgetBytes`: deletes the oldest checkpoints of deleted tasks,
   * then of finished tasks, never a running task's, pruning between rounds.
   * Returns the ids of the checkpoints removed.
   */
  async enforceBudget(budgetBytes: number, stateOf: (taskId: string) => Promise<"running" | "finished" | "deleted">): Promise<string[]> {
    return this.locked(async () => {
      await this.open();
      const removed: string[] = [];
      for (let round = 0; round < 12; round++) {
        if ((await this.repo.objectBytes()) <= budgetBytes) break;
        const all = await this.log.listAll();
        const states = new Map<string, string>();
        for (const c of all) if (!states.has(c.task)) states.set(c.task, await stateOf(c.task));
        const byAge = (a: CheckpointInfo, b: CheckpointInfo) => a.createdAt - b.createdAt;
        const deleted = all.filter((c) => states.get(c.task) === "deleted").sort(byAge);
        const finished = all.filter((c) => states.get(c.task) === "finished").sort(byAge);
        const pool = deleted.length ? deleted : finished;
        if (!pool.length) break;
        const batch = pool.slice(0, Math.max(1, Math.ceil(pool.length / 4)));
        await this.log.deleteRefs(batch.map((c) => c.ref));
        removed.push(...batch.map((c) => c.id));
        await this.repo.git.run(["gc", "--prune=now", "--quiet"]);
      }
      // Under budget: let git pack loose objects when it thinks it is time.
      if (!removed.length) await this.repo.git.run(["gc", "--auto", "--quiet"]);
      return removed;
    });
  }

  /** Keeps what the last scan left out (all but size skips, which belong to one save). */
  private rememberScan(scanned: SkippedPath[], listedIgnored: boolean): void {
    const nested = scanned.filter((s) => s.reason === "nested_repository");
    const ignored = listedIgnored
      ? scanned.filter((s) => s.reason !== "size" && s.reason !== "nested_repository")
      : (this.lastIgnored ?? []).filter((s) => s.reason !== "nested_repository");
    this.lastIgnored = [...nested, ...ignored];
  }

  private async pruneUnlocked(): Promise<void> {
    await this.repo.git.run(["prune", "--expire=now"]);
    await this.repo.git.run(["gc", "--auto", "--quiet"]);
  }

  /**
   * After a path restore the newest snapshot (what fast commits build on) must show the restored
   * files: the undo snapshot with the restored and deleted paths applied, at HEAD only.
   */
  private async moveHeadAfterPathRestore(undo: CheckpointInfo, target: CheckpointInfo, result: FileRestoreResult): Promise<void> {
    if (!result.restored.length && !result.deleted.length) return;
    const entries = result.entries;
    await this.fast.commit({
      baseTree: undo.tree,
      changes: [
        ...[...entries].map(([p, e]) => ({ path: p, mode: e.mode, id: e.id })),
        ...result.deleted.map((p): PathChange => ({ path: p, mode: "delete" })),
      ],
      message: `Dline snapshot after restoring ${target.id}\n`,
      ref: SNAPSHOT_HEAD,
      headRef: SNAPSHOT_HEAD,
      timeMs: Date.now(),
      identity: CHECKPOINT_IDENTITY,
    });
  }

  private async open(signal?: AbortSignal): Promise<void> {
    if (this.opened && (await this.repo.exists())) return;
    if (await this.repo.exists()) await this.repo.removeStaleLocks(true);
    await this.repo.openOrCreate(signal);
    await writeExcludeFile(this.repo.paths.gitDir, await readLfsPatterns(this.workspaceRoot));
    this.opened = true;
  }

  /**
   * Runs `fn` under the repository lock. A damaged index is dropped and `fn` retried (the index
   * is a cache). A damaged repository is set aside and rebuilt; `fn` is retried only when
   * `retryAfterRebuild` (saves and reads), never for restores and compares, which would act on
   * checkpoints that are gone: those fail with `data_loss` naming where the old repository is.
   */
  private locked<T>(fn: () => Promise<T>, retryAfterRebuild = true): Promise<T> {
    return this.lock.with(async () => {
      await fs.mkdir(this.options.repoDir, { recursive: true });
      if (await this.repo.exists()) {
        const removed = await this.repo.removeStaleLocks(false);
        if (removed.length) this.options.logger.warn("removed stale git locks", { locks: removed.join(",") });
      }
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof GitError)) throw err;
        if (STALE_LOCK.test(err.stderr)) {
          // A killed git left a lock we did not look for (a ref lock): clear all, once more.
          const removed = await this.repo.removeStaleLocks(true);
          this.options.logger.warn("removed stale git locks", { locks: removed.join(",") });
          return fn();
        }
        if (INDEX_DAMAGE.test(err.stderr)) {
          // The index is a cache of the workspace: drop it and scan again.
          this.options.logger.warn("shadow index damaged; rebuilding it", { repo: this.options.repoDir });
          await this.dropIndex();
          this.lastIgnored = undefined;
          return fn();
        }
        if (!looksCorrupt(err)) throw err;
        const aside = await this.repo.setAside();
        this.rebuiltFrom = aside;
        this.opened = false;
        this.lastIgnored = undefined;
        this.options.logger.error("shadow repository damaged; set aside and rebuilt", { aside });
        if (!retryAfterRebuild) throw new DlineError("data_loss", MESSAGES.rebuilt(aside), { cause: err });
        return fn();
      }
    });
  }

  private async dropIndex(): Promise<void> {
    const gitDir = this.repo.paths.gitDir;
    for (const name of await fs.readdir(gitDir)) {
      if (name === "index" || name.startsWith("sharedindex.")) await fs.rm(path.join(gitDir, name), { force: true });
    }
  }
}

function dedupeSkips(skips: SkippedPath[]): SkippedPath[] {
  const seen = new Map<string, SkippedPath>();
  for (const s of skips) if (!seen.has(s.path)) seen.set(s.path, s);
  return [...seen.values()];
}
