import { InFlight } from "./in-flight.js";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import { enforceBudget, objectFileBytes, type TaskState } from "./checkpoint-budget.js";
import { CheckpointLog } from "./checkpoint-log.js";
import {
  decodeMessage,
  MAX_RECORDED_SKIPS,
  restoredRef,
  SNAPSHOT_HEAD,
  afterRestoreSubject,
  taskRefPrefix,
  type CheckpointInfo,
  type CheckpointKind,
  type CheckpointMeta,
  type CommandSave,
} from "./checkpoint-record.js";
import { parseTree } from "./git-objects.js";
import { changedPaths } from "./tree-diff.js";
import { RestoreStopped, stoppedPartWay } from "./restore-stopped.js";
import { ObjectReader } from "./loose-objects.js";
import { BUILT_IN_EXCLUDES, dedupeSkips, readLfsPatterns, writeExcludeFile, type SkippedPath } from "./exclusions.js";
import { captureAfter, capturesAt, capturesRef, EditCaptures, type CaptureAt } from "./edit-captures.js";
import { FastCommitter } from "./fast-commit.js";
import type { GitChildren } from "./git-children.js";
import { leftOutBy, skipListTruncated, unchangedOnDiskSince } from "./left-out.js";
import {
  leftOutChangedAfter,
  notTrackedChanges,
  withLeftOutChanges,
  type LaterSkips,
  type LeftOutLook,
} from "./left-out-changes.js";
import { PackMaintenance } from "./pack-maintenance.js";
import { PackingLock } from "./packing-lock.js";
import { pathsToStage } from "./watched-paths.js";
import { WorkspaceWatcher } from "./workspace-watcher.js";
import {
  findEmptyFolders,
  foldersToMake,
  emptyFoldersMadeSince,
  makeMissingFolders,
  removeEmptyFolders,
  removeFoldersMadeSince,
  stillFolders,
} from "./empty-folders.js";
import { removeUnreachablePacks } from "./unreachable-packs.js";
import { FileModes, modesIn, type ModeRecord } from "./file-modes.js";
import { restoreRecordedPaths } from "./path-restore.js";
import { RecordedPathSaver, type BaseMeta } from "./recorded-save.js";
import { readRepositoryHead, repositoryMovedNote } from "./repo-head.js";
import { RecoveringLock } from "./repo-recovery.js";
import type { LockWaitEvents } from "./repo-lock.js";
import { ShadowRepo } from "./shadow-repo.js";
import { looksCorrupt, splitNul } from "./git-process.js";
import { objectsMissing } from "./missing-objects.js";
import { MESSAGES } from "./workspace-guard.js";
import { SnapshotDiff, type FileChange, type PreimageEntry, type PreimageSide } from "./snapshot-diff.js";
import { SnapshotRestore, type FileRestoreResult, type KeepCurrent } from "./snapshot-restore.js";
import { SnapshotStager, type ScanProgress, type StageResult } from "./snapshot-stager.js";
import { TreeEditor, TreeUnavailable } from "./tree-editor.js";
import { WriteLeftovers } from "./write-leftovers.js";
import { RestoreMarker, type RestoreLeftPartWay } from "./restore-marker.js";
import { restoreTargetName } from "./restore-purpose.js";
import { lstatIfPresent, toAbsolute, toRepoPath } from "./workspace-paths.js";

/**
 * A command still running after this long gets the workspace watched while it runs (see
 * commandStarting); one over sooner is saved by a scan, which costs less than the watch's walk.
 */
const COMMAND_WATCH_DELAY_MS = 150;
/** A watcher no save used for this long is closed. */
const WATCHER_IDLE_MS = 10 * 60_000;
/**
 * This long after a task's completion (once its last writes are done), a process that lives on
 * (an editor's or ACP's sidecar) watches the workspace: the next task's baseline and saves then
 * stage what the watcher saw change instead of running git status over every file. It is begun
 * soon, so that the walk and the scan that put it in step are over when the person starts the
 * next task (3 s before, when the CLI's sidecar was not known apart: at 27,000 files a task
 * begun 4 s after the last could find the watcher not in step on a busy machine).
 */
const WATCH_AFTER_COMPLETION_MS = 300;

/** Folders never watched: `.git` and the built-in excluded folders (their files never enter a scan). */
const EXCLUDED_FOLDERS = new Set(BUILT_IN_EXCLUDES.filter((p) => p.endsWith("/")).map((p) => p.slice(0, -1)));
function skipFolder(_repoPath: string, name: string): boolean {
  return EXCLUDED_FOLDERS.has(name);
}

/** From this many staged paths on, a save builds its trees in this process (CheckpointLog.commit). */
const WHOLE_TREE_STAGED = 500;

export interface WorkspaceCheckpointsOptions {
  workspaceRoot: string;
  repoDir: string;
  env: NodeJS.ProcessEnv;
  sizeLimitBytes: number;
  lockStaleMs: number;
  /** How long a step waits for another process's repository lock before failing. */
  lockWaitMs: number;
  /**
   * Watch the workspace shortly after a task's completion (default true), so that the next
   * task's baseline and saves stage what the watcher saw change; and pack from a completion, not
   * between a task's turns (see save). False where the client stops the process after its
   * command (the CLI): the walk would only be begun to be closed, and its packing would only
   * add to the wait at its exit.
   */
  watchAfterCompletion?: boolean;
  logger: Logger;
  /** Asked under the lock before a task's checkpoint is written (see TaskDeletedError). */
  taskExists?: (taskId: string) => Promise<boolean>;
  /** The sidecar's running git processes (stopped with it). */
  children?: GitChildren;
}

/**
 * A checkpoint of a task that was deleted meanwhile (a restore or save racing the deletion,
 * maybe in another sidecar). The deletion removes the history row before it takes this lock to
 * remove the task's refs, so a writer that checks under the lock either sees the task gone or
 * finishes before the refs are removed: no ref of a deleted task is left behind.
 */
export class TaskDeletedError extends DlineError {
  constructor(readonly taskId: string) {
    super("not_found", `Task ${taskId} was deleted: no checkpoint is saved or restored for it.`);
  }
}

export interface SaveRequest {
  taskId: string;
  kind: CheckpointKind;
  messageId: string;
  editedPaths: readonly string[];
  /** Scan the workspace (baseline, a command ran, no recorded paths). */
  scan: boolean;
  /** A command ran this turn (the workspace is watched from then on). */
  commandRan?: boolean;
  /**
   * A turn whose calls of tools that may modify the workspace were all refused or denied before
   * running: like a completion, it reuses the newest snapshot when this process's scan and saves
   * vouch for it (see `unrecorded`), and scans otherwise.
   */
  nothingRan?: boolean;
  /** False for compaction checkpoints: no new snapshot. */
  hasFiles: boolean;
  /** Force a listing of ignored files (otherwise the last listing is carried over). */
  listIgnored?: boolean;
  /** A "before restore" checkpoint: the folders the restore will make again (CheckpointMeta). */
  foldersMadeAfter?: readonly string[];
  /** A "before restore" checkpoint: empty folders the restore will remove, recorded so that its undo makes them again. */
  foldersToRemove?: readonly string[];
  /** Set by the save after a command: the newest snapshot's tree it builds on (CheckpointMeta). */
  baseTree?: string;
}

/** Checkpoints a listing left out because their commits are missing, and the repository missing them. */
export interface UnreadableCheckpoints {
  ids: ReadonlySet<string>;
  gitDir: string;
}

/**
 * The checkpoints of one workspace: its shadow repository, behind one cross-process lock
 * (RecoveringLock: stale git locks, a damaged index or repository are recovered there).
 * Saves take the fast path (RecordedPathSaver) when editing tools recorded the paths and no
 * command ran, and otherwise stage (SnapshotStager) and commit the index (CheckpointLog).
 */
