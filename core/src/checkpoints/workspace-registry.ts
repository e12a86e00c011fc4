import { InFlight } from "./in-flight.js";
import type { Logger } from "../logging/logger.js";
import { normaliseWorkspacePath, type InstanceLayout } from "../storage/index.js";
import { makeStatus, type CheckpointState, type CheckpointStatus } from "./checkpoint-status.js";
import type { SkippedPath } from "./exclusions.js";
import type { ScanProgress } from "./snapshot-stager.js";
import type { GitChildren } from "./git-children.js";
import { GitError } from "./git-process.js";
import { DISK_FULL_MESSAGE, DlineError, isDiskFull } from "../errors.js";
import { MESSAGES } from "./workspace-guard.js";
import { TaskDeletedError, WorkspaceCheckpoints } from "./workspace-checkpoints.js";
import { initializeWorkspace, statusBeforeInit } from "./workspace-init.js";

/** One workspace this process checkpoints: its engine and the status machine around it. */
export interface WorkspaceEntry {
  engine: WorkspaceCheckpoints;
  status: CheckpointStatus;
  init?: Promise<void>;
  saves: number;
  /** The status shows a failed save (not a failed initialization). */
  saveFailed?: boolean;
  /** The note last told for a workspace this process only read (refreshNote). */
  noteBeforeInit?: string;
  /**
   * The paths other than its root it was asked for as (a link to the folder): the settings a
   * person gave for the workspace under such a path apply too (noteAlias).
   */
  aliases: Set<string>;
}

export interface WorkspaceRegistryOptions {
  layout: InstanceLayout;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  sizeLimitBytes: number;
  slowInitMs: number;
  initTimeoutMs: number;
  lockStaleMs: number;
  lockWaitMs: number;
  watchBetweenTasks: boolean;
  isEnabled?: (workspaceRoot: string) => boolean | Promise<boolean>;
  onStatus?: (workspaceRoot: string, status: CheckpointStatus) => void;
  taskExists?: (taskId: string) => Promise<boolean>;
  children?: GitChildren;
}

/**
 * The workspaces of this process, each with its status: initializing (slow after 15 s), ready,
 * failed (Retry, Disable), unavailable (no git) or disabled (the setting, or Disable). Roots
 * given here were checked by the caller (workspace-guard.ts).
 */
/**
 * A lock another process took this long ago is said in the status (waitingForPid): not one taken
 * for a turn's save of a few milliseconds, which a call asking now would hardly wait for.
 */
const HELD_ELSEWHERE_SAID_AFTER_MS = 500;

export class WorkspaceRegistry {
  private readonly entries = new Map<string, WorkspaceEntry>();
  /** Initializations and saves under way, so that Delete Everything can wait for them. */
  private readonly inFlight = new InFlight();

  constructor(private readonly o: WorkspaceRegistryOptions) {}

