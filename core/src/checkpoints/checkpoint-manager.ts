import { InFlight } from "./in-flight.js";
import { statfsSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { DlineError, isDiskFull } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import { assertSafeId, normaliseWorkspacePath, type InstanceLayout } from "../storage/index.js";
import type { CheckpointInfo } from "./checkpoint-record.js";
import { makeStatus, type CheckpointStatus } from "./checkpoint-status.js";
import type { SkippedPath } from "./exclusions.js";
import type { TaskConversationPort } from "./ports.js";
import type { FileChange } from "./snapshot-diff.js";
import { checkWorkspaceRoots, MESSAGES, RealPaths } from "./workspace-guard.js";
import { GitError } from "./git-process.js";
import type { WorkspaceCheckpoints } from "./workspace-checkpoints.js";
import { WorkspaceRegistry, type WorkspaceEntry } from "./workspace-registry.js";
import {
  assertConversationRestorable,
  assertFilesRestorable,
  findCheckpoint,
  RestoreFlow,
  restoreAllTarget,
  type EditOutcome,
  type RestoreMode,
  type RestoreOutcome,
} from "./restore-flow.js";
import { findTaskWorkspace } from "./task-repository-finder.js";
import { RepositoryRoots } from "./repository-roots.js";
import { GitChildren } from "./git-children.js";
import { PendingSaveReads } from "./pending-save-reads.js";
import { restorePurpose } from "./restore-purpose.js";

export type { EditOutcome, RestoreMode, RestoreOutcome } from "./restore-flow.js";

export interface CheckpointManagerOptions {
  layout: InstanceLayout;
  /** Environment git runs with (PATH from here; GIT_* variables are dropped). */
  env: NodeJS.ProcessEnv;
  /** The user's home folder: checkpoints refuse it and its Desktop, Documents and Downloads. */
  homeDir: string;
  logger: Logger;
  conversation?: TaskConversationPort;
  /** Files larger than this are left out of snapshots. Default 5 MiB (setting checkpointMaxFileBytes). */
  sizeLimitBytes?: number;
  /** Object bytes per shadow repository before the oldest checkpoints are pruned. Default 2 GiB. */
  budgetBytes?: number;
  /** After this long, initialization reports that the repository may be large. Default 15 s (docs/checkpoints.md, "Limits"). */
  slowInitMs?: number;
  /** Initialization gives up after this long and reports a timeout. Default 2 min. */
  initTimeoutMs?: number;
  /** A repository lock not refreshed for this long belongs to a killed process. Default 10 s. */
  lockStaleMs?: number;
  /** How long a checkpoint step waits for another process's repository lock. Default 2 min. */
  lockWaitMs?: number;
  /** Saves between two size-budget checks. Default 25. */
  budgetCheckEvery?: number;
  /**
   * Watch a workspace once a task there is complete, for the next task's checkpoints, and pack
   * its checkpoints from a completion rather than between turns (see
   * WorkspaceCheckpointsOptions.watchAfterCompletion). Default true; false in a process its
   * client stops after one command (the CLI's).
   */
  watchBetweenTasks?: boolean;
  /** The checkpoints setting; false turns the feature off for a workspace. Default: on. */
  isEnabled?: (workspaceRoot: string) => boolean | Promise<boolean>;
  /** Called whenever a workspace's status changes (e.g. to "slow" after 15 s). */
  onStatus?: (workspaceRoot: string, status: CheckpointStatus) => void;
}

/** The task as the checkpoint module sees it. */
export interface CheckpointTask {
  id: string;
  workspaceRoots: readonly string[];
}

export interface SaveOptions {
  messageId?: string;
  /** Paths editing tools recorded this turn (force-added). */
  editedPaths?: readonly string[];
  /** A command ran this turn: the workspace is scanned as well. */
  commandRan?: boolean;
  /** The turn called tools that may modify the workspace, and none of them ran (SaveRequest.nothingRan). */
  nothingRan?: boolean;
}

/** Which completion View Changes shows: the latest when neither is given. */
export interface ViewChangesTarget {
  /** The completion's checkpoint. */
  checkpointId?: string;
  /** The completion result's message (its checkpoint is the completion's). */
  messageId?: string;
}

export interface CheckpointView extends CheckpointInfo {
  /** Files were restored to it and no checkpoint was saved since. */
  restored: boolean;
  /** A "before restore" checkpoint still offered as "Undo restore" (no turn since). */
  undoAvailable: boolean;
}

/**
 * The checkpoint API the task runtime calls at the save points of docs/checkpoints.md, and the RPC layer
 * calls for List / Compare / View Changes / Restore / Edit Message / status. One
 * WorkspaceCheckpoints per workspace, with its status (WorkspaceRegistry); this class adds
 * the save points, task-to-workspace lookup, the restore rules, budget and deletion.
 */
export class CheckpointManager {
  private readonly workspaces: WorkspaceRegistry;
  private readonly baselines = new Map<string, Promise<CheckpointInfo | undefined>>();
  /** Later runs started (runStarting) whose workspace is not saved yet: by task. */
  private readonly runStarts = new Map<
    string,
    { messageId: string; onSaved?: (cp: CheckpointInfo) => void; saved?: Promise<unknown> }
  >();
  /**
   * Each task's saves under way, in order (turn, completion and compaction checkpoints): the
   * turn loop does not wait for a turn's save (its next model request runs meanwhile); whatever
   * may change the workspace or reads the checkpoints waits for them (settled()).
   */
  private readonly saves = new Map<string, Promise<void>>();
  /** Commands' watches being set up (commandStarting), until the engine has taken them. */
  private readonly commandsStarting = new Set<Promise<void>>();
  /** What those saves will read from the work tree (an edit of other files need not wait for them). */
  private readonly pendingReads = new PendingSaveReads();
  /** Size budget checks started after a save without anyone waiting (Delete Everything waits). */
  private readonly budgetChecks = new Set<Promise<unknown>>();
  private readonly taskWorkspaces = new Map<string, string>();
  /** Tasks already told their workspace cannot have checkpoints (home folder, root...). */
  private readonly toldUnavailable = new Set<string>();
  /** The roots' real paths, for the check that a link does not lead to the home folder. */
  private readonly realPaths = new RealPaths();
  /** Which folder's repository keeps a workspace's checkpoints (its real path, see repository-roots.ts). */
  private readonly repositoryRoots: RepositoryRoots;
  private readonly running = new Set<string>();
  private conversation: TaskConversationPort | undefined;
  /** Restores and message edits under way (restoresEnded). */
  private readonly restoring = new InFlight();
  /** Every git process the checkpoints started: killed when this sidecar stops. */
  private readonly children = new GitChildren();
  private readonly o: Required<Omit<CheckpointManagerOptions, "conversation" | "isEnabled" | "onStatus">> &
    Pick<CheckpointManagerOptions, "isEnabled" | "onStatus">;

  constructor(options: CheckpointManagerOptions) {
    this.conversation = options.conversation;
    this.o = {
      ...options,
      sizeLimitBytes: options.sizeLimitBytes ?? 5 * 1024 * 1024,
      budgetBytes: options.budgetBytes ?? 2 * 1024 * 1024 * 1024,
      slowInitMs: options.slowInitMs ?? 15_000,
      initTimeoutMs: options.initTimeoutMs ?? 120_000,
      lockStaleMs: options.lockStaleMs ?? 10_000,
      lockWaitMs: options.lockWaitMs ?? 120_000,
      budgetCheckEvery: options.budgetCheckEvery ?? 25,
      watchBetweenTasks: options.watchBetweenTasks ?? true,
    };
    this.repositoryRoots = new RepositoryRoots(this.o.layout.checkpointsDir, (root) =>
      this.o.layout.checkpointRepoDir(root),
    );
    this.workspaces = new WorkspaceRegistry({
      ...this.o,
      taskExists: async (taskId) => (await this.conversation?.taskExists?.(taskId)) ?? true,
      children: this.children,
    });
  }

  /** Supplies the conversation side once the task store exists (composition root). */
  attachConversation(port: TaskConversationPort): void {
    this.conversation = port;
  }

  // ---------------------------------------------------------------- save points

  /**
   * A task is about to start in this workspace: its checkpoints initialize now (the shadow
   * repository opened, the workspace scanned) while the task is being set up, rather than at its
   * first request; its baseline right after takes that scan. In a workspace already initialized
   * in this process, nothing happens. Never throws: a failure is the workspace's status.
   */
  prepareWorkspace(workspaceRoot: string): void {
    let root: string;
    try {
      root = this.rootOf([workspaceRoot]);
    } catch {
      return; // no checkpoints here; the task's own calls say why
    }
    this.workspaces.prepare(root);
  }

  /**
   * The baseline of a task: saved once (the first request), awaited by the first tool that may
   * modify the workspace. Never throws: a workspace that cannot have checkpoints gets a status
   * instead, and the task runs without checkpoints.
   */
  async ensureBaseline(
    task: CheckpointTask,
    messageId = "",
    options: { toolStarting?: boolean } = {},
  ): Promise<CheckpointInfo | undefined> {
    // The runtime asks for the baseline before every tool that may modify the workspace, except
    // edits (beforeEdit waits for it), and before hooks run around a tool; and once as the task
    // starts (`toolStarting: false`), when no tool is starting.
    if (options.toolStarting !== false) this.noteToolStarting(task);
    const baseline = await this.baselineOf(task, messageId);
    await this.runStartOf(task);
    await this.settled(task.id);
    return baseline;
  }

  /**
   * A later run of the task starts (a message after an earlier run, a Resume). Its first tool
   * that may modify the workspace first saves the workspace as it is then (a turn checkpoint
   * anchored on `messageId`, recording no edit). Without it, what the person changed since the
   * task's last checkpoint (files made, edits) was in the first command's changes, measured
   * from that checkpoint: a files restore then deleted and reverted them as the task's, and
   * left what the command made. `onSaved` hears of that checkpoint once it is saved.
   */
  runStarting(task: CheckpointTask, messageId: string, onSaved?: (cp: CheckpointInfo) => void): void {
    this.runStarts.set(task.id, { messageId, onSaved });
  }

  /** The run-start save of runStarting, started by the run's first tool that may modify the workspace. */
  private runStartOf(task: CheckpointTask): Promise<unknown> {
    const start = this.runStarts.get(task.id);
    if (!start) return Promise.resolve();
    start.saved ??= this.queueSave(task, "scan", () =>
      this.guarded(task, (entry) =>
        entry.engine.save({
          taskId: task.id,
          kind: "turn",
          messageId: start.messageId,
          editedPaths: [],
          scan: true,
          hasFiles: true,
        }),
      ),
    )
      .then((cp) => cp && start.onSaved?.(cp))
      .finally(() => {
        if (this.runStarts.get(task.id) === start) this.runStarts.delete(task.id);
      });
    return start.saved;
  }

  /** Resolves when the task's saves under way have ended (whatever their outcome). */
  private async settled(taskId: string): Promise<void> {
    await this.saves.get(taskId);
  }

  /** Runs a save of the task after its earlier ones (see `saves`). */
  private inOrder<T>(taskId: string, save: () => Promise<T>): Promise<T> {
    const result = (this.saves.get(taskId) ?? Promise.resolve()).then(save);
    const done = result.then(
      () => undefined,
      () => undefined,
    );
    this.saves.set(taskId, done);
    void done.then(() => this.saves.get(taskId) === done && this.saves.delete(taskId));
    return result;
  }

  /**
   * Queues a save of the task (inOrder) that will read `reads` from the work tree (the paths a
   * turn's tools recorded, or "scan"), noted until it ends for the edits made meanwhile.
   */
  private queueSave<T>(task: CheckpointTask, reads: readonly string[] | "scan", save: () => Promise<T>): Promise<T> {
    const engine = this.engineFor(task);
    const ended = this.pendingReads.add(task.id, reads === "scan" || !engine ? "scan" : engine.repoPaths(reads));
    const result = this.inOrder(task.id, save);
    void result.then(ended, ended);
    return result;
  }

  /** The task's workspace's checkpoints, or undefined when it cannot have any. */
  private engineFor(task: CheckpointTask): WorkspaceCheckpoints | undefined {
    try {
      return this.workspaces.entryFor(this.rootOf(task.workspaceRoots, task.id)).engine;
    } catch {
      return undefined;
    }
  }

  /** Until the task's next scan or edit, its workspace's completions scan (WorkspaceCheckpoints.toolStarting). */
  private noteToolStarting(task: CheckpointTask): void {
    this.engineFor(task)?.toolStarting(task.id);
  }

  /** The task's baseline, saved once: the first one of the task's checkpoints. */
  private baselineOf(task: CheckpointTask, messageId = ""): Promise<CheckpointInfo | undefined> {
    let pending = this.baselines.get(task.id);
    if (!pending) {
      pending = this.guarded(task, async (entry) => {
        const existing = await entry.engine.list(task.id);
        if (existing.length) return existing[0];
        return entry.engine.save({
          taskId: task.id,
          kind: "baseline",
          messageId,
          editedPaths: [],
          scan: true,
          hasFiles: true,
        });
      });
      this.baselines.set(task.id, pending);
      pending.then(
        (cp) => {
          if (cp === undefined) this.baselines.delete(task.id);
        },
        () => this.baselines.delete(task.id),
      );
      this.running.add(task.id);
    }
    return pending;
  }

  /**
   * A command of the task is about to run (the runtime awaited ensureBaseline first): its
   * workspace is watched and scanned while it runs (WorkspaceCheckpoints.commandStarting).
   */
  commandStarting(task: CheckpointTask): void {
    const started = this.baselines.get(task.id)?.then(
      (baseline) => baseline && this.engineFor(task)?.commandStarting(),
      () => undefined,
    );
    if (!started) return;
    const done = started.then(() => undefined);
    this.commandsStarting.add(done);
    void done.then(() => this.commandsStarting.delete(done));
  }

  /**
   * After an assistant turn that may have modified the workspace. Queued at once (an edit of the
   * next turn waits for it), begun once the process has looked at its I/O: the turn loop sends
   * the next model request meanwhile, which the model then answers while this process saves.
   */
  async saveTurn(task: CheckpointTask, options: SaveOptions = {}): Promise<CheckpointInfo | undefined> {
    const edited = options.editedPaths ?? [];
    return this.queueSave(task, options.commandRan || !edited.length ? "scan" : edited, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return this.saveFiles(task, "turn", options);
    });
  }

  /** The completion result's checkpoint (View Changes compares completions). */
  async saveCompletion(task: CheckpointTask, options: SaveOptions = {}): Promise<CheckpointInfo | undefined> {
    const cp = await this.queueSave(task, "scan", () => this.saveFiles(task, "completion", options));
    this.running.delete(task.id);
    return cp;
  }

  /**
   * Before a tool changes files of the workspace: waits for the task's baseline (as the first
   * tool that may modify the workspace does: its pre-images held only in memory were lost when
   * the run ended before the baseline was saved, a Ctrl-C or a kill during a first baseline's
   * scan), then keeps what the task's newest checkpoint does not hold of them, so that a restore
   * never loses a file that existed (see WorkspaceCheckpoints.beforeEdit). Never throws: a
   * failure is logged and the tool runs.
   */
  async beforeEdit(task: CheckpointTask, paths: readonly string[]): Promise<void> {
    await this.baselineOf(task);
    await this.runStartOf(task);
    if (await this.savesLeaveAlone(task, paths)) return;
    // The checkpoint this edit is compared with may be a turn's save still under way.
    await this.settled(task.id);
    await this.guarded(task, (entry) => entry.engine.beforeEdit(task.id, paths));
  }

  /**
   * Whether an edit of these files may go ahead while the task's saves are under way (the
   * repository lock held by another window, a save's git slow): none of them reads the files
   * from the work tree or scans, and the newest checkpoint saved holds each file, so the saves
   * keep what it holds of them and the edit has nothing to capture. Otherwise the edit waits.
   */
  private async savesLeaveAlone(task: CheckpointTask, paths: readonly string[]): Promise<boolean> {
    const engine = this.saves.has(task.id) ? this.engineFor(task) : undefined;
    if (!engine) return false;
    const repoPaths = engine.repoPaths(paths);
    if (!this.pendingReads.leaveAlone(task.id, repoPaths)) return false;
    if (!(await engine.heldByNewest(task.id, repoPaths))) return false;
    engine.editStarting(task.id);
    return true;
  }

  /** Context compaction: a checkpoint without a file snapshot (only "task only" restores). */
  async saveCompaction(
    task: CheckpointTask,
    options: { messageId?: string } = {},
  ): Promise<CheckpointInfo | undefined> {
    // Noted as queued at once (an edit made while the baseline is taken waits for it), saved after the baseline.
    const baseline = this.baselineOf(task);
    return this.queueSave(task, "scan", async () => {
      await baseline;
      return this.guarded(task, (entry) =>
        entry.engine.save({
          taskId: task.id,
          kind: "compaction",
          messageId: options.messageId ?? "",
          editedPaths: [],
          scan: false,
          hasFiles: false,
        }),
      );
    });
  }

  private async saveFiles(
    task: CheckpointTask,
    kind: "turn" | "completion",
    options: SaveOptions,
  ): Promise<CheckpointInfo | undefined> {
    await this.baselineOf(task);
    const edited = options.editedPaths ?? [];
    return this.guarded(task, async (entry) => {
      const cp = await entry.engine.save({
        taskId: task.id,
        kind,
        messageId: options.messageId ?? "",
        editedPaths: edited,
        scan: !!options.commandRan || edited.length === 0,
        commandRan: !!options.commandRan,
        nothingRan: !!options.nothingRan,
        hasFiles: true,
      });
      const due = ++entry.saves % this.o.budgetCheckEvery === 0;
      if (kind === "completion") {
        // A task's end checks the budget, and its run ends once that is done (no turn waits for
        // it): each CLI run is a process of its own, whose count of saves starts again, and a
        // check left running in the background met a sidecar already stopping. Without it such
        // runs never checked, and the repository outgrew any budget.
        await this.checkBudget(entry.engine.workspaceRoot);
      } else if (due) {
        const check = this.checkBudget(entry.engine.workspaceRoot);
        this.budgetChecks.add(check);
        void check.finally(() => this.budgetChecks.delete(check));
      }
      return cp;
    });
  }

  /** The task's one workspace root, refused as checkWorkspaceRoots says (links resolved once, see realPaths). */
  private checkedRoot(roots: readonly string[]): string {
    return checkWorkspaceRoots(roots, this.o.homeDir, this.realPaths);
  }

  /** The root whose repository keeps the checkpoints of these roots (checkedRoot), or of that task (RepositoryRoots). */
  private rootOf(roots: readonly string[], taskId?: string): string {
    const given = this.checkedRoot(roots);
    const root = this.repositoryRoots.of(given, taskId);
    if (root !== normaliseWorkspacePath(given)) this.workspaces.noteAlias(root, given);
    return root;
  }

  /** Runs `fn` when the task's workspace is ready; records failures as status, returns undefined. */
  private async guarded<T>(task: CheckpointTask, fn: (entry: WorkspaceEntry) => Promise<T>): Promise<T | undefined> {
    assertSafeId("task id", task.id);
    let root: string;
    try {
      root = this.rootOf(task.workspaceRoots, task.id);
    } catch (err) {
      const reason = (err as Error).message;
      this.o.logger.info("checkpoints unavailable for task", { task: task.id, reason });
      // Said once to the task's clients: the person must not edit believing they can roll back.
      const workspaceRoot = task.workspaceRoots[0];
      if (workspaceRoot && !this.toldUnavailable.has(task.id)) {
        this.toldUnavailable.add(task.id);
        this.o.onStatus?.(workspaceRoot, makeStatus("unavailable", reason, { canRetry: false }));
      }
      return undefined;
    }
    this.taskWorkspaces.set(task.id, root);
    return this.workspaces.run(root, task.id, fn);
  }

  // ---------------------------------------------------------------- status

  /** The status of a workspace (or of a task's workspace). Never starts a scan. */
  async status(query: { taskId?: string; workspaceRoot?: string }): Promise<CheckpointStatus> {
    let root: string;
    try {
      root = await this.rootFor(query);
    } catch (err) {
      if (err instanceof DlineError && err.code === "failed_precondition")
        return makeStatus("unavailable", err.message, { canRetry: false });
      throw err;
    }
    return this.workspaces.status(root, query.taskId);
  }

  /** Retry Checkpoints: clears a failure and initializes again. */
  async retry(query: { taskId?: string; workspaceRoot?: string }): Promise<CheckpointStatus> {
    const root = await this.rootFor(query);
    await this.workspaces.retry(root);
    return this.status({ workspaceRoot: root });
  }

  /** Disable Checkpoints for a workspace in this process (the setting is the lasting switch). */
  async disable(query: { taskId?: string; workspaceRoot?: string }): Promise<void> {
    this.workspaces.disable(await this.rootFor(query));
  }

  // ---------------------------------------------------------------- queries

  async list(taskId: string): Promise<CheckpointView[]> {
    return this.gitRequired(async () => {
      await this.settled(taskId);
      const engine = await this.engineOfTask(taskId);
      const cps = await engine.list(taskId);
      // None here: saved for another folder, the one its link led to then?
      if (!cps.length) await this.assertKeptHere(taskId, engine.workspaceRoot);
      // A person looking at the checkpoints hears of a restore another window left part-way.
      this.workspaces.refreshNote(engine.workspaceRoot);
      const marker = await engine.restoredMarker(taskId);
      const last = cps[cps.length - 1];
      const undoable = last?.kind === "before_restore" && (await this.undoable(engine, cps, marker));
      const offered = await this.offeredFilter(taskId);
      return cps.filter(offered).map((c) => ({
        ...c,
        restored: marker !== undefined && c.id === marker && c !== last,
        undoAvailable: c === last && undoable,
      }));
    });
  }

  /**
   * Whether the task's last restore (`marker`: the checkpoint it restored to), whose undo point
   * is the task's newest checkpoint, is still offered for undoing. Not when it was itself an undo:
   * it restored the undo point the restore before it saved, the checkpoint just before its own
   * (offering it again would put back the restore just undone; a restore to an older undo point
   * chosen from the list is a restore like any other, and undone like one). Nor once a checkpoint
   * saved in the workspace since, by any task, recorded a change of a file the undo puts back:
   * undoing would write over it with no question asked.
   */
  private async undoable(
    engine: WorkspaceCheckpoints,
    cps: readonly CheckpointInfo[],
    marker: string | undefined,
  ): Promise<boolean> {
    const previous = cps[cps.length - 2];
    if (previous?.kind === "before_restore" && previous.id === marker) return false;
    // No restore of the task ended (one stopped part-way): its undo point is what puts the files back.
    const target = marker === undefined ? undefined : cps.find((c) => c.id === marker);
    if (!target) return true;
    return !(await engine.undoWouldOverwriteLaterSaves(target, cps[cps.length - 1]!));
  }

  /**
   * Which checkpoints are still offered: not those of messages a restore of the task removed
   * (Restore Task clears the messages after its point, and their markers with them). An undo
   * point stays: it holds what the files were before a restore. The engine keeps them all
   * (their recorded edits still shape a later restore).
   */
  private async offeredFilter(taskId: string): Promise<(c: CheckpointInfo) => boolean> {
    const ids = await this.conversation?.messageIds?.(taskId);
    return (c) => !ids || !c.messageId || c.kind === "before_restore" || ids.has(c.messageId);
  }

  /**
   * Refuses a file restore while another task runs (or waits for an answer) in the same
   * workspace, in this sidecar or another: the restore would overwrite the files it is editing,
   * and it would go on from files it did not leave.
   */
  private async assertNoOtherTaskActive(taskId: string): Promise<void> {
    const workspaceRoot = await this.workspaceOfTask(taskId);
    const [other, ...more] = (await this.conversation?.activeTasksIn?.(workspaceRoot, taskId)) ?? [];
    if (!other) return;
    // Named as the history lists it (its title), never by its id.
    const named = other.title ? `Task "${other.title.slice(0, 60)}"` : "Another task";
    const others = more.length ? ` and ${more.length} other task${more.length === 1 ? "" : "s"}` : "";
    throw new DlineError(
      "failed_precondition",
      `${named}${others} ${more.length ? "are" : "is"} running in this workspace: restoring files now could overwrite ${more.length ? "their" : "its"} edits. Wait for ${more.length ? "them" : "it"} to end, or cancel ${more.length ? "them" : "it"}, then restore.`,
    );
  }

  /** The checkpoint, refused when it is no longer offered, before anything is restored or compared. */
  private async findOffered(
    engine: WorkspaceCheckpoints,
    taskId: string,
    checkpointId: string,
  ): Promise<CheckpointInfo> {
    const cp = await this.find(engine, taskId, checkpointId);
    if (!(await this.offeredFilter(taskId))(cp)) {
      throw new DlineError(
        "not_found",
        `Checkpoint ${checkpointId.slice(0, 8)} is no longer part of task ${taskId}: a restore of the task removed its messages.`,
      );
    }
    return cp;
  }

  /**
   * Changes since the checkpoint, what the snapshot left out, and which of the changed paths a
   * file restore to it would change now (a confirmation lists those, not every change).
   */
  async compare(
    taskId: string,
    checkpointId: string,
  ): Promise<{ files: FileChange[]; skipped: SkippedPath[]; restorePaths: string[] }> {
    return this.gitRequired(async () => {
      await this.settled(taskId);
      const engine = await this.engineOfTask(taskId);
      await this.assertKeptHere(taskId, engine.workspaceRoot);
      this.workspaces.refreshNote(engine.workspaceRoot);
      const cp = await this.findOffered(engine, taskId, checkpointId);
      if (!cp.hasFiles) throw new DlineError("failed_precondition", "This checkpoint has no file snapshot to compare.");
      const flow = new RestoreFlow(engine, taskId, this.conversation, this.o.logger);
      const compared = await engine.compare(taskId, cp);
      // What the checkpoints leave out and was changed since: listed too, not tracked (a restore
      // leaves it as it is), so that Compare never says "no changes" while such files differ.
      const files = [...compared, ...(await flow.notTrackedSince(cp.id, new Set(compared.map((f) => f.path))))];
      // A file whose earlier content the checkpoints do not have (never tracked, or too large to
      // keep when the task changed it), or too large now for the restore's undo to keep (a command
      // grew it past four times the size limit), is left as it is by a restore: not among those
      // it changes (listed there, a confirmation said it would be put back).
      const tooLargeNow = engine.tooLargeForPreimage(files.map((f) => f.path));
      const changed = files
        .filter((f) => !f.notTracked && !f.tooLargeToKeep && !tooLargeNow.has(f.path))
        .map((f) => f.path);
      // A restore saves the missed turn first, and then takes in every change since the checkpoint.
      // A command still running is stopped first and its turn saved: what it changed is restored too.
      const restored = (await this.missedCommandAfter(engine, taskId, cp))
        ? changed
        : withRunningCommand(
            await flow.pathsRestored(checkpointId, changed),
            changed,
            await this.runningCommandChanges(engine, taskId, cp, compared),
          );
      // Bits opened up since the checkpoint recorded them are narrowed back by any file restore.
      const narrowed = files.filter((f) => f.opensRecordedBits && !restored.includes(f.path)).map((f) => f.path);
      return { files, skipped: cp.skipped, restorePaths: [...restored, ...narrowed] };
    });
  }

  /**
   * A command of the task that ran after `target` and that no checkpoint since says ran: its
   * sidecar died (killed, crashed) during the command or before the turn's save. Undefined when
   * every command's turn was saved (the usual case), or the port cannot tell.
   */
  private async missedCommandAfter(
    engine: WorkspaceCheckpoints,
    taskId: string,
    target: CheckpointInfo,
  ): Promise<{ messageId: string; time: number } | undefined> {
    // One still running is not missed: its turn is saved when it ends (a restore stops it first).
    const after = (await this.commandCallsAfter(taskId, target)).filter((c) => !c.running);
    if (!after.length) return undefined;
    const cps = await engine.list(taskId);
    const missed = after.filter((c) => !cps.some((cp) => cp.commandRan === true && cp.createdAt >= c.time));
    return missed.at(-1);
  }

  /** The task's commands (CommandCalls) that ran, or run, after the message `target` follows. */
  private async commandCallsAfter(
    taskId: string,
    target: CheckpointInfo,
  ): Promise<readonly { messageId: string; time: number; running?: boolean }[]> {
    const calls = (await this.conversation?.commandCalls?.(taskId)) ?? [];
    if (!calls.length) return [];
    // After the message the checkpoint follows: a command's row may be older than a checkpoint
    // saved while its approval was asked (the baseline, the turn before it).
    const anchor = target.messageId ? await this.conversation?.messageInfo(taskId, target.messageId) : undefined;
    const since = anchor?.createdAt ?? target.createdAt;
    return calls.filter((c) => c.time > since);
  }

  /**
   * When a command of the task that started after `target` still runs: the paths changed since
   * the task's newest checkpoint with files, which the turn save a restore makes once it has
   * stopped the run takes in (a command's save is its tree against the newest snapshot), and so
   * the restore puts back. Before, Compare's `restore_paths` left them out while the command ran
   * (its row was not among the commands that ran), and the confirmation said such a file would
   * stay as it is, which the restore then deleted. Undefined when no command of it runs.
   */
  private async runningCommandChanges(
    engine: WorkspaceCheckpoints,
    taskId: string,
    target: CheckpointInfo,
    /** A Compare against `target` already made. */
    compared?: readonly FileChange[],
  ): Promise<ReadonlySet<string> | undefined> {
    if (!(await this.commandCallsAfter(taskId, target)).some((c) => c.running)) return undefined;
    const newest = (await engine.list(taskId)).findLast((c) => c.hasFiles);
    if (!newest) return undefined;
    const since = newest.id === target.id && compared ? compared : await engine.compare(taskId, newest);
    return new Set(since.filter((f) => !f.notTracked && !f.tooLargeToKeep).map((f) => f.path));
  }

  /**
   * Before a file restore to `target`: the turn save a command after it missed (its sidecar died
   * first) is made now, a scan marked as following a command and anchored on the command's row.
   * Without it the restore took in only the paths editing tools recorded, and left what the
   * command changed as it is without naming it, where a saved command's changes are restored.
   */
  private async saveMissedCommandTurn(
    engine: WorkspaceCheckpoints,
    taskId: string,
    target: CheckpointInfo,
  ): Promise<void> {
    const missed = await this.missedCommandAfter(engine, taskId, target);
    if (!missed) return;
    this.o.logger.info("saving the turn checkpoint a command missed before a restore", { task: taskId });
    const saved = await engine.save({
      taskId,
      kind: "turn",
      messageId: missed.messageId,
      editedPaths: [],
      scan: true,
      commandRan: true,
      hasFiles: true,
    });
    // The chat shows it on the command's row, as the turn's own save would have been.
    await this.conversation
      ?.checkpointSaved?.(taskId, missed.messageId, saved.id)
      .catch((err: Error) => this.o.logger.warn("telling a command's turn checkpoint failed", { error: err.message }));
  }

  /**
   * What the task changed since its previous completion (or its start), up to one completion:
   * the latest, or the one `which` names, by its checkpoint id or by its completion message's id
   * (each completion card's own View Changes; before, every card showed the latest's changes).
   * A checkpoint or message that is no completion of the task is refused, never answered with another.
   */
  async viewChanges(
    taskId: string,
    which: ViewChangesTarget = {},
  ): Promise<{ files: FileChange[]; from: string; to: string }> {
    return this.gitRequired(async () => {
      await this.settled(taskId);
      const engine = await this.engineOfTask(taskId);
      await this.assertKeptHere(taskId, engine.workspaceRoot);
      const offered = await this.offeredFilter(taskId);
      const cps = (await engine.list(taskId)).filter((c) => c.hasFiles && offered(c));
      const named = which.checkpointId || which.messageId;
      const to = named ? await this.completionOf(engine, taskId, which) : cps.findLast((c) => c.kind === "completion");
      const [first] = cps;
      if (!first || !to)
        throw new DlineError("failed_precondition", "View Changes is available after the task completes.");
      const end = cps.findIndex((c) => c.id === to.id);
      const from = cps.slice(0, end).findLast((c) => c.kind === "completion") ?? first;
      return { files: await engine.between(taskId, from, to), from: from.id, to: to.id };
    });
  }

  /** The completion checkpoint `which` names, refused when it is not one of the task's completions still offered. */
  private async completionOf(
    engine: WorkspaceCheckpoints,
    taskId: string,
    which: ViewChangesTarget,
  ): Promise<CheckpointInfo> {
    let cp: CheckpointInfo | undefined;
    if (which.checkpointId) {
      cp = await this.findOffered(engine, taskId, which.checkpointId);
      if (cp.kind !== "completion")
        throw new DlineError(
          "invalid_argument",
          `Checkpoint ${cp.id.slice(0, 8)} is a ${cp.kind.replace("_", " ")} checkpoint, not a completion: View Changes shows what a completion changed.`,
        );
    }
    if (which.messageId) {
      const offered = await this.offeredFilter(taskId);
      const ofMessage = (await engine.list(taskId))
        .filter((c) => c.kind === "completion" && c.messageId === which.messageId && offered(c))
        .at(-1);
      if (!ofMessage)
        throw new DlineError(
          "not_found",
          `Message ${which.messageId.slice(0, 80)} of task ${taskId} has no completion checkpoint: View Changes shows what a completion changed.`,
        );
      if (cp && cp.id !== ofMessage.id)
        throw new DlineError(
          "invalid_argument",
          `Checkpoint ${cp.id.slice(0, 8)} is not the completion of message ${which.messageId.slice(0, 80)}.`,
        );
      cp = ofMessage;
    }
    if (!cp!.hasFiles)
      throw new DlineError("failed_precondition", "This completion has no file snapshot to show changes of.");
    return cp!;
  }

  // ---------------------------------------------------------------- restore

  /** Restore Files & Task / Files Only / Task Only, by the restore rules of docs/checkpoints.md. */
  async restore(taskId: string, checkpointId: string, mode: RestoreMode): Promise<RestoreOutcome> {
    return this.whileRestoring(() =>
      this.restoreNow(taskId, checkpointId, mode).catch((err: unknown) => {
        throw this.checkpointsDiskFull(err) ?? err;
      }),
    );
  }

  /**
   * Resolves once the restores and message edits under way have ended, or after `maxMs` (the
   * process stops: one waiting for another window's lock must not take the whole stop budget).
   */
  restoresEnded(maxMs: number): Promise<void> {
    return this.restoring.ended(maxMs);
  }

  /** Notes a restore (or message edit) under way until it ends (restoresEnded). */
  private whileRestoring<T>(run: () => Promise<T>): Promise<T> {
    return this.restoring.track(run());
  }

  private async restoreNow(taskId: string, checkpointId: string, mode: RestoreMode): Promise<RestoreOutcome> {
    return this.gitRequired(async () => {
      await this.settled(taskId);
      const engine = await this.engineOfTask(taskId);
      await this.assertKeptHere(taskId, engine.workspaceRoot);
      const target = await this.findOffered(engine, taskId, checkpointId);
      if (mode !== "task") {
        assertFilesRestorable(target);
        await this.assertNoOtherTaskActive(taskId);
      }
      if (mode !== "files") assertConversationRestorable(target);
      const held = await this.holdForRestore(taskId, restorePurpose(target));
      try {
        if (mode !== "task") await this.saveMissedCommandTurn(engine, taskId, target);
        const alone = () => this.assertNoOtherTaskActive(taskId);
        const flow = new RestoreFlow(engine, taskId, this.conversation, this.o.logger, alone);
        return { ...(await flow.restore(checkpointId, mode)), runStopped: held.stopped };
      } finally {
        held.end();
        // A restore an earlier process left part-way is no longer said once this one ended.
        this.workspaces.refreshNote(engine.workspaceRoot);
      }
    });
  }

  /**
   * A restore of a task that runs here stops its run first and waits for it to end (its command
   * killed, its last turn saved): restoring under a live run let the run write on after the
   * restore (a command's file came back, a turn was saved over the restored state). The task
   * ends interrupted at `end()`, after the restore, saying so in every window that follows it.
   */
  private async stopRunForRestore(taskId: string, why: string): Promise<{ end(): void } | undefined> {
    const stopped = await this.conversation?.stopRun?.(taskId, why);
    if (stopped) await this.settled(taskId);
    return stopped;
  }

  /**
   * The task is held here until `end()`, its run stopped first when it runs here (`stopped`):
   * other windows follow it here meanwhile and see what the restore tells them.
   */
  private async holdForRestore(taskId: string, why: string): Promise<{ stopped: boolean; end(): void }> {
    const stopped = await this.stopRunForRestore(taskId, why);
    if (stopped) return { stopped: true, end: () => stopped.end() };
    const held = await this.conversation?.holdForRestore?.(taskId);
    return { stopped: false, end: () => held?.end() };
  }

  /**
   * Restore Chat / Restore All for an edited earlier message; unchanged text restores nothing.
   * A `dryRun` answers what it would do and changes nothing.
   */
  async editMessage(
    taskId: string,
    messageId: string,
    text: string,
    mode: "restore_chat" | "restore_all",
    options: { dryRun?: boolean } = {},
  ): Promise<EditOutcome> {
    return this.whileRestoring(() => this.editMessageNow(taskId, messageId, text, mode, options));
  }

  private async editMessageNow(
    taskId: string,
    messageId: string,
    text: string,
    mode: "restore_chat" | "restore_all",
    options: { dryRun?: boolean },
  ): Promise<EditOutcome> {
    await this.settled(taskId);
    const engine = await this.engineOfTask(taskId);
    // Only a message the person sent is edited: one of the model's (or a tool's row) would be
    // rewound to and sent as if the person had written it. Refused before anything is saved.
    const role = (await this.conversation?.messageInfo(taskId, messageId))?.role;
    if (role === "assistant" || role === "tool" || role === "system")
      throw new DlineError(
        "invalid_argument",
        `Only a message you sent can be edited: ${messageId.slice(0, 80)} is ${role === "tool" ? "a tool's" : role === "system" ? "a system" : "the model's"} message.`,
      );
    if (mode === "restore_all") await this.assertNoOtherTaskActive(taskId);
    const alone = () => this.assertNoOtherTaskActive(taskId);
    const flow = new RestoreFlow(engine, taskId, this.conversation, this.o.logger, alone);
    const offered = await this.offeredFilter(taskId);
    const checkpointError = async () => {
      const status = await this.status({ taskId });
      return status.state === "failed" || status.state === "unavailable" || status.state === "disabled"
        ? status.message
        : undefined;
    };
    let everyChange = false;
    let runningChanges: ReadonlySet<string> | undefined;
    let held: { stopped: boolean; end(): void } | undefined;
    try {
      if (mode === "restore_all" && !(await checkpointError())) {
        // The checkpoint Restore All goes to (as RestoreFlow.editMessage finds it).
        const message = await this.conversation?.messageInfo(taskId, messageId);
        const changed = message !== undefined && message.text !== text;
        // Restore All writes files: a run of the task here is stopped first (see restore).
        if (changed && !options.dryRun) held = await this.holdForRestore(taskId, "for Restore All");
        const target =
          changed && (await this.conversation?.commandCalls?.(taskId))?.length
            ? restoreAllTarget((await engine.list(taskId)).filter(offered), messageId, message.createdAt)
            : undefined;
        // A dry run saves nothing: it answers as the restore will, after the missed turn's save,
        // which takes in every change since the checkpoint (as Compare's restore_paths says).
        if (target && options.dryRun) {
          everyChange = !!(await this.missedCommandAfter(engine, taskId, target));
          // A command still running is stopped first, and what it changed is restored too.
          if (!everyChange) runningChanges = await this.runningCommandChanges(engine, taskId, target);
        } else if (target) await this.saveMissedCommandTurn(engine, taskId, target);
      }
      const outcome = await flow.editMessage(messageId, text, mode, checkpointError, {
        ...options,
        offered,
        everyChange,
        runningChanges,
      });
      return { ...outcome, runStopped: held?.stopped ?? false };
    } finally {
      held?.end();
    }
  }

  private async find(engine: WorkspaceCheckpoints, taskId: string, checkpointId: string): Promise<CheckpointInfo> {
    return findCheckpoint(await engine.list(taskId), taskId, checkpointId, engine.unreadable(taskId));
  }

  // ---------------------------------------------------------------- task lookup, budget, deletion

  private async rootFor(query: { taskId?: string; workspaceRoot?: string }): Promise<string> {
    if (query.workspaceRoot) return this.rootOf([query.workspaceRoot]);
    if (query.taskId) return this.workspaceOfTask(query.taskId);
    throw new DlineError("invalid_argument", "Give a task id or a workspace root.");
  }

  /** Git not installed: a precondition the person can fix, said as such (not an internal error). */
  private async gitRequired<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof GitError && err.missing)
        throw new DlineError("failed_precondition", MESSAGES.gitMissing, { cause: err });
      throw this.checkpointsDiskFull(err) ?? err;
    }
  }

  /**
   * A full disk where the checkpoints are kept (their git, their lock) named as such: it read
   * "The disk is full.", which a person could take for the project's disk, with no idea where
   * to make room. A full workspace disk (a restore's writes) keeps its own answer.
   */
  private checkpointsDiskFull(err: unknown): DlineError | undefined {
    if (!isDiskFull(err) || err instanceof DlineError) return undefined;
    const dir = this.o.layout.checkpointsDir;
    const where = (err as NodeJS.ErrnoException).path;
    const ours =
      err instanceof GitError ||
      (typeof where === "string" && (where === dir || where.startsWith(dir + path.sep))) ||
      // A write's error names no file: the checkpoints' file system is full now, or it was not theirs.
      (where === undefined && nearlyFull(dir));
    if (!ours) return undefined;
    return new DlineError(
      "resource_exhausted",
      `The disk that holds the checkpoints (${dir}) is full. Make room there and try again.`,
      { cause: err },
    );
  }

  private async engineOfTask(taskId: string): Promise<WorkspaceCheckpoints> {
    return this.workspaces.entryFor(await this.workspaceOfTask(taskId)).engine;
  }

  /**
   * Refuses, saying where they are, an action on a task's checkpoints that its folder's
   * repository does not hold because they were saved for another folder: the task ran through a
   * link pointed elsewhere since (RepositoryRoots). Without this it read "No checkpoint of task …".
   */
  private async assertKeptHere(taskId: string, root: string): Promise<void> {
    const given = (await this.conversation?.workspaceRootsOf(taskId))?.[0];
    const keptFor = given && this.repositoryRoots.keptElsewhere(given, root, taskId);
    if (!keptFor) return;
    throw new DlineError(
      "failed_precondition",
      `The checkpoints of task ${taskId} were saved for ${keptFor}; its folder ${given} leads to ${root} now. Point it back to ${keptFor} to compare or restore them.`,
    );
  }

  /** The task's workspace: from the task store when attached, else found among the shadow repositories. */
  async workspaceOfTask(taskId: string): Promise<string> {
    assertSafeId("task id", taskId);
    const known = this.taskWorkspaces.get(taskId);
    if (known) return known;
    const roots = await this.conversation?.workspaceRootsOf(taskId);
    if (roots) {
      const root = this.rootOf(roots, taskId);
      this.taskWorkspaces.set(taskId, root);
      return root;
    }
    const found = await this.findTaskRepository(taskId);
    if (!found) {
      // A task the store does not know is not a task without checkpoints: say which it is.
      const exists = (await this.conversation?.taskExists?.(taskId)) ?? true;
      throw new DlineError(
        "not_found",
        exists ? `Task ${taskId} has no checkpoints.` : `Task ${taskId} does not exist.`,
      );
    }
    this.taskWorkspaces.set(taskId, found);
    return found;
  }

  private findTaskRepository(taskId: string): Promise<string | undefined> {
    return findTaskWorkspace(this.o.layout.checkpointsDir, taskId, this.o.env);
  }

  /** The size budget applied now; a failure is logged, never thrown (the save it follows stands). */
  private async checkBudget(workspaceRoot: string): Promise<void> {
    await this.enforceBudget(workspaceRoot).catch((err) =>
      this.o.logger.warn("checkpoint size budget check failed", { error: String(err) }),
    );
  }

  /** Applies the size budget to a workspace's repository now. */
  async enforceBudget(workspaceRoot: string): Promise<string[]> {
    const entry = this.workspaces.entryFor(this.rootOf([workspaceRoot]));
    return entry.engine.enforceBudget(this.o.budgetBytes, async (taskId) => {
      const known = await this.conversation?.taskState?.(taskId);
      if (known) return known;
      return this.running.has(taskId) ? "running" : "finished";
    });
  }

  /** A task was deleted: its refs go, other tasks' checkpoints stay. */
  /** Removes a task's checkpoint refs; answers the workspace whose repository held them. */
  async deleteTask(taskId: string, workspaceRoot: string): Promise<string | undefined> {
    // A baseline still being saved (it starts without anyone waiting) must land before the
    // task's refs go; otherwise it would write them again after the deletion.
    await this.baselines.get(taskId)?.catch(() => undefined);
    await this.settled(taskId);
    const root = workspaceRoot || (await this.findTaskRepository(taskId));
    this.baselines.delete(taskId);
    this.running.delete(taskId);
    this.taskWorkspaces.delete(taskId);
    if (!root) return undefined;
    const key = this.repositoryRoots.of(normaliseWorkspacePath(root), taskId);
    await this.workspaces.entryFor(key).engine.deleteTask(taskId);
    return key;
  }

  /** Frees what deleted checkpoints left in a workspace's repository (loose and packed objects). */
  async collectGarbage(workspaceRoot: string): Promise<void> {
    await this.workspaces
      .entryFor(this.repositoryRoots.of(normaliseWorkspacePath(workspaceRoot)))
      .engine.collectGarbage();
  }

  /** Resolves when no workspace of this process is packing objects in the background. */
  async idle(): Promise<void> {
    await Promise.allSettled(this.commandsStarting);
    await Promise.allSettled(this.workspaces.engines().map((e) => e.idle()));
  }

  /** The process stops: background packing gets a moment to finish, then ends. */
  async stop(): Promise<void> {
    // A turn's save the loop did not wait for lands first (the lifecycle's flush budget bounds this).
    await Promise.allSettled(this.saves.values());
    await Promise.allSettled(this.workspaces.engines().map((e) => e.stop()));
    // Whatever still runs (a scan, a save) would outlive the sidecar.
    this.children.killAll();
  }

  /** The last task went (or Delete Everything): the whole checkpoints folder goes. */
  async deleteAll(): Promise<void> {
    // Baselines and budget checks start without anyone waiting, and a save or an initialization
    // may be under way: their git processes would write into the folder again after it went.
    await Promise.allSettled([...this.baselines.values(), ...this.saves.values(), ...this.budgetChecks]);
    await this.workspaces.settle();
    // Reads (ListCheckpoints of a task being deleted) hold a repository's lock: each repository
    // is moved away under its lock, so that none is removed while in use.
    const dir = this.o.layout.checkpointsDir;
    for (const [i, engine] of this.workspaces.engines().entries()) {
      await engine
        .moveAway(path.join(dir, `.deleting-${process.pid}-${i}`))
        .catch((err: Error) =>
          this.o.logger.warn("moving a checkpoint repository away failed", { error: err.message }),
        );
    }
    this.workspaces.clear();
    this.baselines.clear();
    this.taskWorkspaces.clear();
    this.running.clear();
    // Retried: another process may still be finishing a write in a repository of its own.
    await fs.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }
}

/**
 * `restored` (paths of `changed` a restore changes), with those of `changed` a running command
 * changed (`running`, see runningCommandChanges) added, in `changed`'s order.
 */
function withRunningCommand(
  restored: readonly string[],
  changed: readonly string[],
  running: ReadonlySet<string> | undefined,
): string[] {
  if (!running?.size) return [...restored];
  const paths = new Set(restored);
  return changed.filter((p) => paths.has(p) || running.has(p));
}

/** Whether the file system holding `dir` (or its nearest existing folder) has under 1 MiB left. */
function nearlyFull(dir: string): boolean {
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      const st = statfsSync(at);
      return st.bavail * st.bsize < 1024 * 1024;
    } catch {
      if (path.dirname(at) === at) return false;
    }
  }
}
