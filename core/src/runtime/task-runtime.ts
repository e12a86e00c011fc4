import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import { toolCallDetail, toolCallOf } from "./tool-call-record.js";
import { DlineError } from "../errors.js";
import { canonicalWorkspacePath, assertSafeId, mkdirPrivate } from "../storage/index.js";
import {
  JournalStore,
  importLegacyConversation,
  MessageStore,
  type StoredUiMessage,
  MetricsStore,
  StateFile,
  TaskJsonFiles,
  TaskOwnedElsewhere,
  type TaskStatusName,
} from "../tasks/index.js";
import { endsWithAnswer, JOURNAL_KIND, type ToolResultsData, type UserMessageData } from "./conversation.js";
import { STOPPED_WHILE_ASKING, stoppedTurn, TOOL_CALL_PROGRESS, type StoppedTurn } from "./stopped-turn.js";
import { cutConversation } from "./conversation-cut.js";
import { RunStoppedFor, stoppedRunStatus } from "./run-stop.js";
import { LiveTask, maxBig, type KernelState } from "./live-task.js";
import type { FilesRestoredNote, RuntimeAsk, RuntimeEvent, RuntimeEventBody, TaskRunStatus } from "./runtime-events.js";
import { usageRecorder } from "./usage-recorder.js";
import { TaskEventLog } from "./event-log.js";
import { ShownSeqs } from "./shown-seqs.js";
import { readRecorded, recordRecent } from "./recent-events.js";
import type { ApprovalOverlay, ToolEnvironment, EditorFiles } from "../agent/index.js";
import type { CheckpointPort, RunnerModel } from "./ports.js";
import type { TurnLoop } from "./turn-loop.js";
import { noCapabilities, runAndRecordHooks, type HookEvent } from "./capabilities-port.js";
import { activityRecorder, buildTurnLoop } from "./loop-factory.js";
import type { TaskRuntimeDeps } from "./runtime-deps.js";
import { workspaceToContinueIn } from "./task-workspace.js";
import { attachCheckpoint } from "./tool-turn.js";

/** What the model reads when a task whose conversation ends with its own answer is resumed. */
const RESUMED_AFTER_ANSWER_NOTE = "[The task was resumed: go on from where it stopped.]";

/** How long Cancel waits for a run to stop before it reports the task cancelled anyway. */
const CANCEL_GRACE_MS = 1_500;
/**
 * How long a restore waits for the run it stopped to end (its command killed, its last save
 * made: a command turn's save scans the workspace) before refusing: unlike a Cancel, a restore
 * must not go on while the run could still write.
 */
const RUN_STOP_WAIT_MS = 30_000;
/** How many idle tasks stay loaded here with their events (keepIdle). */
const IDLE_TASKS_KEPT = 4;

type CheckpointStatusValue = Extract<RuntimeEventBody, { case: "checkpointStatus" }>["value"];

/**
 * Runs tasks in this sidecar: creates them, streams their events, passes the user's words and
 * decisions to the turn loop, cancels and resumes them. A task is written only by the sidecar
 * that owns it (TaskOwnership); others can read it.
 */
export class TaskRuntime {
  private readonly live = new Map<string, LiveTask>();
  /** Tasks loaded here and idle, the most recently idle last (keepIdle). */
  private readonly idleOrder: string[] = [];
  /** Host editors' file and terminal I/O per task (ACP sessions); tasks without one use the local tools. */
  private readonly environments = new Map<string, ToolEnvironment>();
  /** Per task: the files its client's editor reports as modified and unsaved (never stored). */
  private readonly unsavedInEditor = new Map<string, readonly string[]>();
  /** "Always" answers of a task's session (ACP), applied on top of the global approval settings. */
  private readonly approvalOverlays = new Map<string, ApprovalOverlay>();
  /** Per workspace (normalised root): how its checkpoints last said they were doing (checkpointStatusChanged). */
  private readonly checkpointStatuses = new Map<string, CheckpointStatusValue>();

  constructor(private readonly deps: TaskRuntimeDeps) {
    deps.ownership.setRunningTaskStopper((taskId) => this.unload(taskId));
  }

  /**
   * Routes a task's file and terminal I/O through a host editor from its next tool call on
   * (undefined: back to the local tools). Kept for this process only.
   */
  setToolEnvironment(taskId: string, environment: ToolEnvironment | undefined): void {
    if (environment) this.environments.set(taskId, environment);
    else this.environments.delete(taskId);
  }

  /**
   * Records the files the task's editor has modified and unsaved (replacing the last report):
   * edits to them are refused from now on, with the reason for the model. Kept for this
   * process only; a client reports again after a restart.
   */
  setUnsavedInEditor(taskId: string, files: readonly string[]): void {
    if (!this.live.has(taskId) && !this.deps.history.get(taskId))
      throw new DlineError("not_found", `Task ${taskId} does not exist.`);
    if (files.length > 0) this.unsavedInEditor.set(taskId, files.slice(0, 500));
    else this.unsavedInEditor.delete(taskId);
  }

  /**
   * Applies a session's "always" answers to a task from its next decision on (undefined: the
   * global settings alone). Kept for this process only; `overlay` is read at each decision.
   */
  setApprovalOverlay(taskId: string, overlay: ApprovalOverlay | undefined): void {
    if (overlay) this.approvalOverlays.set(taskId, overlay);
    else this.approvalOverlays.delete(taskId);
  }