  entryFor(root: string): WorkspaceEntry {
    const key = normaliseWorkspacePath(root);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = {
        engine: new WorkspaceCheckpoints({
          workspaceRoot: key,
          repoDir: this.o.layout.checkpointRepoDir(key),
          env: this.o.env,
          sizeLimitBytes: this.o.sizeLimitBytes,
          lockStaleMs: this.o.lockStaleMs,
          lockWaitMs: this.o.lockWaitMs,
          watchAfterCompletion: this.o.watchBetweenTasks,
          logger: this.o.logger,
          taskExists: this.o.taskExists,
          children: this.o.children,
        }),
        status: makeStatus("initializing", MESSAGES.initializing),
        saves: 0,
        aliases: new Set(),
      };
      this.entries.set(key, entry);
    }
    return entry;
  }

  clear(): void {
    this.entries.clear();
  }

  /** The workspace of `root` was asked for as `given` too (a link to its folder): see WorkspaceEntry.aliases. */
  noteAlias(root: string, given: string): void {
    const alias = normaliseWorkspacePath(given);
    const entry = this.entryFor(root);
    if (alias !== entry.engine.workspaceRoot) entry.aliases.add(alias);
  }

  /**
   * Whether the checkpoints setting is on for the workspace: under its root and every path it
   * was asked for as (a workspace's setting turned off while it was opened through a link is
   * kept under the link's path).
   */
  private async enabled(entry: WorkspaceEntry): Promise<boolean> {
    const isEnabled = this.o.isEnabled;
    if (!isEnabled) return true;
    for (const root of [entry.engine.workspaceRoot, ...entry.aliases]) if (!(await isEnabled(root))) return false;
    return true;
  }

  /** The engines of the workspaces this process has used. */
  engines(): WorkspaceCheckpoints[] {
    return [...this.entries.values()].map((e) => e.engine);
  }

  /** Resolves once every initialization and save started so far has ended (however it ended). */
  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await this.inFlight.ended();
  }

  private track<T>(work: Promise<T>): Promise<T> {
    return this.inFlight.track(work);
  }

  /**
   * Runs `fn` once the workspace is ready; a failure becomes the workspace's status (the next
   * save tries again) and the answer is undefined. Never throws for git or workspace errors.
   */
  run<T>(root: string, taskId: string, fn: (entry: WorkspaceEntry) => Promise<T>): Promise<T | undefined> {
    return this.track(this.runNow(root, taskId, fn));
  }

  private async runNow<T>(
    root: string,
    taskId: string,
    fn: (entry: WorkspaceEntry) => Promise<T>,
  ): Promise<T | undefined> {
    const entry = this.entryFor(root);
    if (!(await this.ready(entry))) return undefined;
    try {
      const result = await fn(entry);
      const recovered = entry.engine.recoveryNote();
      if (entry.saveFailed || (recovered && entry.status.message !== recovered)) {
        entry.saveFailed = false;
        // A repository (or its index, its HEAD) repaired during this save says so.
        this.setStatus(entry, "ready", recovered ?? MESSAGES.ready);
      } else this.refreshNote(entry.engine.workspaceRoot);
      return result;
    } catch (err) {
      if (err instanceof TaskDeletedError) {
        // Deleted while this save waited: nothing to save, and nothing wrong with the workspace.
        this.o.logger.info("checkpoint of a deleted task not saved", { task: taskId });
        return undefined;
      }
      this.o.logger.error("checkpoint save failed", { task: taskId, error: (err as Error).message });
      const missing = err instanceof GitError && err.missing;
      this.setStatus(entry, missing ? "unavailable" : "failed", describe(err));
      // A failed save is shown, but the next save tries again (unlike a failed initialization).
      entry.saveFailed = !missing;
      return undefined;
    }
  }

  /**
   * What the workspace's status says, again from its repository's note (told to the clients when
   * it changed): a restore another process left part-way is said from this process's next look,
   * and stops being said once the task is restored or saved again.
   */
  refreshNote(root: string): void {
    const entry = this.entries.get(normaliseWorkspacePath(root));
    if (!entry) return;
    if (entry.status.state === "ready") {
      const message = entry.engine.recoveryNote() ?? MESSAGES.ready;
      if (entry.status.message !== message) this.setStatus(entry, "ready", message);
      return;
    }
    // Not opened by this process, only read (a listing, a comparison): its status is what
    // statusBeforeInit answers, ready with the repository's note; a change of note is told as
    // such, and the entry stays to be initialized by its first save.
    if (entry.status.state !== "initializing" || entry.init !== undefined) return;
    void this.tellNoteBeforeInit(entry).catch((err: Error) =>
      this.o.logger.warn("telling the checkpoints' status failed", { error: err.message }),
    );
  }

  /** refreshNote for a workspace this process only read; nothing for one whose checkpoints are off. */
  private async tellNoteBeforeInit(entry: WorkspaceEntry): Promise<void> {
    if (!(await this.enabled(entry))) return;
    const message = entry.engine.recoveryNote() ?? MESSAGES.ready;
    if ((entry.noteBeforeInit ?? MESSAGES.ready) === message) return;
    entry.noteBeforeInit = message;
    this.o.onStatus?.(entry.engine.workspaceRoot, makeStatus("ready", message, { skipped: entry.status.skipped }));
  }

  setStatus(
    entry: WorkspaceEntry,
    state: CheckpointState,
    message: string,
    skipped?: SkippedPath[],
    progress?: ScanProgress,
  ): void {
    entry.status = makeStatus(state, message, { skipped: skipped ?? entry.status.skipped, progress });
    this.o.onStatus?.(entry.engine.workspaceRoot, entry.status);
  }

  private async ready(entry: WorkspaceEntry): Promise<boolean> {
    if (!(await this.enabled(entry))) {
      if (entry.status.state !== "disabled") this.setStatus(entry, "disabled", MESSAGES.disabled);
      return false;
    }
    const state = entry.status.state;
    if (state === "ready" || (state === "failed" && entry.saveFailed)) return true;
    if (state === "disabled" || state === "failed" || state === "unavailable") return false;
    entry.init ??= this.track(
      initializeWorkspace(
        entry.engine,
        this.o,
        (state, message, skipped, progress) => this.setStatus(entry, state, message, skipped, progress),
        this.o.logger,
      ),
    ).finally(() => (entry.init = undefined));
    await entry.init;
    return entry.status.state === "ready";
  }

  /** The status of a workspace (with what the task's latest checkpoint left out). Never starts a scan. */
  async status(root: string, taskId?: string): Promise<CheckpointStatus> {
    const entry = this.entries.get(normaliseWorkspacePath(root));
    const enabled = entry ? await this.enabled(entry) : !this.o.isEnabled || (await this.o.isEnabled(root));
    if (!enabled) return makeStatus("disabled", MESSAGES.disabled);
    const size = entry ? await entry.engine.repo.objectBytes().catch(() => 0) : 0;
    // An entry made only for queries (never initialized) says nothing yet.
    const initialized = entry && (entry.init !== undefined || entry.status.state !== "initializing");
    // Another window has held the repository for a while (its baseline, a restore): said at once,
    // since what follows (the skip list read under the lock) would wait for it.
    const other = (entry ?? this.entryFor(root)).engine.lockHeldElsewhere();
    if (other && Date.now() - other.since >= HELD_ELSEWHERE_SAID_AFTER_MS) {
      const known = entry && initialized ? entry.status : makeStatus("ready", MESSAGES.ready);
      return { ...known, repositorySizeBytes: size, waitingForPid: other.pid };
    }
    if (entry && initialized) {
      // Another window's restore may have been cut short since this one last looked.
      this.refreshNote(root);
      return { ...entry.status, repositorySizeBytes: size, skipped: await this.latestSkips(entry, taskId) };
    }
    return statusBeforeInit(this.entryFor(root).engine, this.o.env, taskId);
  }

  private async latestSkips(entry: WorkspaceEntry, taskId?: string): Promise<SkippedPath[]> {
    if (taskId && entry.status.state === "ready") {
      const cps = await entry.engine.list(taskId).catch(() => []);
      const latest = cps.at(-1);
      if (latest) return latest.skipped;
    }
    return entry.status.skipped;
  }

  /** Starts initializing a workspace not initialized yet in this process (see CheckpointManager.prepareWorkspace). */
  prepare(root: string): void {
    const entry = this.entryFor(root);
    this.ready(entry).catch((err: Error) =>
      this.o.logger.warn("preparing checkpoints failed", { workspace: root, error: err.message }),
    );
  }

  /** Retry Checkpoints: clears a failure and initializes again. */
  async retry(root: string): Promise<void> {
    const entry = this.entryFor(root);
    if (entry.status.state !== "ready") {
      entry.saveFailed = false;
      entry.status = makeStatus("initializing", MESSAGES.initializing);
      await this.ready(entry);
    }
  }

  /** Disable Checkpoints for a workspace in this process (the setting is the lasting switch). */
  disable(root: string): void {
    this.setStatus(this.entryFor(root), "disabled", MESSAGES.disabled);
  }
}

function describe(err: unknown): string {
  if (err instanceof DlineError) return err.message;
  if (isDiskFull(err)) return DISK_FULL_MESSAGE;
  if (err instanceof GitError) return err.missing ? MESSAGES.gitMissing : err.message;
  return (err as Error)?.message ?? String(err);
}