export class WorkspaceCheckpoints {
  readonly repo: ShadowRepo;
  readonly log: CheckpointLog;
  private readonly lock: RecoveringLock;
  private readonly stager: SnapshotStager;
  private readonly diff: SnapshotDiff;
  private readonly restorer: SnapshotRestore;
  private readonly fast: FastCommitter;
  private readonly recorded: RecordedPathSaver;
  private readonly editor: TreeEditor;
  private readonly captures: EditCaptures;
  private readonly packing: PackMaintenance;
  /** The repository's objects read without git (loose and packed). */
  private readonly objects: ObjectReader;
  /** Each task's newest checkpoint (what a tool's edit is compared with). */
  private readonly latest = new Map<string, { tree: string; createdAt: number }>();
  /** The last stamp given: checkpoint times and capture times strictly increase. */
  private lastStamp = 0;
  /** What the last full listing of ignored files found (carried into later checkpoints). */
  private lastIgnored: SkippedPath[] | undefined;
  /** The restores under way in this process, holding the lock (whileRestoring). */
  private readonly restoring = new InFlight();
  /** stop() has begun: no restore begins any more. */
  private stopping = false;
  /** The empty folders this process's saves record (learnEmptyFolders); undefined until known. */
  private emptyFolders: string[] | undefined;
  /** The files' permission bits this process's saves record (knowModes); undefined until known. */
  private modes: FileModes | undefined;
  /** Watches the workspace once a command ran (saves after commands then stage only what changed). */
  private watcher: WorkspaceWatcher | undefined;
  /** The watcher's walk: resolves once every folder is watched. */
  private watcherStarted: Promise<void> | undefined;
  /**
   * What the scan that put the watcher in step while a command ran listed (changed since HEAD):
   * the save after the command takes these with the watcher's changes (commandStarting).
   */
  private listedSinceHead: string[] = [];
  /** The walk and scan watchAndScan began, until they end. */
  private commandScan: Promise<void> | undefined;
  /** A command's watch, due once the command has run a while (commandStarting). */
  private pendingWatch: { cancel: () => void; done: Promise<void> } | undefined;
  /** Saves after a command this process made without the watcher (see saveLocked). */
  private commandsSaved = 0;
  /** The newest snapshot was scanned while the watcher watched: its changes since are all the watcher's. */
  private watchSynced = false;
  private watcherIdle: NodeJS.Timeout | undefined;
  /** Due to watch the workspace after a completion (watchOnceIdle). */
  private idleWatch: NodeJS.Timeout | undefined;
  /** The index's cached trees being written after a save (writeCachedTreesSoon). */
  private cachedTreesWrite: Promise<void> | undefined;
  /** Locks and temporary files killed processes left under refs/, being removed (removeRefLeftoversOnce). */
  private refLeftovers: Promise<void> | undefined;
  /** Tasks whose ref folders this process cleared of such leftovers. */
  private readonly refsCleared = new Set<string>();
  /** Where a damaged repository was moved, when it was rebuilt in this process. */
  rebuiltFrom: string | undefined;
  /** What this process last repaired in the repository (its index, its HEAD), as the status says it. */
  private repairNote: string | undefined;
  /** The files restore under way in this repository (restore-marker.ts). */
  private readonly restoreMarker: RestoreMarker;
  private opened = false;
  /** When prepare() last scanned; the save right after it (the baseline) need not scan again. */
  private freshScanAt = 0;
  private freshSizeSkips: SkippedPath[] = [];
  /** How many paths that scan staged, and which paths it listed. */
  private freshStaged = 0;
  private freshListed: string[] | undefined;
  /** A scan of this process brought the index and HEAD up to date with the workspace. */
  private scanned = false;
  /**
   * Tasks that started a tool that may modify the workspace, not known to be an edit (which
   * records its path) and not followed by a scan of theirs yet: a command cancelled before its
   * turn's save, for instance. While any is here, a completion scans.
   */
  private readonly unrecorded = new Set<string>();

  constructor(readonly options: WorkspaceCheckpointsOptions) {
    this.repo = new ShadowRepo(options.workspaceRoot, options.repoDir, options.env, options.children);
    this.log = new CheckpointLog(this.repo.git);
    this.restoreMarker = new RestoreMarker(this.repo.paths.gitDir);
    const objectsDir = path.join(this.repo.paths.gitDir, "objects");
    const packingLock = new PackingLock(this.repo.paths.packingLockTarget, options.lockStaleMs);
    this.packing = new PackMaintenance(this.repo.git, objectsDir, options.logger, packingLock);
    const leftovers = new WriteLeftovers(this.repo.git, objectsDir, packingLock, () => this.packing.settled());
    this.lock = new RecoveringLock(
      this.repo,
      options.lockStaleMs,
      options.lockWaitMs,
      options.logger,
      {
        indexDropped: (aside) => {
          this.repairNote = MESSAGES.indexRebuilt(aside);
          this.lastIgnored = undefined;
          this.scanned = false;
          this.watchSynced = false;
        },
        headRepaired: (kept) => {
          this.repairNote = MESSAGES.headRepaired(kept);
        },
        rebuilt: (aside) => {
          this.rebuiltFrom = aside;
          this.opened = false;
          this.lastIgnored = undefined;
          this.emptyFolders = undefined;
          this.modes = undefined;
          this.scanned = false;
        },
      },
      leftovers,
    );
    this.stager = new SnapshotStager(this.repo.git, options.workspaceRoot, options.sizeLimitBytes);
    this.diff = new SnapshotDiff(this.repo.git, options.workspaceRoot, options.sizeLimitBytes);
    this.fast = new FastCommitter(this.repo.git, this.repo.paths.gitDir);
    this.objects = new ObjectReader(objectsDir);
    this.editor = new TreeEditor(this.objects);
    this.recorded = new RecordedPathSaver(
      this.log,
      this.stager,
      this.fast,
      options.workspaceRoot,
      objectsDir,
      this.editor,
    );
    this.restorer = new SnapshotRestore(this.repo.git, options.workspaceRoot);
    this.captures = new EditCaptures(
      this.repo.git,
      this.log,
      this.objects,
      options.workspaceRoot,
      options.sizeLimitBytes * PREIMAGE_LIMIT_FACTOR,
    );
  }

  get workspaceRoot(): string {
    return this.options.workspaceRoot;
  }

  /** What the status says about damage this process found and recovered from; undefined when none. */
  /** Another process (window) that holds this repository's lock now, and since when. */
  lockHeldElsewhere(): { pid: number; since: number } | undefined {
    return this.lock.heldElsewhere();
  }

  recoveryNote(): string | undefined {
    if (this.rebuiltFrom) return MESSAGES.rebuilt(this.rebuiltFrom);
    const cut = this.restoreCutShort();
    return (
      this.repairNote ??
      (cut &&
        MESSAGES.restoreLeftPartWay(
          cut.taskId === undefined
            ? "a checkpoint"
            : restoreTargetName({ kind: cut.checkpointKind as CheckpointKind, createdAt: cut.checkpointCreatedAt }),
          cut.undoId,
        ))
    );
  }

  /** No restore is left part-way any more: the marker goes, and nothing is said of one. */
  private forgetCutRestore(): void {
    this.restoreMarker.clear();
  }

  /** A files restore another process left part-way (RestoreMarker.leftPartWayNow). */
  private restoreCutShort(): RestoreLeftPartWay | undefined {
    return this.restoreMarker.leftPartWayNow();
  }

  /** Opens (or creates) the repository and scans the whole workspace into its index. */
  async prepare(
    signal?: AbortSignal,
    onProgress?: (p: ScanProgress) => void,
    lockEvents?: LockWaitEvents,
  ): Promise<SkippedPath[]> {
    return this.lock.run(() => this.prepareLocked(signal, onProgress), true, lockEvents);
  }

  private async prepareLocked(signal?: AbortSignal, onProgress?: (p: ScanProgress) => void): Promise<SkippedPath[]> {
    // The scan below is git's first read of the repository: it finds any damage.
    await this.open(signal, true);
    // What the newest snapshot recorded as left out stands for this scan too: listing ignored
    // files walks the whole workspace again (a second walk at every process start). That
    // record is read while git status runs (started first: the scan is most of the wait).
    const scanning = this.stager.stageScan({
      listIgnored: async () => !leftOutRecordedBy((await headRead).meta),
      signal,
      onProgress,
      // Usually a task's baseline, which its first edits and model request do not wait for.
      background: true,
    });
    const headRead = this.headRecord(signal);
    // Awaited after the scan; a scan that fails first leaves it unawaited.
    headRead.catch(() => undefined);
    const scan = await scanning;
    const { skipped: scanned, staged, listed } = scan;
    const headRecord = await headRead;
    const head = headRecord.meta;
    const known = leftOutRecordedBy(head);
    const skipped = known ? [...scanned, ...known.filter((k) => !scanned.some((s) => s.path === k.path))] : scanned;
    this.adoptEmptyFolders(head);
    await this.walkEmptyFoldersIfUnknown(skipped, signal);
    await this.knowModes(headRecord, signal);
    await this.learnModes(scan, signal);
    this.freshStaged = staged;
    this.freshListed = listed;
    // HEAD is up to date only when the scan found nothing to take in; otherwise the save that
    // takes the scan's findings (the baseline) says so. A resumed task's process has no baseline
    // to take: its completion must scan, not reuse the snapshot from before what changed while
    // no sidecar ran (a command whose turn was never saved, the person's edits).
    this.scanned = listed !== undefined && listed.length === 0;
    this.rememberScan(skipped, true);
    this.freshScanAt = Date.now();
    this.freshSizeSkips = skipped.filter((x) => x.reason === "size");
    return skipped;
  }