  /**
   * `options.taskId` lets a caller choose the id in advance (an ACP session id is the task id);
   * `options.editor`: the files the editor shows, when the client reports them.
   */
  async newTask(
    workspaceRoot: string,
    text: string,
    profileId: string,
    options: { taskId?: string; editor?: EditorFiles } = {},
  ): Promise<string> {
    if (!text.trim()) throw new DlineError("invalid_argument", "A task needs some text.");
    if (!workspaceRoot) throw new DlineError("invalid_argument", "A task needs a workspace_root.");
    if (!fs.existsSync(workspaceRoot) || !fs.statSync(workspaceRoot).isDirectory()) {
      throw new DlineError("invalid_argument", `The workspace ${workspaceRoot} is not a folder.`);
    }
    // Resolve the model first: a missing profile or key fails before anything is written.
    const model = await this.deps.resolveModel(profileId, "");
    // The workspace's checkpoints scan while the task is set up (the baseline takes that scan).
    this.deps.prepareCheckpoints?.(workspaceRoot);
    const id = options.taskId ?? TaskRuntime.newTaskId();
    assertSafeId("task id", id);
    if (this.deps.history.get(id) || this.live.has(id))
      throw new DlineError("already_exists", `Task ${id} already exists.`);
    const files = this.deps.layout.task(id);
    mkdirPrivate(files.dir);
    this.deps.ownership.claim(id);
    const title = titleOf(text);
    // task_metadata.json lets the index be rebuilt from the folders if taskHistory.db is lost.
    new TaskJsonFiles(files).writeMetadata({ id, title, workspaceRoot, createdAt: Date.now(), source: "dline" });
    await this.deps.history.upsert({ id, workspaceRoot, title, taskText: text.slice(0, 10_000), status: "running" });
    const task = this.open(id, {
      status: "running",
      workspaceRoot,
      profileId: model.profileId,
      inputQueue: [],
      lastSeq: "0",
      updatedAt: Date.now(),
    });
    // The workspace's checkpoints may have got on before the task was there (they start with the
    // sidecar for `dline task`, or an earlier task's): it starts from how they are doing now,
    // a repair's note included, as a task there already was told.
    const known = this.checkpointStatuses.get(canonicalWorkspacePath(workspaceRoot));
    if (known) task.events.append({ case: "checkpointStatus", value: known });
    const checkpoints = this.deps.checkpointsFor(id, workspaceRoot);
    const loop = this.loopFor(task, model, checkpoints);
    await this.taskHooks(task, "TaskStart", { text, workspaceRoot });
    if (options.editor?.unsavedFiles) this.setUnsavedInEditor(id, options.editor.unsavedFiles);
    const first = await loop.addUserMessage(text, { firstMessage: true, editor: options.editor });
    // The baseline starts now, anchored on the task's first message (a "task" restore to it keeps
    // that message); tools that may modify the workspace wait for it (edits in
    // CheckpointPort.beforeEdit); read-only ones do not.
    // The run's ending status comes after the baseline is told, as after its turns' checkpoints.
    const baseline = checkpoints
      ?.baseline(first.id)
      .then(this.checkpointSavedAt(task, first, "CHECKPOINT_KIND_BASELINE"))
      .catch((err: Error) => this.deps.logger.warn("baseline checkpoint failed", { taskId: id, error: err.message }));
    if (baseline) loop.settleBaselineBeforeEnd(baseline);
    this.start(task, loop);
    return id;
  }

  /**
   * A checkpoint saved as a run starts (the task's baseline, a later run's save of what the person
   * changed since the task last ran), anchored on `message`: recorded on it and told to the
   * subscribers, as a turn's checkpoint is. A message with a checkpoint of its own keeps it (the
   * listing has the new one).
   */
  private checkpointSavedAt(
    task: LiveTask,
    message: StoredUiMessage,
    kind: "CHECKPOINT_KIND_BASELINE" | "CHECKPOINT_KIND_TURN",
  ): (checkpointId: string) => void {
    return (checkpointId) => {
      if (message.checkpointId) return;
      try {
        attachCheckpoint({ messages: task.messages, events: task.events }, message, checkpointId, kind);
      } catch (err) {
        // The message went meanwhile (a restore cut the conversation), or the disk is full.
        this.deps.logger.warn("recording a checkpoint on its message failed", {
          taskId: task.id,
          error: (err as Error).message,
        });
      }
    };
  }

  /** A fresh task id, in the form every task id has. */
  static newTaskId(): string {
    return `${Date.now()}-${randomUUID().slice(0, 8)}`;
  }

  /**
   * Loads a task of this process's history (for subscribing or continuing). `continuing`: the
   * caller runs it next, so a run its dead sidecar left is settled without announcing the
   * interruption (the new run's status follows at once).
   */
  private load(taskId: string, options: { continuing?: boolean } = {}): LiveTask {
    const existing = this.live.get(taskId);
    if (existing) return existing;
    const record = this.deps.history.get(taskId);
    if (!record) throw new DlineError("not_found", `Task ${taskId} does not exist.`);
    const files = this.deps.layout.task(taskId);
    const state = new StateFile<KernelState>(files.stateJson, files.stateJsonBak, this.deps.logger).read();
    const kernel: KernelState = state.value ?? {
      status: record.status,
      workspaceRoot: record.workspaceRoot,
      profileId: "",
      inputQueue: [],
      lastSeq: "0",
      updatedAt: Date.now(),
    };
    const task = this.open(taskId, kernel);
    this.recoverDeadRun(task, !options.continuing);
    return task;
  }

  /**
   * A task that was running or waiting for an answer when its sidecar died (no live process
   * owns it): its calls still pending or running, its half-streamed text and its question are
   * settled as interrupted (the question as dropped), and its status becomes INTERRUPTED, on
   * disk and on the stream, so a client that subscribes again sees it at once.
   */
  private recoverDeadRun(task: LiveTask, announce: boolean): void {
    if (task.kernel.status !== "running" && task.kernel.status !== "waiting") return;
    if (task.run || this.deps.ownership.owner(task.id)) return;
    try {
      this.deps.ownership.claim(task.id);
    } catch (err) {
      if (err instanceof DlineError && err.code === "failed_precondition") return; // another sidecar took it meanwhile
      throw err;
    }
    try {
      for (const message of task.messages.list()) {
        const call = toolCallOf(message);
        const unfinished = call ? !["done", "failed", "denied", "interrupted"].includes(call.status) : message.partial;
        if (!unfinished) continue;
        if (call)
          message.detail = toolCallDetail({
            ...call,
            status: "interrupted",
            reason:
              call.status === "pending"
                ? STOPPED_WHILE_ASKING
                : "The sidecar running the task stopped before this call finished.",
          });
        // A text still streaming when its sidecar died ends there: cut off, as a Cancel leaves it.
        if (message.partial && !call && message.kind === "text") message.cutOff = true;
        message.partial = false;
        task.messages.update(message);
        task.events.append({ case: "messageFinalized", value: { message: { ...message } } });
      }
      const askId = (task.kernel.pendingAsk as { askId?: unknown } | undefined)?.askId;
      if (typeof askId === "string" && askId)
        task.events.append({ case: "askResolved", value: { askId, approved: false, text: "", dropped: true } });
      if (announce) this.setStatus(task, "interrupted", "the sidecar running the task stopped");
      else
        this.saveKernel(task, {
          status: "interrupted",
          statusReason: "the sidecar running the task stopped",
          pendingAsk: undefined,
        });
      this.deps.logger.info("a task left running by a stopped sidecar is interrupted", { taskId: task.id });
    } finally {
      this.deps.ownership.release(task.id);
      this.closeStoresIfIdle(task);
    }
  }

  private open(taskId: string, kernel: KernelState): LiveTask {
    const files = this.deps.layout.task(taskId);
    const shown = new ShownSeqs(files.shownSeqsDir);
    const task = new LiveTask(
      taskId,
      files,
      {
        messages: () => MessageStore.open(this.deps.sqlite, files.messagesDb),
        journal: () => JournalStore.open(this.deps.sqlite, files.journalDb),
        metrics: () => MetricsStore.open(this.deps.sqlite, files.metricsDb),
      },
      new StateFile<KernelState>(files.stateJson, files.stateJsonBak, this.deps.logger),
      new TaskEventLog(
        taskId,
        // Above what any process showed of it (a window that does not hold it too: shown-seqs.ts).
        reservedOnDisk(kernel, shown),
        (upTo) => {
          // Runs before the event is handed out: the reservation is on disk first (when the disk
          // lets it: a full disk must not stop the events that say so).
          task.kernel = { ...task.kernel, seqReserved: upTo.toString() };
          if (this.deps.ownership.holds(taskId)) {
            this.writeState(task);
            shown.removeEnded(upTo);
          } else this.reserveShown(task, shown, upTo);
        },
        undefined,
        // Older events of a long task wait in a file of this process instead of memory.
        { dir: files.tmpDir },
        (err) =>
          this.deps.logger.warn("keeping a task's older events in memory: their file could not be written", {
            taskId,
            code: (err as NodeJS.ErrnoException).code,
          }),
      ),
      kernel,
    );
    task.recorded = readRecorded(taskId, kernel.recentEvents);
    task.storedUpdatedAt = kernel.updatedAt;
    this.live.set(taskId, task);
    return task;
  }

  private saveKernel(task: LiveTask, patch: Partial<KernelState> = {}): void {
    task.kernel = {
      ...task.kernel,
      ...patch,
      lastSeq: task.events.lastSeq.toString(),
      recentEvents: recordRecent(task.recorded, task.events),
      updatedAt: Date.now(),
    };
    if (this.deps.ownership.holds(task.id)) this.writeState(task);
  }

  /** A reservation of a process that does not hold the task, in its own file (a full disk: logged, the event still goes out). */
  private reserveShown(task: LiveTask, shown: ShownSeqs, upTo: bigint): void {
    try {
      shown.reserve(upTo);
    } catch (err) {
      this.deps.logger.warn("task seqs not reserved", { taskId: task.id, code: (err as NodeJS.ErrnoException).code });
    }
  }

  /**
   * Writes state.json. A write that fails (a full disk) leaves the previous state.json.bak in
   * place and the kernel in memory; the next save writes it. It never throws: the run that
   * saves is the one that reports the failure to the person.
   */
  private writeState(task: LiveTask): void {
    try {
      task.state.write(task.kernel);
      task.storedUpdatedAt = task.kernel.updatedAt;
    } catch (err) {
      this.deps.logger.warn("task state not saved", {
        taskId: task.id,
        code: (err as NodeJS.ErrnoException).code,
        error: (err as Error).message,
      });
    }
  }

  private loopFor(task: LiveTask, model: RunnerModel, checkpoints: CheckpointPort | undefined): TurnLoop {
    // Tools run in the task's workspace, never in the sidecar's own current folder.
    if (!task.kernel.workspaceRoot) throw new DlineError("failed_precondition", `Task ${task.id} has no workspace.`);
    const { deps } = this;
    const usage = usageRecorder(task, deps.history, deps.logger);
    const taskMode = deps.taskMode;
    return buildTurnLoop(
      deps,
      {
        taskId: task.id,
        workspaceRoot: task.kernel.workspaceRoot,
        files: task.files,
        events: task.events,
        toolCallIds: task.toolCallIds,
        asks: task.asks,
        messages: task.messages,
        journal: task.journal,
        usage,
        setStatus: (status, reason) => {
          // Messages sent while the run went (here or from another window) are answered next, in
          // this run (start): the task is not complete, and is not announced so. A window that
          // took that for the end stopped following, and a `dline` that ran the task stopped its
          // sidecar with the message unanswered.
          if (status === "completed" && task.kernel.inputQueue.length > 0 && !task.run?.controller.signal.aborted) {
            task.heldCompletion = reason ?? "";
            return;
          }
          this.setStatus(task, status, reason);
        },
        depth: 0,
        environment: () => this.environments.get(task.id),
        unsavedInEditor: () => this.unsavedInEditor.get(task.id) ?? [],
        approvalOverlay: () => this.approvalOverlays.get(task.id),
        mode: taskMode ? () => taskMode(task.id, task.kernel.workspaceRoot) : undefined,
      },
      model,
      checkpoints,
    );
  }

  private setStatus(task: LiveTask, status: TaskRunStatus, reason = ""): void {
    const alreadyStored = task.kernel.status === status && status !== "waiting";
    // The row is written before the change is announced: a window that sees the task end may ask
    // another sidecar to restore files at once, and that sidecar reads the row to know it ended.
    // The claim is released after it too (a sidecar finding an unclaimed row still saying running
    // takes it for a run whose sidecar died).
    if (!alreadyStored) this.storeStatus(task.id, status);
    // The stream announces every change it has not announced yet in this process (so a new
    // task's first "running" too). The stored status is written only when it changes, so the
    // files do not depend on how many sidecars a task's life was spread over.
    if (task.lastStatus !== status || status === "waiting") {
      task.lastStatus = status;
      task.events.append({ case: "statusChanged", value: { status, reason } });
    }
    if (alreadyStored && (task.kernel.statusReason ?? "") === reason) return;
    const ask = status === "waiting" ? this.pendingAsk(task.id) : undefined;
    this.saveKernel(task, { status, statusReason: reason, pendingAsk: ask });
  }

  private storeStatus(taskId: string, status: TaskRunStatus): void {
    let error: string | undefined;
    try {
      if (!this.deps.history.updateAfterQueued(taskId, { status, updatedAt: Date.now() }))
        error = "the task is not in the history";
    } catch (err) {
      error = (err as Error).message;
    }
    if (error) this.deps.logger.error("history status update failed", { taskId, error });
  }