  async save(req: SaveRequest, signal?: AbortSignal): Promise<CheckpointInfo> {
    const cp = await this.lock.run(async () => {
      await this.assertTaskExists(req.taskId);
      await this.open(signal);
      const saved = await this.saveLocked(req, signal);
      this.latest.set(req.taskId, { tree: saved.tree, createdAt: saved.createdAt });
      // The task whose restore was cut short went on (or any task, when the marker does not say
      // which): what it saved is how the files are now.
      const cut = this.restoreCutShort();
      if (cut && (cut.taskId ?? req.taskId) === req.taskId && req.kind !== "before_restore") this.forgetCutRestore();
      return saved;
    });
    // Outside the lock: no save waits for it (pack-maintenance.ts). In an editor's sidecar not
    // while the task runs on (its baseline and turns) but from its completion, while the person
    // reads. A CLI run's sidecar packs at once: the packing overlaps the task's later turns
    // rather than add to the wait at its exit.
    const midTask = req.kind === "baseline" || req.kind === "turn";
    this.packing.maybeStart({ midTask: midTask && this.options.watchAfterCompletion !== false });
    this.writeCachedTreesSoon();
    this.removeRefLeftoversOnce(req.taskId);
    if (req.kind === "completion") this.watchOnceIdle();
    return cp;
  }

  /**
   * After a save that staged paths, the index's cached trees are written under the lock (see
   * SnapshotStager.writeCachedTrees): after the save returned, before any later step under the
   * lock, and usually long before the next turn. A repository gone meanwhile is left alone.
   */
  private writeCachedTreesSoon(): void {
    if (this.cachedTreesWrite || !this.stager.cachedTreesStale) return;
    // While the watcher is in step no git status runs (saves take what it saw): the trees are
    // written when it closes (about 20 ms of git a task otherwise, beside the task's turns).
    if (this.watcher && this.watchSynced) return;
    const write = this.lock
      .read(
        async () => {
          if (await this.repo.exists()) await this.stager.writeCachedTrees();
        },
        () => undefined,
      )
      .catch((err: Error) =>
        this.options.logger.warn("writing the index's cached trees failed", { error: err.message }),
      )
      .finally(() => (this.cachedTreesWrite = undefined));
    this.cachedTreesWrite = write;
  }

  /**
   * Once per task and process, after its first save (so not on a task's way to its first edit):
   * what a killed git or process left (`*.lock`, our `*.tmp`) in the folders of the refs this
   * task's saves and restores write, and a killed fast-import's `.keep` (ShadowRepo.removeStaleKeeps),
   * under the lock. Not the whole of refs/, whose walk grows with
   * every task the workspace ever had; a lock git reports elsewhere clears it all (repo-recovery.ts).
   */
  private removeRefLeftoversOnce(taskId: string): void {
    if (this.refsCleared.has(taskId)) return;
    this.refsCleared.add(taskId);
    const folders = [SNAPSHOT_HEAD, restoredRef(taskId), capturesRef(taskId), taskRefPrefix(taskId)].map(refFolder);
    const clear = () =>
      this.lock.read(
        async () => {
          if (!(await this.repo.exists())) return;
          const removed = await this.repo.removeStaleLocks(folders);
          if (removed.length) this.options.logger.warn("removed stale git locks", { locks: removed.join(",") });
          const packs = this.repo.removeStaleKeeps();
          if (packs.length)
            this.options.logger.warn("removed what a killed fast-import left", { files: packs.join(",") });
        },
        () => undefined,
      );
    // After the clearing under way (idle() awaits the last one).
    this.refLeftovers = (this.refLeftovers ?? Promise.resolve())
      .then(clear)
      .catch((err: Error) => this.options.logger.warn("removing stale git locks failed", { error: err.message }));
  }

  /** Resolves when no background work (packing, the index's cached trees, stale ref locks) runs. */
  async idle(): Promise<void> {
    await this.pendingWatch?.done;
    await this.commandScan;
    await this.refLeftovers;
    await this.cachedTreesWrite;
    await this.packing.settled();
  }

  /** Background work of this repository ends (the process stops): packing gets `graceMs` to finish. */
  async stop(graceMs = 2000): Promise<void> {
    this.stopping = true;
    this.stopWatching();
    // A restore that has begun ends first: stopped part-way (its git killed), it left some files
    // restored and others not. The process's stop budget bounds the wait.
    await this.restoring.ended();
    await this.packing.stop(graceMs);
  }

  /**
   * Before a tool changes these files: each one the task's newest checkpoint does not hold
   * (left out by an exclusion, an ignore file, a skip limit, or not there yet) is captured as it
   * is now, so that no restore loses it (edit-captures.ts). Nothing is written for files the
   * checkpoint holds, the usual case.
   */
  async beforeEdit(taskId: string, paths: readonly string[]): Promise<void> {
    this.editStarting(taskId);
    const latest = await this.latestOf(taskId);
    if (!latest) return;
    const missing: string[] = [];
    for (const p of normalisePaths(this.workspaceRoot, paths))
      if (!(await this.entryIn(latest.tree, p))) missing.push(p);
    if (!missing.length) return;
    await this.lock.run(async () => {
      await this.assertTaskExists(taskId);
      await this.open();
      for (const p of missing) await this.captures.capture(taskId, p, this.stamp(), latest.createdAt);
    });
  }

  /** These paths as the repository names them (workspace-relative, `/`-separated). */
  repoPaths(paths: readonly string[]): string[] {
    return normalisePaths(this.workspaceRoot, paths);
  }

  /**
   * Whether the task's newest saved checkpoint holds each of these files (repository paths): an
   * edit of them then has nothing to capture (beforeEdit). False when the task has none yet.
   */
  async heldByNewest(taskId: string, repoPaths: readonly string[]): Promise<boolean> {
    const latest = await this.latestOf(taskId);
    if (!latest) return false;
    for (const p of repoPaths) if (!(await this.entryIn(latest.tree, p))) return false;
    return true;
  }

  /** The tool that started is an edit: its paths are recorded and saved by its turn (see `unrecorded`). */
  editStarting(taskId: string): void {
    this.unrecorded.delete(taskId);
  }

  private async latestOf(taskId: string): Promise<{ tree: string; createdAt: number } | undefined> {
    let latest = this.latest.get(taskId);
    if (!latest) {
      const cps = (await this.list(taskId)).filter((c) => c.hasFiles);
      const last = cps[cps.length - 1];
      if (last) this.latest.set(taskId, (latest = { tree: last.tree, createdAt: last.createdAt }));
    }
    return latest;
  }

  /** The task's captures as they speak of `target` (capturesAt: after which of its checkpoints a command ran). */
  private async capturesOf(taskId: string, target: CheckpointInfo): Promise<CaptureAt[]> {
    const captures = await this.captures.list(taskId);
    if (!captures.length) return [];
    const commandsAt = (await this.log.list(taskId)).filter((c) => c.commandRan).map((c) => c.createdAt);
    return capturesAt(captures, target.createdAt, commandsAt);
  }

  /** Those of `repoPaths` that a snapshot holds as files. */
  private async heldBy(tree: string, repoPaths: readonly string[]): Promise<string[]> {
    const held: string[] = [];
    for (const p of repoPaths) if (await this.entryIn(tree, p)) held.push(p);
    return held;
  }

  /** Whether a snapshot holds a file. */
  private async entryIn(tree: string, repoPath: string): Promise<boolean> {
    return (await this.entryOf(tree, repoPath)) !== undefined;
  }

  /**
   * A tool that may modify the workspace is starting for `taskId` (before we know whether it is
   * an edit, whose paths its turn records, or a command): until the task's next scan or edit,
   * completions scan the workspace.
   */
  toolStarting(taskId: string): void {
    this.unrecorded.add(taskId);
  }

  /** Milliseconds, strictly increasing within this process (a capture always follows the checkpoint before it). */
  private stamp(): number {
    this.lastStamp = Math.max(Date.now(), this.lastStamp + 1);
    return this.lastStamp;
  }