  private start(task: LiveTask, loop: TurnLoop): void {
    const controller = new AbortController();
    const onShutdown = () => controller.abort(new DlineError("unavailable", "The sidecar is stopping."));
    this.deps.shutdownSignal.addEventListener("abort", onShutdown, { once: true });
    const done = (async () => {
      try {
        let outcome = await loop.run(controller.signal);
        // Messages sent while the run was going start the next run at once.
        while ((outcome === "completed" || outcome === "idle") && !controller.signal.aborted) {
          const [next, ...rest] = task.kernel.inputQueue;
          if (next === undefined) break;
          task.heldCompletion = undefined;
          this.saveKernel(task, { inputQueue: rest });
          await loop.addUserMessage(next);
          outcome = await loop.run(controller.signal);
        }
        this.settleHeldCompletion(task, controller.signal);
        if (this.deps.shutdownSignal.aborted)
          this.saveKernel(task, { status: "interrupted", statusReason: "the sidecar stopped" });
      } finally {
        this.deps.shutdownSignal.removeEventListener("abort", onShutdown);
        task.run = undefined;
        this.saveKernel(task);
        this.releaseIfIdle(task);
      }
    })().catch((err: unknown) => {
      // The loop reports its own failures; what escapes it (a store that could not even
      // record the failure) is logged, never left to end the process.
      this.deps.logger.error("task run ended with an error", {
        taskId: task.id,
        code: (err as NodeJS.ErrnoException)?.code,
        error: (err as Error)?.message,
      });
    });
    task.run = { controller, done };
    task.runSettled = done;
  }

  /**
   * A completion held back for queued messages (see loopFor) whose run stopped before taking
   * them: a stopping sidecar leaves the task interrupted (a resume answers them), a Cancel
   * cancelled; otherwise the completion is announced after all.
   */
  private settleHeldCompletion(task: LiveTask, signal: AbortSignal): void {
    const reason = task.heldCompletion;
    if (reason === undefined) return;
    task.heldCompletion = undefined;
    if (this.deps.shutdownSignal.aborted) this.setStatus(task, "interrupted", "the sidecar stopped");
    else if (signal.aborted) {
      const stopped = stoppedRunStatus(signal.reason);
      if (stopped) this.setStatus(task, stopped.status, stopped.reason);
    } else this.setStatus(task, "completed", reason);
  }

  private async continueTask(task: LiveTask, stopped?: StoppedTurn): Promise<void> {
    importLegacyConversation(this.deps.sqlite, task.files);
    const model = await this.deps.resolveModel(task.kernel.profileId, task.id);
    const checkpoints = this.deps.checkpointsFor(task.id, task.kernel.workspaceRoot);
    const loop = this.loopFor(task, model, checkpoints);
    // A task whose first run stopped before its baseline was saved (the sidecar killed during
    // the scan, or while the first approval waited) gets it now, anchored on its first message
    // and told as at its start: saved later by the first tool, it named no message, and the chat
    // had no checkpoint before the task's first change. A task that has one keeps it.
    const first = task.messages.list()[0];
    if (first && !first.checkpointId && checkpoints) {
      const baseline = checkpoints
        .baseline(first.id)
        .then(this.checkpointSavedAt(task, first, "CHECKPOINT_KIND_BASELINE"))
        .catch((err: Error) =>
          this.deps.logger.warn("baseline checkpoint failed", { taskId: task.id, error: err.message }),
        );
      loop.settleBaselineBeforeEnd(baseline);
    }
    // The person may have changed files since the task last ran: they are not the task's.
    const last = task.messages.list().at(-1);
    checkpoints?.runStarting(last?.id ?? "", last && this.checkpointSavedAt(task, last, "CHECKPOINT_KIND_TURN"));
    if (stopped) loop.continueStoppedTurn(stopped);
    await this.taskHooks(task, "TaskResume", {});
    this.start(task, loop);
  }

  /**
   * Claims a task for writing in this process and returns its live state. A task is claimed
   * only while it runs or waits for an answer; when another sidecar continued it in between,
   * its state on disk is newer than ours, so it is loaded again first.
   */
  private claimForWrite(taskId: string): LiveTask {
    let task = this.load(taskId, { continuing: true });
    if (!this.deps.ownership.holds(taskId)) {
      this.deps.ownership.claim(taskId, { reentrant: true });
      const onDisk = task.state.read().value;
      if (onDisk && onDisk.updatedAt !== task.storedUpdatedAt && !task.run) {
        this.live.delete(taskId);
        task.close();
        task = this.load(taskId, { continuing: true });
      } else if (onDisk) {
        // A follower in another sidecar starts from the reservation on disk (its own copy's
        // first seq): events from here go above it, or that window would never show them.
        task.events.continueAbove(reservedOnDisk(onDisk, new ShownSeqs(task.files.shownSeqsDir)));
      }
    }
    return task;
  }

  /**
   * `load`, except that a task loaded here earlier that another sidecar has run since (its
   * state on disk is newer, and nothing runs or waits here) is loaded again: its events
   * continue after the other sidecar's seqs, and a run that sidecar left when it died is
   * settled as interrupted. So is a copy loaded while another sidecar ran the task, which then
   * died (its state on disk unchanged, still running or waiting, and nobody's claim): kept, it
   * said "waiting" for good. The stale copy's subscribers see their stream end.
   */
  private loadCurrent(taskId: string): LiveTask {
    const loaded = this.live.get(taskId);
    if (loaded && this.isStale(loaded)) {
      this.live.delete(taskId);
      this.closeTask(loaded);
    }
    return this.load(taskId);
  }

  private isStale(loaded: LiveTask): boolean {
    if (loaded.run || this.deps.ownership.holds(loaded.id)) return false;
    const leftByDeadOwner =
      (loaded.kernel.status === "running" || loaded.kernel.status === "waiting") &&
      !this.deps.ownership.owner(loaded.id);
    return leftByDeadOwner || this.changedElsewhere(loaded);
  }

  private changedElsewhere(loaded: LiveTask): boolean {
    const onDisk = loaded.state.read().value;
    return onDisk !== undefined && onDisk.updatedAt !== loaded.storedUpdatedAt;
  }

  /**
   * Another process changed the task since this one loaded it, and nothing runs or holds it
   * here: the next Subscribe loads it again. False when it is not loaded here.
   */
  loadedCopyIsStale(taskId: string): boolean {
    const loaded = this.live.get(taskId);
    if (!loaded || loaded.run || this.deps.ownership.holds(taskId)) return false;
    try {
      return this.changedElsewhere(loaded);
    } catch {
      return false; // state.json unreadable: Subscribe says so when it loads the task
    }
  }

  /** Another live sidecar holds the task: the sentence says so, with its pid. */
  private ownedElsewhere(taskId: string): TaskOwnedElsewhere | undefined {
    const owner = this.deps.ownership.owner(taskId);
    return owner && !this.deps.ownership.holds(taskId) ? new TaskOwnedElsewhere(taskId, owner) : undefined;
  }