  /** One checkpoint; the caller holds the lock and opened the repository. */
  private async saveLocked(req: SaveRequest, signal?: AbortSignal): Promise<CheckpointInfo> {
    if (!this.emptyFolders || !this.modes) {
      const head = await this.headRecord(signal);
      this.adoptEmptyFolders(head.meta);
      await this.knowModes(head, signal);
    }
    // What a command changed is this save's tree against the one it builds on (restoreScope).
    if (req.commandRan && req.hasFiles) req = { ...req, baseTree: await this.log.headTree(signal) };
    // prepare() scanned the whole workspace a moment ago (the baseline right after it).
    const fresh = Date.now() - this.freshScanAt < 2000;
    this.freshScanAt = 0;
    // The files a save takes are looked at for their permission bits (file-modes.ts).
    if (req.hasFiles) await this.modes?.look(normalisePaths(this.workspaceRoot, req.editedPaths), signal);
    if (req.hasFiles && !req.scan && req.editedPaths.length) {
      const quick = await this.recorded.save(this.meta(req), req.editedPaths, this.lastIgnored ?? [], { signal });
      if (quick) return quick;
    }
    if (this.coveredBySaves(req)) {
      // Every change since this process's scan was saved by the turns (their tools recorded
      // the paths) and no command ran: the completion (or a turn whose tools did not run) is
      // the newest snapshot as it is.
      const quick = await this.recorded.save(this.meta(req), [], this.lastIgnored ?? [], { signal });
      if (quick) return quick;
    }
    if (req.hasFiles && req.scan && !fresh) {
      const watched = await this.saveWatched(req, signal);
      if (watched) {
        this.unrecorded.delete(req.taskId);
        return watched;
      }
      // A command ran before the watcher was in step (a short one, or the watch's walk and scan
      // had not ended): the scan below does not wait for the walk. A watch in place when it
      // starts is put in step by it. From a process's second command on (more are likely
      // then), the workspace is watched, and scanned once the walk has ended.
      if (req.commandRan) {
        this.pendingWatch?.cancel();
        if (++this.commandsSaved >= 2) this.watchAndScan();
      }
    }
    const skipped: SkippedPath[] = [];
    let tree: string | undefined;
    let staged = fresh ? this.freshStaged : 0;
    let listed = fresh ? this.freshListed : undefined;
    if (!req.hasFiles) {
      tree = await this.log.headTree(signal);
      tree ??= await this.log.emptyTree(signal);
    } else {
      if (req.editedPaths.length) skipped.push(...(await this.stager.stagePaths(req.editedPaths, signal)).skipped);
      // Without a scan, the index may lag the newest snapshot (fast commits): scan then too.
      if (!(fresh && !req.listIgnored)) {
        const listIgnored = !!req.listIgnored || this.lastIgnored === undefined;
        const { scan, watching } = await this.scanWorkspace(listIgnored, req.kind === "baseline", signal);
        this.watchSynced = watching;
        const scanned = scan.skipped;
        staged = scan.staged;
        listed = scan.listed;
        await this.learnModes(scan, signal);
        this.scanned = true;
        this.unrecorded.delete(req.taskId);
        await this.walkEmptyFoldersIfUnknown([...(this.lastIgnored ?? []), ...scanned], signal);
        skipped.push(...scanned.filter((s) => s.reason === "size"));
      } else {
        skipped.push(...this.freshSizeSkips);
        // This save takes in what prepare()'s scan found.
        this.scanned = true;
      }
      skipped.push(...(this.lastIgnored ?? []));
    }
    const edited = normalisePaths(this.workspaceRoot, req.editedPaths);
    if (req.hasFiles && listed && listed.length + edited.length < WHOLE_TREE_STAGED) {
      // The index's tree is HEAD's with the listed paths as they are now: built in this process
      // (RecordedPathSaver) instead of by write-tree, which reads the whole index.
      const quick = await this.recorded.save(
        this.meta(req),
        [...new Set([...listed, ...edited])],
        this.lastIgnored ?? [],
        { signal },
      );
      if (quick) return quick;
    }
    const unique = dedupeSkips(skipped);
    return this.log.commit(
      { ...this.meta(req), skipped: unique.slice(0, MAX_RECORDED_SKIPS), skippedTotal: unique.length },
      // A whole workspace staged (a baseline): its trees go into one pack instead of thousands of files.
      {
        tree,
        signal,
        packInto: staged >= WHOLE_TREE_STAGED ? path.join(this.repo.paths.gitDir, "objects") : undefined,
      },
    );
  }

  /**
   * A save after a command or at completion without a scan: the previous snapshot plus what the
   * watcher saw change since it (and the task's recorded paths), staged as a scan would. Undefined
   * when the watcher cannot vouch for that period (not started, not yet synced by a scan, an
   * overflow or error): the caller scans.
   */
  private async saveWatched(req: SaveRequest, signal?: AbortSignal): Promise<CheckpointInfo | undefined> {
    this.armWatcherIdleClose();
    if (!this.watcher || !this.watchSynced) return undefined;
    // The kernel queued the events of every write that finished before this save; a full turn of
    // the event loop (its poll phase reads them) delivers them before the set is taken. The first
    // immediate may run in the turn under way, whose poll phase is over: the second cannot.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    const changed = this.watcher.drain();
    const listed = this.listedSinceHead;
    this.listedSinceHead = [];
    const headTree = changed && (await this.log.headTree(signal));
    if (!changed || !headTree) {
      this.watchSynced = false;
      return undefined;
    }
    const paths = await pathsToStage(
      this.workspaceRoot,
      [...new Set([...changed, ...listed, ...normalisePaths(this.workspaceRoot, req.editedPaths)])],
      (p) => this.entryIn(headTree, p),
      (p) => this.stager.excludedNow(p, signal),
      skipFolder,
    );
    await this.modes?.look(paths, signal);
    const saved = await this.recorded.save(this.meta(req), paths, this.lastIgnored ?? [], { signal });
    if (!saved) this.watchSynced = false;
    return saved;
  }

  /** A completion, or a turn whose tools did not run, with nothing to scan for: see `unrecorded`. */
  private coveredBySaves(req: SaveRequest): boolean {
    return (
      (req.kind === "completion" || (req.kind === "turn" && !!req.nothingRan)) &&
      req.hasFiles &&
      !req.commandRan &&
      !req.editedPaths.length &&
      this.scanned &&
      this.unrecorded.size === 0
    );
  }

  /** Watches the workspace (once); resolves when every folder is watched. */
  private startWatching(): Promise<void> {
    if (!this.watcher) {
      const watcher = new WorkspaceWatcher(this.workspaceRoot, skipFolder);
      this.watcher = watcher;
      this.watcherStarted = watcher.start();
    }
    this.armWatcherIdleClose();
    return this.watcherStarted ?? Promise.resolve();
  }

  /**
   * A command is about to run. Once it has run a while (COMMAND_WATCH_DELAY_MS), the workspace
   * is watched and, when every folder is, scanned while the command runs, at a low priority: the
   * save after the command then stages what that scan listed and what the watcher saw change
   * since (saveWatched), instead of walking the workspace for the watch after the command and
   * scanning it. A command over sooner (`ls`, `cat`) is saved by a scan alone, which costs less
   * than the walk. Never throws.
   */
  commandStarting(): void {
    if (this.watcher) {
      this.armWatcherIdleClose();
      return;
    }
    if (this.pendingWatch) return;
    let timer: NodeJS.Timeout | undefined;
    let settle: (due: boolean) => void = () => undefined;
    const due = new Promise<boolean>((resolve) => {
      settle = resolve;
      timer = setTimeout(() => resolve(true), COMMAND_WATCH_DELAY_MS);
    });
    const pending = {
      cancel: () => {
        clearTimeout(timer);
        settle(false);
      },
      done: due.then((started) => {
        if (this.pendingWatch === pending) this.pendingWatch = undefined;
        if (started) this.watchAndScan();
      }),
    };
    this.pendingWatch = pending;
  }

  /**
   * Watches the workspace and, once every folder is, scans it under the lock to put the watcher
   * in step (scanForWatcher), in the background. Never throws.
   */
  private watchAndScan(): void {
    if (this.commandScan || (this.watcher && this.watchSynced)) return;
    const scan = this.startWatching()
      .then(() =>
        this.lock.read(
          () => this.scanForWatcher(),
          () => undefined,
        ),
      )
      .catch((err: Error) =>
        this.options.logger.warn("scanning for the workspace watcher failed", { error: err.message }),
      )
      .finally(() => {
        if (this.commandScan === scan) this.commandScan = undefined;
      });
    this.commandScan = scan;
  }

  /** Under the lock: the scan that puts a watcher whose walk has ended in step (commandStarting). */
  private async scanForWatcher(): Promise<void> {
    const watcher = this.watcher;
    if (!watcher?.trustworthy || this.watchSynced) return;
    await this.open();
    const { scan, watching } = await this.scanWorkspace(this.lastIgnored === undefined, true);
    // Past that many paths the save writes the index's tree instead: it scans again, as before.
    if (!scan.listed || scan.listed.length >= WHOLE_TREE_STAGED) return;
    this.listedSinceHead = scan.listed;
    this.watchSynced = watching && this.watcher === watcher && watcher.trustworthy;
  }

  /**
   * Under the lock: `git status` and the staging of what it listed (SnapshotStager.stageScan).
   * `watching`: the watcher was in place when it began, so its changes since add to this scan's.
   */
  private async scanWorkspace(
    listIgnored: boolean,
    background: boolean,
    signal?: AbortSignal,
  ): Promise<{ scan: StageResult; watching: boolean }> {
    // LFS patterns may have changed since the repository was opened.
    writeExcludeFile(this.repo.paths.gitDir, readLfsPatterns(this.workspaceRoot));
    const watching = this.watcher?.trustworthy ?? false;
    this.watcher?.resync();
    // What an earlier scan listed and no save took yet: this scan lists it again.
    this.listedSinceHead = [];
    const scan = await this.stager.stageScan({ listIgnored, signal, background });
    this.rememberScan(scan.skipped, listIgnored);
    return { scan, watching };
  }