  private taskHooks(task: LiveTask, event: HookEvent, payload: Record<string, unknown>) {
    const ctx = { taskId: task.id, workspaceRoot: task.kernel.workspaceRoot };
    return runAndRecordHooks(
      this.deps.capabilities ?? noCapabilities,
      activityRecorder(this.deps, task.files),
      event,
      payload,
      ctx,
    );
  }

  /** A run ended and nothing is pending: other sidecars may continue the task now. */
  private releaseIfIdle(task: LiveTask): void {
    if (!task.run && !task.asks.pendingAskId && this.deps.ownership.holds(task.id)) {
      // Events since the last save (a file restore's) go on disk with it: a window whose
      // sidecar did not follow this process in time reads them there (recent-events.ts).
      if (task.kernel.lastSeq !== task.events.lastSeq.toString()) this.saveKernel(task);
      this.deps.ownership.release(task.id);
    }
    this.closeStoresIfIdle(task);
  }

  /**
   * A task that nothing runs, asks or claims here closes its databases (they open again on the
   * next use): a sidecar keeps every task it showed or ran loaded, and an open connection keeps
   * its WAL and shared-memory files on disk.
   */
  private closeStoresIfIdle(task: LiveTask): void {
    if (!this.isIdle(task)) return;
    this.logCloseFailure(task, () => task.closeStores());
    this.keepIdle(task);
  }

  private isIdle(task: LiveTask): boolean {
    return !task.run && !task.asks.pendingAskId && !this.deps.ownership.holds(task.id);
  }

  /**
   * Only the tasks idle here most recently stay loaded (a client may come back for the events
   * it missed): an older idle task that nobody follows is unloaded, its events with it, as if
   * this sidecar had restarted. A sidecar of an editor window shows and runs task after task
   * all day, and each long one held megabytes of events for good.
   */
  private keepIdle(task: LiveTask): void {
    const at = this.idleOrder.indexOf(task.id);
    if (at >= 0) this.idleOrder.splice(at, 1);
    this.idleOrder.push(task.id);
    while (this.idleOrder.length > IDLE_TASKS_KEPT) {
      const id = this.idleOrder.shift()!;
      const old = this.live.get(id);
      if (!old || !this.isIdle(old) || old.events.subscribers > 0) continue;
      // What the editor reported unsaved for it stays: the next message must not edit those files.
      this.live.delete(id);
      this.closeTask(old);
    }
  }

  /**
   * The task's events after `afterSeq`, then live ones. A subscriber behind what this process
   * holds (it followed the task in an earlier sidecar) gets the task's current status first,
   * with the seq this process started from, so it never shows a status the task left.
   */
  async *subscribe(taskId: string, afterSeq: bigint, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    const task = this.loadCurrent(taskId);
    const base = task.events.baseSeq;
    // Behind this process's first seq: first what the process that held the task before left
    // of its events (a restore made by a process that let go of the task at once).
    for (const event of task.recorded) if (event.seq > afterSeq && event.seq <= base) yield event;
    if (afterSeq < base && task.events.lastSeq === base) {
      yield {
        seq: base,
        taskId,
        time: BigInt(Date.now()),
        event: { case: "statusChanged", value: { status: task.kernel.status, reason: task.kernel.statusReason ?? "" } },
      };
    }
    yield* task.events.subscribe(afterSeq, signal);
  }

  /**
   * A consistent view of a task loaded in this process, for GetTask: the messages (pending
   * appends committed first) and the seq of the last event, taken together, so a client that
   * renders them and subscribes after that seq misses nothing and sees nothing twice.
   * Undefined when the task is not loaded here (the stored view is then the whole truth).
   */
  liveView(taskId: string):
    | {
        lastSeq: bigint;
        messages: StoredUiMessage[];
        status: TaskStatusName;
        statusReason: string;
        pendingAsk: RuntimeAsk | undefined;
        stopped: boolean;
      }
    | undefined {
    if (!this.live.has(taskId)) return undefined;
    // A copy another sidecar has changed since (it ran the task, or restored it) is loaded
    // again, as Subscribe does: before, a window that had shown a waiting task answered
    // "waiting", with the messages a restore removed, long after. A task that cannot be
    // loaded again (damaged meanwhile) is answered from what is stored.
    let task: LiveTask;
    try {
      task = this.loadCurrent(taskId);
    } catch {
      return undefined;
    }
    const pendingAsk = this.pendingAsk(taskId);
    // Nothing runs it here, and no other sidecar does: a call left unfinished was interrupted.
    const stopped =
      !task.run && !pendingAsk && (this.deps.ownership.holds(taskId) || !this.deps.ownership.owner(taskId));
    const view = {
      lastSeq: task.events.lastSeq,
      messages: task.messages.list(),
      status: task.kernel.status,
      statusReason: task.kernel.statusReason ?? "",
      pendingAsk,
      stopped,
    };
    this.closeStoresIfIdle(task);
    return view;
  }

  /** The seq of the last event of a task loaded here (undefined: not loaded). */
  loadedLastSeq(taskId: string): bigint | undefined {
    return this.live.get(taskId)?.events.lastSeq;
  }

  /** The seq a subscriber continues after, for a task not loaded here: from state.json (0 if unreadable). */
  storedLastSeq(taskId: string): bigint {
    return this.storedView(taskId).lastSeq;
  }

  /**
   * For a task not loaded here, from state.json: the seq a subscriber continues after, and why
   * the task stands at its status (0 and "" when unreadable).
   */
  storedView(taskId: string): { lastSeq: bigint; statusReason: string } {
    try {
      const files = this.deps.layout.task(taskId);
      const state = new StateFile<KernelState>(files.stateJson, files.stateJsonBak).read().value;
      const lastSeq = BigInt(state?.lastSeq ?? "0");
      const reserved = BigInt(state?.seqReserved ?? "0");
      const statusReason = typeof state?.statusReason === "string" ? state.statusReason : "";
      return { lastSeq: lastSeq > reserved ? lastSeq : reserved, statusReason };
    } catch {
      return { lastSeq: 0n, statusReason: "" };
    }
  }

  /** The question a task waits on in this process, as it was asked (for GetTask). */
  pendingAsk(taskId: string): RuntimeAsk | undefined {
    const task = this.live.get(taskId);
    const askId = task?.asks.pendingAskId;
    if (!task || !askId) return undefined;
    const event = task.events.findLast((e) => e.event.case === "ask" && e.event.value.askId === askId);
    return event?.event.case === "ask" ? event.event.value : undefined;
  }

  /**
   * Settles the folder a task continues in (see workspaceToContinueIn): a folder the caller names
   * for a task that has none is recorded (state, history row, task_metadata.json). A task that
   * cannot continue is not left claimed.
   */
  private async settleWorkspace(task: LiveTask, given: string | undefined): Promise<void> {
    let chosen;
    try {
      chosen = workspaceToContinueIn(task.id, task.kernel.workspaceRoot, given);
    } catch (err) {
      this.releaseIfIdle(task);
      throw err;
    }
    if (!chosen.changed) return;
    const { workspaceRoot } = chosen;
    this.saveKernel(task, { workspaceRoot });
    this.recordInMetadata(task, { workspaceRoot }, "workspace");
    await this.deps.history.update(task.id, { workspaceRoot });
  }

  async sendMessage(
    taskId: string,
    text: string,
    options: { workspaceRoot?: string; editor?: EditorFiles } = {},
  ): Promise<void> {
    if (!text.trim()) throw new DlineError("invalid_argument", "The message is empty.");
    const task = this.claimForWrite(taskId);
    if (options.editor?.unsavedFiles) this.setUnsavedInEditor(taskId, options.editor.unsavedFiles);
    if (task.asks.pendingAskId) {
      // A message while a question is pending answers it.
      task.asks.respond(task.asks.pendingAskId, { approve: true, text });
      return;
    }
    if (task.run) {
      this.saveKernel(task, { inputQueue: [...task.kernel.inputQueue, text] });
      return;
    }
    await this.settleWorkspace(task, options.workspaceRoot);
    importLegacyConversation(this.deps.sqlite, task.files);
    const model = await this.deps.resolveModel(task.kernel.profileId, taskId);
    const checkpoints = this.deps.checkpointsFor(taskId, task.kernel.workspaceRoot);
    const loop = this.loopFor(task, model, checkpoints);
    // The first message of a task restored to before its first one: the title follows it.
    if (!task.messages.list().some((m) => m.role === "user")) await this.retitle(task, text);
    const message = await loop.addUserMessage(text, { editor: options.editor });
    // The person may have changed files since the task last ran: they are not the task's.
    checkpoints?.runStarting(message.id, this.checkpointSavedAt(task, message, "CHECKPOINT_KIND_TURN"));
    this.start(task, loop);
  }

  /**
   * The task's title and searched text are its first message ("" while it has none, after a
   * restore to before it): in the history index and in task_metadata.json.
   */
  private async retitle(task: LiveTask, text: string): Promise<void> {
    const title = titleOf(text);
    this.recordInMetadata(task, { title }, "title");
    await this.deps.history.update(task.id, { title, taskText: text.slice(0, 10_000) });
  }

  /**
   * Fields of task_metadata.json (from which the index is rebuilt if it is lost). A damaged file
   * is left as it is: the index (and the task's state) hold the value.
   */
  private recordInMetadata(task: LiveTask, fields: { title?: string; workspaceRoot?: string }, what: string): void {
    const files = new TaskJsonFiles(task.files);
    try {
      files.writeMetadata({ ...(files.readMetadata() ?? { id: task.id }), ...fields });
    } catch (err) {
      this.deps.logger.warn(`recording the ${what} in task_metadata.json failed`, {
        taskId: task.id,
        error: (err as Error).message,
      });
    }
  }

  respond(taskId: string, askId: string, approve: boolean, text: string, reason?: string): void {
    const task = this.live.get(taskId);
    if (!task || !task.asks.pendingAskId) {
      throw (
        this.ownedElsewhere(taskId) ??
        new DlineError("failed_precondition", `Task ${taskId} is not waiting for an answer.`)
      );
    }
    task.asks.respond(askId, { approve, text, reason });
  }