  /** See WATCH_AFTER_COMPLETION_MS. The timer never keeps the process alive. */
  private watchOnceIdle(): void {
    if (this.options.watchAfterCompletion === false || this.watcher || this.idleWatch) return;
    this.idleWatch = setTimeout(() => {
      this.idleWatch = undefined;
      this.watchAndScan();
    }, WATCH_AFTER_COMPLETION_MS);
    this.idleWatch.unref?.();
  }

  /** A watcher no save used for a while is closed (its folders are watched again at the next command). */
  private armWatcherIdleClose(): void {
    if (!this.watcher) return;
    clearTimeout(this.watcherIdle);
    this.watcherIdle = setTimeout(() => {
      this.stopWatching();
      // The next scan is a git status again: what the saves staged meanwhile gets its trees.
      if (!this.stopping) this.writeCachedTreesSoon();
    }, WATCHER_IDLE_MS);
    this.watcherIdle.unref?.();
  }

  private stopWatching(): void {
    clearTimeout(this.watcherIdle);
    clearTimeout(this.idleWatch);
    this.idleWatch = undefined;
    this.pendingWatch?.cancel();
    this.watcher?.close();
    this.watcher = undefined;
    this.watcherStarted = undefined;
    this.listedSinceHead = [];
    this.watchSynced = false;
  }

  private meta(req: SaveRequest): BaseMeta {
    const repoHead = readRepositoryHead(this.workspaceRoot);
    return {
      v: 1,
      task: req.taskId,
      kind: req.kind,
      createdAt: this.stamp(),
      messageId: req.messageId,
      hasFiles: req.hasFiles,
      edited: normalisePaths(this.workspaceRoot, req.editedPaths),
      ...(req.commandRan ? { commandRan: true } : {}),
      ...(req.commandRan && req.baseTree ? { baseTree: req.baseTree } : {}),
      // As they are now: a restore to this checkpoint makes the listed folders that are gone again.
      ...(this.emptyFolders
        ? {
            emptyFolders: [
              ...new Set([...stillFolders(this.workspaceRoot, this.emptyFolders), ...(req.foldersToRemove ?? [])]),
            ].sort(),
          }
        : {}),
      ...(req.foldersMadeAfter?.length ? { foldersMadeAfter: [...req.foldersMadeAfter] } : {}),
      // As they are now, of the files the saves learned of: a restore that makes one again gives it these.
      ...(this.modes ? { modes: this.modes.record() } : {}),
      ...(repoHead ? { repoHead } : {}),
    };
  }

  /** What a restore to `cp` says of the person's repository: "" unless its HEAD moved since (repo-head.ts). */
  repositoryMovedSince(cp: CheckpointInfo): string {
    const then = cp.repoHead;
    const valid = then && typeof then.ref === "string" && typeof then.id === "string" ? then : undefined;
    return repositoryMovedNote(valid, readRepositoryHead(this.workspaceRoot));
  }

  /**
   * Delete Everything: once operations under way on this repository have ended, it is moved to
   * `trash` (in the same folder, so the move is atomic); operations after that find no
   * repository. The caller removes the trash.
   */
  async moveAway(trash: string): Promise<void> {
    this.stopWatching();
    await this.packing.stop(0);
    await this.lock.read(
      () => fs.rename(this.repo.paths.repoDir, trash),
      () => undefined,
    );
  }

  /** A task's checkpoints; none when the repository does not exist (it is not created to say so). */
  async list(taskId: string): Promise<CheckpointInfo[]> {
    return this.lock.readOnly(
      async () => {
        await this.open();
        return this.log.list(taskId);
      },
      () => [],
    );
  }

  /**
   * Whether undoing the restore to `target` (whose undo point is `undoPoint`) would write over
   * what a checkpoint saved since recorded: another task's edits of files the undo puts back
   * (found through ACP: the undo wrote over them without a word). The newest snapshot is looked
   * at: still what the restore left (the undo point, the target after a reset, or the snapshot
   * it made after restoring paths), or, at each path the undo writes, holding what the restore
   * wrote or what the undo puts back, it records nothing the undo would lose. A task that changed
   * nothing there since (its baseline, a rejected edit) leaves the undo offered.
   */
  async undoWouldOverwriteLaterSaves(target: CheckpointInfo, undoPoint: CheckpointInfo): Promise<boolean> {
    return this.lock.readOnly(
      async () => {
        await this.open();
        const head = await this.log.resolveRef(SNAPSHOT_HEAD);
        if (!head || head === undoPoint.id || head === target.id) return false;
        const body = await this.commitBody(head);
        const start = body.indexOf("\n\n");
        if (start >= 0 && body.slice(start + 2).split("\n", 1)[0] === afterRestoreSubject(target.id)) return false;
        const headTree = /^tree ([0-9a-f]{40})\n/.exec(body)?.[1];
        if (!headTree) return false;
        // A reset's undo puts back every file: any change saved since is in its way.
        if (!undoPoint.edited.length) return headTree !== target.tree && headTree !== undoPoint.tree;
        if (undoPoint.edited.length > UNDO_PATHS_LOOKED_AT) return true;
        for (const p of undoPoint.edited) {
          const now = (await this.entryOf(headTree, p))?.id;
          if (now !== (await this.entryOf(target.tree, p))?.id && now !== (await this.entryOf(undoPoint.tree, p))?.id)
            return true;
        }
        return false;
      },
      () => false,
    );
  }

  /** A commit's text, read without git where its object can be ("" when it cannot be read). */
  private async commitBody(id: string, signal?: AbortSignal): Promise<string> {
    const object = this.objects.read(id);
    if (object?.type === "commit") return object.body.toString("utf8");
    return this.repo.git.text(["cat-file", "commit", id], { signal }).catch(() => "");
  }

  /** A file's entry in a snapshot: from remembered or loose trees, else asked of git. */
  private async entryOf(tree: string, repoPath: string): Promise<{ mode: string; id: string } | undefined> {
    try {
      return this.editor.entryAt(tree, repoPath);
    } catch (err) {
      if (!(err instanceof TreeUnavailable)) throw err;
      const line = await this.repo.git.text(["ls-tree", "-z", tree, "--", repoPath]);
      const match = /^(\d+) blob ([0-9a-f]{40})\t/.exec(line);
      return match ? { mode: match[1]!, id: match[2]! } : undefined;
    }
  }

  async restoredMarker(taskId: string): Promise<string | undefined> {
    return this.lock.readOnly(
      async () => {
        await this.open();
        return this.log.restoredMarker(taskId);
      },
      () => undefined,
    );
  }

  /** The checkpoint against the current workspace ("Changes since snapshot"). */
  async compare(taskId: string, target: CheckpointInfo): Promise<FileChange[]> {
    return this.lock.query(() =>
      this.needingObjectsOf(taskId, target, async () => {
        await this.open();
        await this.stager.stageScan({ listIgnored: false });
        const changes = await this.correctAdded(
          taskId,
          target,
          Infinity,
          await this.diff.againstWorkspace(target.id, target.modes),
        );
        return [...changes, ...(await this.leftOutEdits(taskId, target, changes))];
      }),
    );
  }

  /**
   * Runs `fn`, which needs `target`'s objects: when git finds damage and some of them are
   * missing, it fails with `data_loss` naming the checkpoint (the repository is not set aside
   * for it: the other checkpoints may be whole).
   */
  private async needingObjectsOf<T>(taskId: string, target: CheckpointInfo, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (looksCorrupt(err) && (await objectsMissing(this.repo.git, target.id))) {
        throw new DlineError("data_loss", MESSAGES.checkpointUnreadable(target.id, taskId, this.repo.paths.gitDir), {
          cause: err,
        });
      }
      throw err;
    }
  }

  /** The checkpoints of `taskId` the last listing left out because their commits are missing. */
  unreadable(taskId: string): UnreadableCheckpoints {
    return { ids: this.log.unreadable(taskId), gitDir: this.repo.paths.gitDir };
  }

  /**
   * Files the task's tools changed or made that the snapshots leave out altogether (inside a
   * nested repository), so the diff cannot list them: from what they were at `from` (their
   * pre-images; made by the task: added, as a restore deletes them) to what they were at `to`
   * (the capture taken after it) or, without `to` or such a capture, to the workspace's file now.
   * The files a diff lists are already there.
   */
  private async leftOutEdits(
    taskId: string,
    from: CheckpointInfo,
    listed: FileChange[],
    to?: CheckpointInfo,
  ): Promise<FileChange[]> {
    const captures = await this.capturesOf(taskId, from);
    // As they speak of `to` (a pre-image a command may have changed since `to` tells nothing of it).
    const capturesThen = to ? await this.capturesOf(taskId, to) : [];
    const shown = new Set(listed.map((c) => c.path));
    const side = (c: CaptureAt | undefined): PreimageSide | undefined =>
      c?.kind === "created"
        ? { created: true }
        : c?.kind === "preimage"
          ? { blob: c.id }
          : c?.kind === "too_large"
            ? {}
            : undefined;
    const entries = [...new Set(captures.map((c) => c.path))]
      .filter((p) => !shown.has(p))
      .flatMap((p): PreimageEntry[] => {
        const first = captureAfter(captures, p, from.createdAt);
        // Changed by a tool after `to` only: not a change between the two.
        if (to && first && first.at > to.createdAt) return [];
        // Not one changed since the checkpoint before its capture (what it was then is unknown:
        // the look for left-out changes names it).
        const before = side(first);
        if (!before) return [];
        const next = to && captureAfter(capturesThen, p, to.createdAt);
        if (!next) return [{ path: p, before }];
        const later = side(next);
        return later ? [{ path: p, before, later }] : [];
      });
    return entries.length ? this.diff.againstPreimages(entries) : [];
  }

  async between(taskId: string, from: CheckpointInfo, to: CheckpointInfo): Promise<FileChange[]> {
    return this.lock.run(async () => {
      await this.open();
      const changes = await this.correctAdded(
        taskId,
        from,
        to.createdAt,
        await this.diff.betweenCommits(from.id, to.id, from.modes, to.modes),
      );
      return [...changes, ...(await this.leftOutEdits(taskId, from, changes, to))];
    });
  }

  /**
   * A file absent from the earlier checkpoint is "added" only when the task created it: one that
   * existed but was left out is "modified", with its pre-image as "before" when one was taken,
   * or marked not tracked (its earlier content is unknown).
   */
  private async correctAdded(
    taskId: string,
    from: CheckpointInfo,
    until: number,
    changes: FileChange[],
  ): Promise<FileChange[]> {
    const added = changes.filter((c) => c.status === "added");
    if (!added.length) return changes;
    const captures = (await this.capturesOf(taskId, from)).filter((c) => c.at <= until);
    const unknownThen = (p: string) => {
      const kind = captureAfter(captures, p, from.createdAt)?.kind;
      return kind === undefined || kind === "changed_since";
    };
    const undecided = added.filter((c) => unknownThen(c.path) && !leftOutBy(from.skipped, c.path)).map((c) => c.path);
    const excluded =
      undecided.length && skipListTruncated(from) ? await this.stager.excludedNow(undecided) : new Set<string>();
    const preimages = new Map<string, string>();
    for (const c of added) {
      const capture = captureAfter(captures, c.path, from.createdAt);
      if (capture?.kind === "preimage") preimages.set(c.path, capture.id!);
    }
    // An "added" file that holds its pre-image's content again (written back, or restored) did
    // not change: it is not listed, as a file the checkpoint holds would not be.
    const unchanged = (c: FileChange) =>
      c.status === "added" && c.afterBlob !== undefined && c.afterBlob === preimages.get(c.path);
    // One the checkpoint left out and nothing wrote since (a command that un-ignored its folder
    // made a later scan take it in as it was): not changed either.
    const untouchedLeftOut = (c: FileChange) =>
      c.status === "added" &&
      captureAfter(captures, c.path, from.createdAt) === undefined &&
      (leftOutBy(from.skipped, c.path) || excluded.has(c.path)) &&
      unchangedOnDiskSince(this.workspaceRoot, c.path, from.createdAt);
    const listed = changes.filter((c) => !unchanged(c) && !untouchedLeftOut(c));
    const before = await this.diff.blobTexts(listed.flatMap((c) => preimages.get(c.path) ?? []));
    return listed.map((c) => {
      if (c.status !== "added") return c;
      const capture = captureAfter(captures, c.path, from.createdAt);
      if (capture?.kind === "created") return c;
      if (capture?.kind === "preimage") return this.diff.withBefore(c, before.get(capture.id!));
      if (capture?.kind === "too_large")
        return { ...c, status: "modified", before: "", tooLarge: true, tooLargeToKeep: true };
      if (leftOutBy(from.skipped, c.path) || excluded.has(c.path))
        return { ...c, status: "modified", before: "", notTracked: true };
      return c;
    });
  }

  /**
   * Restores files to `target` for `taskId`: saves the "before restore" checkpoint first, then
   * applies the recorded-paths rule or `reset --hard` semantics, then sets the restored marker.
   * `commandSaves`: the task's saves after a command since `target`: what they took in comes
   * back too, not only the paths the editing tools recorded (restoreScope). `aloneCheck`: throws
   * when another task runs in the workspace, asked once the lock is held.
   */
  async restoreFiles(
    taskId: string,
    target: CheckpointInfo,
    recordedPaths: readonly string[],
    options: {
      commandSaves?: readonly CommandSave[];
      leftOutSince?: LaterSkips;
      aloneCheck?: () => Promise<void>;
    } = {},
  ): Promise<FileRestoreResult & { undo: CheckpointInfo; keptIncomplete: boolean }> {
    // Said from the moment its undo checkpoint is on disk until the restore ends: killed before
    // that, no file was touched and there is nothing to say; after, the next process names
    // the undo checkpoint that puts the files back.
    const writing = (undo: CheckpointInfo) =>
      this.restoreMarker.begin({
        taskId,
        checkpointKind: target.kind,
        checkpointCreatedAt: target.createdAt,
        undoId: undo.id,
        pid: process.pid,
        startedAt: Date.now(),
      });
    const restore = async () => {
      await this.assertTaskExists(taskId);
      // Asked again under the lock: a task started in another window since the caller asked
      // waits for this restore before its first edit (keepForBaseline).
      await options.aloneCheck?.();
      await this.open();
      // The undo checkpoint records the files' bits and the empty folders too (a restore may be a
      // process's first step): undoing the undo makes those folders again.
      if (!this.modes || !this.emptyFolders) {
        const head = await this.headRecord();
        await this.knowModes(head);
        this.adoptEmptyFolders(head.meta);
        // The snapshot a path restore leaves carries no list: the workspace is walked.
        await this.walkEmptyFoldersIfUnknown(target.skipped);
      }
      // Looked at before any file is touched: what the checkpoints left out and a command (or
      // the person) changed since stays as it is, and the answer names it.
      const leftOut = await this.lookForLeftOutChanges(target, options.leftOutSince);
      const recorded = await this.scopeOf(recordedPaths, options);
      // A command may have deleted one of the person's empty folders: it comes back. Only a
      // command deletes folders (an editing tool never does), and a restore of tool edits alone
      // leaves what the person did since as it is. The undo checkpoint names the folders made.
      // Undoing a restore makes again the empty folders it removed (the undo checkpoint records them).
      const remakeFolders = !recorded || !!options.commandSaves?.length || target.kind === "before_restore";
      const foldersMadeAfter = remakeFolders ? foldersToMake(this.workspaceRoot, target.emptyFolders ?? []) : [];
      // And empty folders a command made since go (`mkdir newempty`: before, they stayed, while a
      // folder a command made and filled went with its files).
      const foldersToRemove =
        remakeFolders && target.kind !== "before_restore" ? await this.emptyFoldersMadeSince(target) : [];
      let result: FileRestoreResult & { undo: CheckpointInfo };
      if (recorded) {
        await this.modes?.look(recorded);
        const undoReq: SaveRequest = {
          taskId,
          kind: "before_restore",
          messageId: target.messageId,
          editedPaths: recorded,
          scan: false,
          hasFiles: true,
          foldersMadeAfter,
          foldersToRemove,
        };
        result = await restoreRecordedPaths(
          {
            fast: this.fast,
            recorded: this.recorded,
            restorer: this.restorer,
            excludedNow: (paths) => this.stager.excludedNow(paths),
            saveUndoSlowly: () => this.saveLocked(undoReq),
            keepCurrent: (undoCreatedAt) => this.keepCurrent(taskId, undoCreatedAt),
            modesAfter: async (written) => {
              await this.modes?.look(written.restored);
              return this.modes?.record();
            },
            writing,
          },
          target,
          recorded,
          await this.capturesOf(taskId, target),
          this.meta(undoReq),
          this.lastIgnored ?? [],
        );
      } else {
        // reset --hard semantics touch every tracked file: the undo point scans the workspace.
        const undo = await this.saveLocked({
          taskId,
          kind: "before_restore",
          messageId: target.messageId,
          editedPaths: [],
          scan: true,
          hasFiles: true,
          foldersMadeAfter,
          foldersToRemove,
        });
        writing(undo);
        const reset = await this.restorer
          .resetHard(target, undo.id, await this.capturesOf(taskId, target), this.keepCurrent(taskId, undo.createdAt))
          .catch((err: unknown) => {
            throw err instanceof RestoreStopped ? stoppedPartWay(err, undo.id) : err;
          });
        result = { ...reset, undo };
        await this.log.moveHead(target.id, target.tree);
        // HEAD's record is the target's; this process's later saves know what was written too.
        await this.modes?.look(reset.restored);
      }
      // Made again, they are the person's empty folders for this process's later saves too.
      if (remakeFolders) this.noteEmptyFolders(makeMissingFolders(this.workspaceRoot, target.emptyFolders ?? []));
      removeFoldersMadeSince(this.workspaceRoot, foldersToRemove, target.createdAt, target.emptyFolders ?? []);
      // Undoing a restore: the folders it made go again, unless something was put in them since.
      if (target.kind === "before_restore") removeEmptyFolders(this.workspaceRoot, target.foldersMadeAfter ?? []);
      this.latest.set(taskId, { tree: result.undo.tree, createdAt: result.undo.createdAt });
      await this.log.setRestoredMarker(taskId, target.id);
      // A planned path it did not write is as the checkpoint has it (entries: every planned path).
      const kept = withLeftOutChanges(this.workspaceRoot, result, leftOut, result.entries.keys());
      return { ...result, kept, keptIncomplete: leftOut.cut };
    };
    // Cleared when it ends, however it ends: a process stopped part-way leaves the marker (begun
    // by `writing`) for the next one.
    const marked = async () => {
      try {
        return await restore();
      } finally {
        this.forgetCutRestore();
      }
    };
    return this.lock.run(() => this.whileRestoring(() => this.needingObjectsOf(taskId, target, marked)), false);
  }

  /**
   * Notes a restore under way (holding the lock) until it ends: stop() waits for it. One that
   * gets the lock once the process is stopping does not begin: its git would be killed part-way.
   */
  private whileRestoring<T>(run: () => Promise<T>): Promise<T> {
    if (this.stopping)
      return Promise.reject(new DlineError("unavailable", "The Dline core is stopping: nothing was restored."));
    return this.restoring.track(run());
  }

  /**
   * Of these repository paths, the files too large now for a pre-image (and so for any
   * snapshot): a restore leaves them as they are rather than write over or delete them
   * (KeepCurrent), and a dry run says so.
   */
  tooLargeForPreimage(paths: readonly string[]): Set<string> {
    const limit = this.options.sizeLimitBytes * PREIMAGE_LIMIT_FACTOR;
    return new Set(
      paths.filter((p) => {
        const st = lstatIfPresent(toAbsolute(this.workspaceRoot, p));
        return !!st && st.isFile() && st.size > limit;
      }),
    );
  }

  /**
   * Pre-images, taken after the undo checkpoint of `createdAt`, of files a restore is about to
   * write over or delete that the undo checkpoint does not hold (snapshot-restore.ts KeepCurrent).
   */
  private keepCurrent(taskId: string, createdAt: number): KeepCurrent {
    return async (paths) => {
      if (!paths.length) return new Set();
      const taken = await this.captures.captureAll(taskId, paths, this.stamp(), createdAt);
      return new Set(taken.filter((c) => c.kind === "too_large").map((c) => c.path));
    };
  }

  /**
   * What a file restore to `target` would leave as it is and name now (a dry run's answer): what
   * the checkpoints left out (`leftOutSince`: the skip lists of the checkpoints saved after it)
   * and was changed since. Nothing is written.
   */
  async leftOutChanges(target: CheckpointInfo, leftOutSince?: LaterSkips): Promise<LeftOutLook> {
    return this.lock.query(async () => {
      await this.open();
      return this.lookForLeftOutChanges(target, leftOutSince);
    });
  }

  /**
   * Compare's rows for what the checkpoints left out and was changed since `target` (the
   * restore's look, `leftOutChanges`): not tracked. Paths Compare shows already (`listed`) and
   * those the task's pre-images hold as they were then (Compare shows them against those, when
   * they differ) are left to it.
   */
  async notTrackedSince(
    taskId: string,
    target: CheckpointInfo,
    leftOutSince: LaterSkips,
    listed: ReadonlySet<string>,
  ): Promise<FileChange[]> {
    const look = await this.leftOutChanges(target, leftOutSince);
    const captures = await this.capturesOf(taskId, target);
    // Compare shows these against their pre-images (leftOutEdits), or as the task's new files.
    const captured = [...new Set(captures.map((c) => c.path))].filter((p) => {
      const kind = captureAfter(captures, p, target.createdAt)?.kind;
      return kind !== undefined && kind !== "changed_since";
    });
    // A file the checkpoint holds (a tool's pre-image taken into the baseline) is compared by the diff.
    const held = await this.heldBy(
      target.tree,
      look.changed.map((k) => k.path).filter((p) => !p.endsWith("/")),
    );
    // A file a tool had changed (or made) by the checkpoint was there then, whatever its birth time now.
    const there = new Set(captures.filter((c) => c.at <= target.createdAt).map((c) => c.path));
    return notTrackedChanges(
      this.workspaceRoot,
      look,
      target.createdAt,
      new Set([...listed, ...captured, ...held]),
      there,
    );
  }

  private async lookForLeftOutChanges(
    target: CheckpointInfo,
    leftOutSince: LaterSkips = { skipped: [], cut: skipListTruncated(target) },
  ): Promise<LeftOutLook> {
    // A command of the task after the target may have made left-out files deeper than the top
    // folder that no skip list names (`gen/out/a.txt`, `packages/x/dist/`): the left-out paths
    // of the workspace now are looked at too (one walk; only then). Those not changed since are not named.
    const now = leftOutSince.commandRan
      ? (await this.stager.ignoredNow()).map((p): SkippedPath => ({ path: p.replace(/\/$/, ""), reason: "ignored" }))
      : [];
    const look = await leftOutChangedAfter(
      this.workspaceRoot,
      target,
      dedupeSkips([...target.skipped, ...leftOutSince.skipped, ...now]),
      (paths) => this.stager.excludedNow(paths),
      this.topLevelNames(target.tree),
    );
    if (look.cut) this.options.logger.info("restore: the look for left-out changes stopped at its limit");
    // A cut skip list does not name every left-out file: a change to one it leaves out may go unnamed.
    return leftOutSince.cut ? { ...look, cut: true } : look;
  }

  /**
   * What a file restore may change, by the restore rules: the paths the task's
   * editing tools recorded and, when commands of the task ran after the target, what the saves
   * after them took in (not what another task or the person changed since, which the workspace's
   * newest snapshot also holds); undefined when the task recorded no edit and ran no command
   * after the target, and the restore resets every tracked file.
   */
  async restoreScope(
    recordedPaths: readonly string[],
    options: { commandSaves?: readonly CommandSave[] } = {},
  ): Promise<ReadonlySet<string> | undefined> {
    const scope = await this.lock.query(async () => {
      await this.open();
      return this.scopeOf(recordedPaths, options);
    });
    return scope && new Set(scope);
  }

  /**
   * restoreScope's paths; undefined when the task recorded no edit and ran no command after the
   * target. A task whose commands alone changed files is restored by what they changed: it was
   * reset in full, which put back the person's edits made after the task too (and a branch they
   * switched to since).
   */
  private async scopeOf(
    recordedPaths: readonly string[],
    options: { commandSaves?: readonly CommandSave[] },
  ): Promise<string[] | undefined> {
    const recorded = normalisePaths(this.workspaceRoot, recordedPaths);
    if (!options.commandSaves?.length) return recorded.length ? recorded : undefined;
    // A save whose base is unreadable (its objects lost): what changed since the target instead,
    // a wider scope (the person's edits before the command too) but never the later ones.
    const changed = await Promise.all(
      options.commandSaves.map((s) =>
        this.changedBetween(s.before, s.after).catch(() => this.changedBetween(s.target, s.after)),
      ),
    );
    return [...new Set([...recorded, ...changed.flat()])];
  }

  /** Paths whose entries differ between two snapshots: read in this process, else asked of git. */
  private async changedBetween(before: string, after: string): Promise<string[]> {
    try {
      return changedPaths((id) => this.editor.readTree(id), before, after);
    } catch (err) {
      if (!(err instanceof TreeUnavailable)) throw err;
      const out = await this.repo.git.text(["diff-tree", "-r", "-z", "--name-only", "--no-renames", before, after]);
      return out.split("\0").filter(Boolean);
    }
  }

  private async assertTaskExists(taskId: string): Promise<void> {
    if (this.options.taskExists && !(await this.options.taskExists(taskId))) throw new TaskDeletedError(taskId);
  }

  /** Removes the refs of one task; its objects go at the next collectGarbage. */
  async deleteTask(taskId: string): Promise<void> {
    await this.lock.run(async () => {
      if (!(await this.repo.exists())) return;
      await this.open();
      this.unrecorded.delete(taskId);
      const refs = (await this.log.list(taskId)).map((c) => c.ref);
      const marker = await this.log.restoredMarker(taskId);
      const captured = await this.log.resolveRef(capturesRef(taskId));
      await this.log.deleteRefs([
        ...refs,
        ...(marker ? [`refs/dline/restored/${taskId}`] : []),
        ...(captured ? [capturesRef(taskId)] : []),
      ]);
      this.latest.delete(taskId);
    });
  }

  /**
   * Drops every object no ref reaches: loose ones, and those in the packs turn saves write
   * (one each), which a full repack folds together. Run once after a batch of deletions.
   */
  async collectGarbage(): Promise<void> {
    await this.lock.read(
      async () => {
        if (!(await this.repo.exists())) return;
        // Pruning now while a background repack writes its pack would only fail it; let it end first.
        await this.packing.settled();
        const gc = () => this.repo.git.command(["gc", "--prune=now", "--quiet"]);
        const prune = () => this.repo.git.command(["prune", "--expire=now"]);
        try {
          await gc();
          return;
        } catch {
          // gc writes a new pack of everything kept before it removes anything: on a full disk
          // it fails, leaving its half-written pack. What can go by deleting alone goes then
          // (that pack, unreachable loose objects and loose copies of packed ones, the packs
          // nothing in is reachable from), which is room given back; then gc once more.
        }
        await prune();
        await removeUnreachablePacks(this.repo.git, path.join(this.repo.paths.gitDir, "objects"));
        try {
          await gc();
        } catch (err) {
          await prune().catch(() => undefined);
          throw err;
        }
      },
      () => undefined,
    );
  }

  /**
   * Keeps the objects under `budgetBytes` (see checkpoint-budget.ts); returns the ids removed.
   * Under budget by the sizes of the object files (the usual case, checked at every task's end)
   * it takes neither the lock nor a git process.
   */
  async enforceBudget(budgetBytes: number, stateOf: (taskId: string) => Promise<TaskState>): Promise<string[]> {
    if (objectFileBytes(path.join(this.repo.paths.gitDir, "objects")) <= budgetBytes) return [];
    return this.lock.run(async () => {
      await this.open();
      return enforceBudget(this.repo, this.log, budgetBytes, stateOf);
    });
  }

  /**
   * The newest snapshot: whether there is one, its record if it is a checkpoint's, and the
   * files' bits it recorded (a checkpoint's, or those the snapshot after a path restore carries).
   */
  private async headRecord(signal?: AbortSignal): Promise<HeadRecord> {
    const head = await this.log.resolveRef(SNAPSHOT_HEAD, signal);
    if (!head) return { exists: false };
    const body = await this.commitBody(head, signal);
    // Its tree, known from here on: saves build on HEAD without asking git for it.
    const tree = /^tree ([0-9a-f]{40})\n/.exec(body)?.[1];
    if (tree) this.log.noteHead(head, tree);
    return { exists: true, meta: decodeMessage(body), modes: modesIn(body) };
  }

  /**
   * The files' bits this process's saves record start from the newest snapshot's record. A
   * workspace with no snapshot learns them from its first scan, which looks at every file; one
   * whose newest snapshot has no record (saved by an earlier version) looks at every file of the
   * index once (a synchronous lstat each, in slices).
   */
  private async knowModes(head: HeadRecord, signal?: AbortSignal): Promise<void> {
    if (this.modes) return;
    const modes = new FileModes(this.workspaceRoot);
    if (head.modes) modes.adopt(head.modes);
    else if (head.exists) await modes.look(splitNul(await this.repo.git.text(["ls-files", "-z"], { signal })), signal);
    this.modes = modes;
  }

  /** What a scan found of the files' bits (file-modes.ts); the files it listed without looking at them are looked at. */
  private async learnModes(scan: StageResult, signal?: AbortSignal): Promise<void> {
    this.modes?.learn(scan.checked ?? [], scan.modes ?? new Map());
    await this.modes?.look(scan.notLooked ?? [], signal);
  }

  /** The empty folders this process's saves record: the newest snapshot's list, less those gone since. */
  private adoptEmptyFolders(head: CheckpointMeta | undefined): void {
    if (!this.emptyFolders && head?.emptyFolders)
      this.emptyFolders = stillFolders(this.workspaceRoot, head.emptyFolders);
  }

  private noteEmptyFolders(made: readonly string[]): void {
    if (this.emptyFolders && made.length) this.emptyFolders = [...new Set([...this.emptyFolders, ...made])].sort();
  }

  /**
   * A workspace whose snapshots have no list of empty folders yet (its first scan, or checkpoints
   * of an earlier version) is walked, once a scan has said which folders it leaves out.
   */
  private async walkEmptyFoldersIfUnknown(scanSkips: readonly SkippedPath[], signal?: AbortSignal): Promise<void> {
    if (this.emptyFolders) return;
    const leftOut = new Set(scanSkips.filter((s) => s.reason !== "size").map((s) => s.path));
    this.emptyFolders = await findEmptyFolders(this.workspaceRoot, skipFolder, leftOut, signal);
  }

  /** Empty folders made since `target` that it does not record (emptyFoldersMadeSince): folders its skip list leaves out are not walked. */
  private emptyFoldersMadeSince(target: CheckpointInfo): Promise<string[]> {
    const leftOut = new Set(target.skipped.filter((s) => s.reason !== "size").map((s) => s.path));
    return emptyFoldersMadeSince(this.workspaceRoot, target.createdAt, target.emptyFolders ?? [], skipFolder, leftOut);
  }

  /** The names a snapshot's top folder holds, read without git; undefined when its tree is not readable so. */
  private topLevelNames(tree: string): Set<string> | undefined {
    try {
      const object = this.objects.read(tree);
      return object?.type === "tree" ? new Set(parseTree(object.body).map((i) => i.name.toString("utf8"))) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Keeps what the last scan left out (all but size skips, which belong to one save). */
  private rememberScan(scanned: SkippedPath[], listedIgnored: boolean): void {
    const nested = scanned.filter((s) => s.reason === "nested_repository");
    const ignored = listedIgnored
      ? scanned.filter((s) => s.reason !== "size" && s.reason !== "nested_repository")
      : (this.lastIgnored ?? []).filter((s) => s.reason !== "nested_repository");
    this.lastIgnored = [...nested, ...ignored];
  }

  /** Opens the repository once per process (see ShadowRepo.openOrCreate for `gitRunsNext`). */
  private async open(signal?: AbortSignal, gitRunsNext = false): Promise<void> {
    if (this.opened && (await this.repo.exists())) return;
    // Stale locks (refs included) are removed by openOrCreate.
    await this.repo.openOrCreate(signal, gitRunsNext);
    writeExcludeFile(this.repo.paths.gitDir, readLfsPatterns(this.workspaceRoot));
    this.opened = true;
    // What earlier processes left loose (each CLI run is one) is packed while this one works;
    // not before a scan, whose git status would share the cores with it (the save after that
    // scan starts it).
    if (!gitRunsNext) this.packing.maybeStart();
  }
}

/** The newest snapshot as a process finds it (WorkspaceCheckpoints.headRecord). */
interface HeadRecord {
  exists: boolean;
  meta?: CheckpointMeta;
  modes?: ModeRecord;
}

/** Workspace-relative, deduplicated; paths outside the workspace dropped. */
function normalisePaths(workspaceRoot: string, paths: readonly string[]): string[] {
  return [...new Set(paths.map((p) => toRepoPath(workspaceRoot, p)).filter((p): p is string => !!p))];
}

/**
 * A file a tool is about to change is kept (its pre-image) up to this many times the size limit
 * of a snapshot: one file read once, where a snapshot would carry it in every scan. Past it the
 * restore leaves the file as it is and says so.
 */
const PREIMAGE_LIMIT_FACTOR = 4;
/**
 * Paths of an undo looked at in the newest snapshot (three tree look-ups each, on every listing
 * while it is offered); past it, any checkpoint saved since the restore withdraws the undo.
 */
const UNDO_PATHS_LOOKED_AT = 2_000;

/** The refs/-relative folder a ref (or ref prefix ending in "/") lives in. */
function refFolder(ref: string): string {
  return ref.slice("refs/".length, ref.lastIndexOf("/"));
}

/**
 * What the newest snapshot's scan left out (its metadata), when its list is whole; undefined
 * when there is none or it was cut at its limit (the listing then runs again).
 */
function leftOutRecordedBy(head: CheckpointMeta | undefined): SkippedPath[] | undefined {
  if (!head?.hasFiles || skipListTruncated(head)) return undefined;
  return head.skipped.filter((s) => s.reason !== "size");
}