  async cancel(taskId: string): Promise<void> {
    const task = this.live.get(taskId);
    if (!task?.run)
      throw this.ownedElsewhere(taskId) ?? new DlineError("failed_precondition", `Task ${taskId} is not running.`);
    task.run.controller.abort(new DlineError("canceled", "The task was cancelled."));
    // Every step of a run stops on the abort; one that does not (a stuck file system, a
    // checkpoint still saving) does not hold the Cancel: the task is cancelled all the same.
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      task.run.done.then(
        () => true,
        () => true,
      ),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), CANCEL_GRACE_MS))),
    ]);
    clearTimeout(timer);
    if (!ended) {
      this.deps.logger.warn("a cancelled run did not stop in time; it is left to finish in the background", { taskId });
      this.setStatus(task, "cancelled", "cancelled");
    }
    await this.taskHooks(task, "TaskCancel", {});
  }

  /**
   * Holds the task here while a restore changes it (its files, its conversation), unless a run
   * here holds it (stopRun): a window following it from another sidecar then follows this one,
   * and sees what the restore tells (`files_restored`, `rewound`). Released at `end`.
   */
  holdForRestore(taskId: string): { end(): void } {
    if (this.deps.ownership.holds(taskId)) return { end: () => {} };
    this.claimForWrite(taskId);
    return {
      end: () => {
        const task = this.live.get(taskId);
        if (task) this.releaseIfIdle(task);
      },
    };
  }

  /**
   * Stops the task's run here, if it has one, for `why` ("for a restore of checkpoint …"), and
   * waits for it to end: its tools and commands are stopped and its last save made, so what a
   * restore then writes is not written over. The task stays claimed here, its status unsaid,
   * until `end` of the answer: then it ends interrupted, saying why, unless what was done set
   * its status (a rewind). Undefined when nothing runs here. A run that does not end in time is
   * refused (nothing is restored).
   */
  async stopRun(taskId: string, why: string): Promise<{ end(): void } | undefined> {
    const run = this.live.get(taskId)?.run;
    if (!run) return undefined;
    run.controller.abort(new RunStoppedFor(why));
    const end = () => {
      const task = this.live.get(taskId);
      if (!task) return;
      // Unless what was done since said how the task stands (a rewind), it stopped here.
      if (task.lastStatus === "running" || task.lastStatus === "waiting")
        this.setStatus(task, "interrupted", `stopped ${why}`);
      this.releaseIfIdle(task);
    };
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      run.done.then(
        () => true,
        () => true,
      ),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), RUN_STOP_WAIT_MS))),
    ]);
    clearTimeout(timer);
    if (!ended) {
      void run.done.then(end, end);
      throw new DlineError(
        "unavailable",
        `Task ${taskId} was stopped, but its last step has not ended yet (a command or a save still running): nothing was restored. Try again in a moment.`,
      );
    }
    this.claimForWrite(taskId);
    return { end };
  }

  /** Reopens an interrupted (or cancelled) task and continues where it stopped. */
  async resume(taskId: string, options: { workspaceRoot?: string } = {}): Promise<void> {
    const task = this.claimForWrite(taskId);
    if (task.run) throw new DlineError("failed_precondition", `Task ${taskId} is already running.`);
    await this.settleWorkspace(task, options.workspaceRoot);
    importLegacyConversation(this.deps.sqlite, task.files);
    const entries = task.journal.entries();
    // Rewound to before its first message (Restore All of it): there is nothing to go on from, and
    // a request without messages is refused by every API.
    if (!entries.some((e) => e.kind === JOURNAL_KIND.user || e.kind === JOURNAL_KIND.compaction)) {
      throw new DlineError(
        "failed_precondition",
        `Task ${taskId} has no message to go on from (it was restored to before its first one): send a message to start it again.`,
      );
    }
    const stopped = stoppedTurn(entries);
    if (stopped && stopped.notStarted.length === 0) {
      // Every call of the stopped turn ended or was cut short: the model reads how, and goes on.
      const results: ToolResultsData = { results: stopped.results, feedback: stopped.feedback };
      task.journal.appendDropping(
        { kind: JOURNAL_KIND.toolResults, data: JSON.stringify(results) },
        TOOL_CALL_PROGRESS,
        stopped.afterSeq,
      );
    } else if (!stopped && endsWithAnswer(entries)) {
      const note: UserMessageData = { text: RESUMED_AFTER_ANSWER_NOTE };
      task.journal.append({ kind: JOURNAL_KIND.user, data: JSON.stringify(note) });
    }
    // A call that waited for approval when the run stopped is asked again, without a new model request.
    await this.continueTask(task, stopped?.notStarted.length ? stopped : undefined);
  }

  /**
   * Rewinds the conversation (a checkpoint's Restore Task, Restore Chat and Restore All): UI
   * messages after `messageId` go (with `beforeMessage`, the message itself too), and the
   * journal is cut at the step that produced that message, so the model sees the same history.
   * A running task is stopped first. With `editedText`, the task continues from the edit.
   */
  async rewind(
    taskId: string,
    messageId: string,
    options: { editedText?: string; beforeMessage?: boolean } = {},
  ): Promise<void> {
    let task = this.claimForWrite(taskId);
    if (task.run) {
      task.run.controller.abort(new DlineError("canceled", "The conversation is being restored."));
      await task.run.done.catch(() => {});
      // The run's end released the task's claim: without it again, the status the rewind sets
      // (and its emptied input queue) stayed in memory, and the stored task read "cancelled".
      task = this.claimForWrite(taskId);
    }
    const before = options.beforeMessage || options.editedText !== undefined;
    const kept = cutConversation(task, messageId, before);
    task.events.append({ case: "rewound", value: { afterMessageId: kept } });
    this.saveKernel(task, { inputQueue: [] });
    // Nothing left: the old first message is no longer the task's title (the next one will be).
    if (!kept && options.editedText === undefined) await this.retitle(task, "");
    if (options.editedText !== undefined) await this.sendMessage(taskId, options.editedText);
    else {
      // The task stands where the conversation now ends: done only if that is its completion,
      // otherwise stopped part-way, and Resume goes on from there.
      const last = task.messages.list().at(-1);
      if (last?.kind === "completion") this.setStatus(task, "completed", "the conversation was restored");
      else this.setStatus(task, "interrupted", "the conversation was restored to an earlier point");
      this.releaseIfIdle(task);
    }
  }

  /**
   * A file restore of the task (or its Undo) ended: an event on the task's stream tells every
   * window, in this sidecar and in those following it, that the checkpoint the files are restored
   * to changed. The task is claimed here for it, as for a rewind, so that its stream is this one.
   */
  tellFilesRestored(taskId: string, note: FilesRestoredNote): void {
    // A run the restore stopped keeps its claim until the restore's end (stopRun).
    const claimedBefore = this.deps.ownership.holds(taskId);
    const task = this.claimForWrite(taskId);
    task.events.append({ case: "filesRestored", value: note });
    if (!claimedBefore) this.releaseIfIdle(task);
  }

  /**
   * A checkpoint the core saved for a message of the task outside its run (CheckpointManager's
   * save of a command's turn cut off by a dying sidecar, before a restore): recorded on the
   * message and told, as a turn's checkpoint is; a message with a checkpoint of its own keeps it.
   */
  tellCheckpointSaved(taskId: string, messageId: string, checkpointId: string): void {
    const claimedBefore = this.deps.ownership.holds(taskId);
    const task = this.claimForWrite(taskId);
    const message = task.messages.list().find((m) => m.id === messageId);
    if (message) this.checkpointSavedAt(task, message, "CHECKPOINT_KIND_TURN")(checkpointId);
    if (!claimedBefore) this.releaseIfIdle(task);
  }

  /** The model profile a task runs with ("" when it has none recorded, e.g. an imported task). */
  profileOf(taskId: string): string {
    const live = this.live.get(taskId);
    if (live) return live.kernel.profileId;
    const files = this.deps.layout.task(taskId);
    return new StateFile<KernelState>(files.stateJson, files.stateJsonBak).read().value?.profileId ?? "";
  }

  /**
   * How full the task's context is: the size of its own last model request and the window it
   * was made under (undefined before the first request, or when metrics.db cannot be read).
   */
  contextOf(taskId: string): { tokens: number; window: number } | undefined {
    const live = this.live.get(taskId);
    if (live) {
      const context = live.metrics.lastContext();
      this.closeStoresIfIdle(live);
      return context;
    }
    const file = this.deps.layout.task(taskId).metricsDb;
    if (!fs.existsSync(file)) return undefined;
    try {
      // Opened as GetTask opens messages.db: a read-only connection to a WAL database creates
      // its -wal and -shm files and, closing, cannot remove them (one pair left per task shown).
      const metrics = MetricsStore.open(this.deps.sqlite, file);
      try {
        return metrics.lastContext();
      } finally {
        metrics.close();
      }
    } catch (err) {
      this.deps.logger.warn("the task's context size could not be read", { taskId, error: (err as Error).message });
      return undefined;
    }
  }

  /** Switches a task's model profile: its next run uses it (the profile must resolve). */
  async setTaskProfile(taskId: string, profileId: string): Promise<void> {
    await this.deps.resolveModel(profileId, taskId);
    const task = this.claimForWrite(taskId);
    this.saveKernel(task, { profileId });
    this.releaseIfIdle(task);
  }

  /** The text and time of one of a task's messages (for EditMessage). */
  /** The ids of a task's messages now (for the checkpoints still offered after a restore). */
  messageIds(taskId: string): ReadonlySet<string> {
    const task = this.load(taskId);
    const ids = task.messages.ids();
    this.closeStoresIfIdle(task);
    return ids;
  }

  messageInfo(taskId: string, messageId: string): { text: string; createdAt: number; role: string } | undefined {
    const task = this.load(taskId);
    const m = task.messages.list().find((x) => x.id === messageId);
    this.closeStoresIfIdle(task);
    return m ? { text: m.text, createdAt: m.time, role: m.role } : undefined;
  }

  /**
   * The task's commands that ran, or may have (cut short by a cancel or a dying sidecar), oldest
   * first: their rows' ids and times; one still running in a live run (here or in another
   * sidecar: a dead run's rows read interrupted once loaded) is marked `running`. Not those
   * still asking, nor those denied or stopped while their approval was awaited (they never ran).
   */
  commandCalls(taskId: string): { messageId: string; time: number; running?: boolean }[] {
    const task = this.load(taskId);
    const calls: { messageId: string; time: number; running?: boolean }[] = [];
    for (const m of task.messages.list()) {
      const call = toolCallOf(m);
      if (!call || (m.kind !== "command" && !call.command)) continue;
      if (call.status === "running") {
        calls.push({ messageId: m.id, time: m.time, running: true });
        continue;
      }
      if (call.status !== "done" && call.status !== "failed" && call.status !== "interrupted") continue;
      if (call.status === "interrupted" && call.reason === STOPPED_WHILE_ASKING) continue;
      calls.push({ messageId: m.id, time: m.time });
    }
    this.closeStoresIfIdle(task);
    return calls;
  }

  /**
   * Resolves once the task's run here (if any) has ended: its last status stored and, when
   * nothing is pending, its claim released, so another sidecar may continue it at once.
   */
  async runEnded(taskId: string): Promise<void> {
    await this.live.get(taskId)?.runSettled;
  }

  isRunning(taskId: string): boolean {
    return Boolean(this.live.get(taskId)?.run);
  }

  /** Stops a task's run (if any) and closes its stores; used before deletion and at shutdown. */
  async unload(taskId: string, options: { release?: boolean } = {}): Promise<void> {
    const task = this.live.get(taskId);
    if (!task) return;
    if (task.run) {
      task.run.controller.abort(new DlineError("canceled", "The task is being deleted."));
      await task.run.done.catch(() => {});
    }
    this.live.delete(taskId);
    this.unsavedInEditor.delete(taskId);
    this.closeTask(task);
    // After a deletion the claim belongs to the deletion coordinator: leave it alone then.
    if ((options.release ?? true) && this.deps.ownership.holds(taskId)) this.deps.ownership.release(taskId);
  }

  /** Tells the tasks loaded here that run in `workspaceRoot` how their checkpoints are doing. */
  checkpointStatusChanged(
    workspaceRoot: string,
    status: {
      state: string;
      message: string;
      canRetry: boolean;
      canDisable: boolean;
      progress?: { phase: string; done: number; total: number };
    },
  ): void {
    const progress = status.progress
      ? {
          phase: status.progress.phase,
          filesDone: BigInt(status.progress.done),
          filesTotal: BigInt(status.progress.total),
        }
      : {};
    // The checkpoints keep a folder under its real path: a task opened through a link hears of it too.
    const target = canonicalWorkspacePath(workspaceRoot);
    const value = {
      state: `CHECKPOINT_STATE_${status.state.toUpperCase()}`,
      message: status.message,
      canRetry: status.canRetry,
      canDisable: status.canDisable,
      ...progress,
    };
    this.checkpointStatuses.set(target, value);
    for (const task of this.live.values()) {
      if (canonicalWorkspacePath(task.kernel.workspaceRoot) !== target) continue;
      this.continueAboveOthers(task);
      task.events.append({ case: "checkpointStatus", value });
    }
  }

  /**
   * A copy this process neither runs nor holds continues above every seq reserved on disk
   * before it takes an event: another process may have held the task since this copy's last
   * event and shown its followers seqs up to its base (the last reservation on disk), even if it
   * died before it saved anything (a restore killed part-way); another window may have shown
   * one of its own. Below them, those followers, which resume here, would skip the event. The
   * seqs it then hands out it reserves in its own file (shown-seqs.ts), for the next holder.
   */
  private continueAboveOthers(task: LiveTask): void {
    if (task.run || this.deps.ownership.holds(task.id)) return;
    try {
      const onDisk = task.state.read().value;
      if (onDisk)
        task.events.continueAbove(reservedOnDisk(onDisk, new ShownSeqs(task.files.shownSeqsDir), { others: true }));
    } catch {
      // state.json unreadable: the copy's own seqs are all there is to go on
    }
  }

  /** Every task was deleted: stop and close every task loaded here. */
  async unloadAll(): Promise<void> {
    for (const id of [...this.live.keys()]) await this.unload(id, { release: false });
  }

  /** At shutdown: stop every run (left interrupted), persist kernels, close stores. */
  async stopAll(): Promise<void> {
    const tasks = [...this.live.values()];
    await Promise.all(tasks.map(async (t) => t.run?.done.catch(() => {})));
    for (const t of tasks) {
      this.saveKernel(t);
      this.live.delete(t.id);
      this.closeTask(t);
    }
  }

  /** Closes a task's stores and ends its streams (see logCloseFailure). */
  private closeTask(task: LiveTask): void {
    this.logCloseFailure(task, () => task.close());
  }

  /** A write the stores could not finish as they closed (a full disk) is logged; the rest still closed. */
  private logCloseFailure(task: LiveTask, close: () => void): void {
    try {
      close();
    } catch (err) {
      this.deps.logger.error("task stores closed with an error", {
        taskId: task.id,
        code: (err as NodeJS.ErrnoException).code,
        error: (err as Error).message,
      });
    }
  }
}

/** A task's title: the first line of its first message, at most 200 characters. */
function titleOf(text: string): string {
  return (text.trim().split("\n", 1)[0] ?? "").slice(0, 200);
}

/** The highest seq reserved for a task on disk: by its holder (state.json) or by a process showing it (shown-seqs.ts). */
function reservedOnDisk(onDisk: KernelState, shown: ShownSeqs, options: { others?: boolean } = {}): bigint {
  return maxBig(maxBig(BigInt(onDisk.lastSeq || "0"), BigInt(onDisk.seqReserved ?? "0")), shown.highest(options));
}
