import * as path from "node:path";
import * as vscode from "vscode";
import {
  CheckpointKind,
  CheckpointState,
  EditMessageMode,
  RestoreMode,
  type Checkpoint,
  type GetStatusResponse,
  type RestoreResponse,
} from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import type { TaskEvent } from "../../../../core/src/gen/dline/v1/task_pb.js";
import type { DlineClients } from "../../../../core/src/client/index.js";
import { checkpointHeader } from "../checkpoints/checkpoint-header.js";
import { HeaderUpdates } from "../checkpoints/header-updates.js";
import { RepairNotices } from "../checkpoints/repair-notice.js";
import { HeldElsewhere, type WaitNotice } from "../checkpoints/held-elsewhere.js";
import {
  COMPARE_TITLE,
  VIEW_CHANGES_TITLE,
  type DiffPresenter,
  type ShownDiff,
} from "../checkpoints/diff-presenter.js";
import { checkpointTabDetail } from "../checkpoints/diff-titles.js";
import {
  fileErrorNotice,
  pickRestore,
  leftAloneByRestore,
  restoreNotices,
  type LeftAlone,
  restoreOptions,
  type RunningTask,
  unavailableRestoreMessage,
  type RestoreMenuUi,
  type RestoreOption,
} from "../checkpoints/restore-options.js";
import { restoreAllPlan, type RestoreAllPlan } from "../checkpoints/restore-all-writes.js";
import { restoreAllQuestion, restoreQuestion, type RestorePlan } from "../checkpoints/restore-questions.js";
import { RestoredFiles } from "../checkpoints/restored-files.js";
import {
  offerUndo,
  KEEP_MY_CHANGES,
  UNDO_ANYWAY,
  UndoDeclined,
  UndoGone,
  undoOverwriteQuestion,
  type UndoNoticeUi,
} from "../checkpoints/undo-notice.js";
import {
  saveBeforeRestore,
  saveUnsavedBeforeWrite,
  unsavedDocuments,
  workspaceRelative,
} from "../checkpoints/unsaved-before-restore.js";
import type { SidecarSupervisor } from "../sidecar/sidecar-supervisor.js";
import type { Log } from "../sidecar/log.js";
import { editorFiles } from "../tasks/editor-state.js";
import { TaskStream } from "../tasks/task-stream.js";
import { visibleLine } from "../text/visible-text.js";
import { ChatModel, statusName } from "./chat-model.js";
import { ChatPreferencesSource } from "./chat-preferences.js";
import type { ChatMessageItem, ChatState, ViewChangesTarget } from "./chat-state.js";
import { bannerOf, continueInFolder, errorNotice, errorReason } from "./error-banner.js";
import type { ProposedChanges, ShownEdit } from "./proposed-changes.js";

/**
 * The chat's behaviour, apart from how it is drawn: which task is open, its event stream,
 * and every action the chat view, the commands and other extensions can take on it.
 */
export class ChatController implements vscode.Disposable {
  private readonly model = new ChatModel();
  readonly preferences: ChatPreferencesSource;
  private stream: TaskStream | undefined;
  private workspaceRoot = "";
  private readonly changed = new vscode.EventEmitter<ChatState>();
  readonly onDidChangeState = this.changed.event;
  private checkpointRefresh: NodeJS.Timeout | undefined;
  /** A header status read asked before Disable's or Retry's answer is not shown after it. */
  private readonly headerUpdates = new HeaderUpdates();
  /** A repaired checkpoint store (an index rebuilt, HEAD put back) is told once per sentence. */
  private readonly repairNotices = new RepairNotices(
    (note) => void vscode.window.showInformationMessage(`Dline: ${visibleLine(note)}`),
  );

  constructor(
    private readonly supervisor: SidecarSupervisor,
    private readonly diffs: DiffPresenter,
    private readonly proposed: ProposedChanges,
    private readonly log: Log,
  ) {
    this.preferences = new ChatPreferencesSource(supervisor, (change) => {
      this.model.setPreferences(change);
      this.emit();
    });
  }

  get state(): ChatState {
    return this.model.snapshot;
  }

  get taskId(): string | undefined {
    return this.model.snapshot.taskId;
  }

  setCore(core: ChatState["core"], message = ""): void {
    this.model.setCore(core, message);
    this.emit();
  }

  showError(err: unknown): void {
    // The log keeps the RPC code; the person reads the core's sentence.
    this.log.error(err instanceof Error ? err.message : String(err));
    void vscode.window.showErrorMessage(visibleLine(errorNotice(err)));
  }

  logWarning(message: string): void {
    this.log.warn(message);
  }

  /** Shows a failure in the chat itself (with Configure Model when a model is missing). */
  showBanner(err: unknown): void {
    this.model.setBanner(bannerOf(err));
    this.emit();
  }

  /** The core refused words the person sent: the banner says why, and the state keeps them (the chat's box still holds them). */
  private refused(text: string, err: unknown): void {
    this.model.setBanner(bannerOf(err));
    this.model.setUnsent(text, errorReason(err));
    this.emit();
  }

  dismissBanner(): void {
    this.model.setBanner(undefined);
    this.emit();
  }

  /** Starts a task in the first workspace folder; a refusal (no model) leaves the prompt where it was. */
  async newTask(text: string, profileId = ""): Promise<string> {
    if (!text.trim()) throw new Error("Type what the task should do.");
    const { clients } = await this.supervisor.ready();
    const workspaceRoot = this.folders()[0] ?? "";
    let taskId: string;
    try {
      ({ taskId } = await clients.tasks.newTask({
        workspaceRoot,
        text,
        profileId,
        editor: editorFiles(workspaceRoot),
      }));
    } catch (err) {
      this.refused(text, err);
      throw err;
    }
    await this.proposed.closeProposal();
    this.model.reset(taskId, (text.split("\n", 1)[0] ?? "").slice(0, 80));
    this.model.setBanner(undefined);
    this.model.markRunning();
    this.follow(taskId, workspaceRoot, 0n);
    this.emit();
    void this.refreshTaskPreferences(taskId);
    void this.refreshCheckpointHeader();
    return taskId;
  }

  /** Opens a task from history: loads its messages, then follows its new events. */
  async openTask(taskId: string): Promise<void> {
    const { clients } = await this.supervisor.ready();
    const task = await clients.tasks.getTask({ taskId });
    if (this.model.snapshot.taskId !== taskId) await this.proposed.closeProposal();
    this.model.load(task);
    this.follow(taskId, task.task?.workspaceRoot ?? "", task.lastSeq);
    this.emit();
    this.onAskChanged();
    await this.refreshCheckpoints();
    void this.refreshTaskPreferences(taskId);
    void this.refreshCheckpointHeader();
  }

  /** Back to the start screen (no task open). */
  async newChat(): Promise<void> {
    this.stream?.close();
    this.stream = undefined;
    await this.proposed.closeProposal();
    this.model.reset(undefined);
    this.emit();
    void this.preferences.refresh().catch((err) => this.log.warn(`preferences: ${(err as Error).message}`));
  }

  /**
   * Reloads the open task from the core (after a core restart: a task that was running when
   * the core died reopens as interrupted, which no event of the old stream could say).
   */
  async reload(): Promise<void> {
    const taskId = this.model.snapshot.taskId;
    if (taskId) await this.openTask(taskId);
  }

  /** The open task's history row changed: pick up a status no event says (interrupted). */
  async onTasksChanged(taskIds: string[]): Promise<void> {
    const taskId = this.model.snapshot.taskId;
    if (!taskId || !taskIds.includes(taskId)) return;
    const { clients } = await this.supervisor.ready();
    const task = await clients.tasks.getTask({ taskId });
    if (taskId !== this.model.snapshot.taskId || !task.task) return;
    // Interrupted with the core that ran it: only GetTask says so of its rows (a call left running reads interrupted).
    if (statusName(task.task.status) === "interrupted" && this.model.snapshot.status !== "interrupted") {
      await this.openTask(taskId);
      return;
    }
    this.model.setStatusFromHistory(task.task.status);
    this.emit();
  }

  /** Closes the chat of a task that was deleted. */
  forget(taskIds: string[]): void {
    if (this.taskId && taskIds.includes(this.taskId)) void this.newChat();
  }

  /**
   * The composer: answers a pending question, rejects a pending approval with the text as
   * feedback, continues the task, or starts a new one.
   */
  async send(text: string): Promise<void> {
    const { taskId, pendingAsk } = this.model.snapshot;
    if (!taskId) {
      await this.newTask(text);
      return;
    }
    const { clients } = await this.supervisor.ready();
    try {
      if (pendingAsk) {
        const answers =
          pendingAsk.kind === "followup" || pendingAsk.kind === "completion" || pendingAsk.kind === "resume";
        await clients.tasks.respond({ taskId, askId: pendingAsk.askId, approve: answers, text });
      } else {
        await this.inFolderIfNeeded((workspaceRoot) =>
          clients.tasks.sendMessage({
            taskId,
            text,
            workspaceRoot,
            editor: editorFiles(workspaceRoot || this.workspaceRoot),
          }),
        );
        this.model.markRunning();
      }
    } catch (err) {
      this.refused(text, err);
      throw err;
    }
    this.model.setBanner(undefined);
    this.emit();
  }

  async respond(approve: boolean, text = ""): Promise<void> {
    const { taskId, pendingAsk } = this.model.snapshot;
    if (!taskId || !pendingAsk) throw new Error("Nothing is waiting for an answer.");
    const { clients } = await this.supervisor.ready();
    await clients.tasks.respond({ taskId, askId: pendingAsk.askId, approve, text });
  }

  async cancel(): Promise<void> {
    const taskId = this.requireTask();
    const { clients } = await this.supervisor.ready();
    await clients.tasks.cancel({ taskId });
  }

  /** Resume, and Retry of a failed task (with the model the picker chose). */
  async resume(): Promise<void> {
    const taskId = this.requireTask();
    const { clients } = await this.supervisor.ready();
    try {
      await this.inFolderIfNeeded((workspaceRoot) => clients.tasks.resume({ taskId, workspaceRoot }));
    } catch (err) {
      this.showBanner(err);
      throw err;
    }
    this.model.setBanner(undefined);
    this.model.markRunning();
    this.emit();
  }

  /**
   * Runs `call` for the current task; when the core refuses because the task has no folder on
   * this machine (imported from Cline without one, made on another machine) and this window has
   * one folder open, the task continues there (its tools run only there) and the person is told.
   */
  private async inFolderIfNeeded(call: (workspaceRoot: string) => Promise<unknown>): Promise<void> {
    try {
      await call("");
    } catch (err) {
      const folder = continueInFolder(errorReason(err), this.folders());
      if (!folder) throw err;
      await call(folder);
      this.workspaceRoot = folder;
      void vscode.window.showInformationMessage(
        `Dline: this task had no folder on this machine; it continues in ${visibleLine(folder)}.`,
      );
    }
  }

  /** Opens a file a tool row names (relative to the task's workspace). */
  async openFile(relativePath: string): Promise<void> {
    const root = this.workspaceRoot || this.folders()[0];
    if (!root) throw new Error("No workspace folder is open.");
    const target = path.resolve(root, relativePath);
    const inside = path.relative(root, target);
    if (inside.startsWith("..") || path.isAbsolute(inside))
      throw new Error(`${visibleLine(relativePath)} is outside the workspace.`);
    try {
      const stat = await vscode.workspace.fs.stat(vscode.Uri.file(target));
      if (stat.type & vscode.FileType.Directory) {
        await vscode.commands.executeCommand("revealInExplorer", vscode.Uri.file(target));
        return;
      }
    } catch {
      throw new Error(`${visibleLine(relativePath)} does not exist (any more).`);
    }
    await vscode.window.showTextDocument(vscode.Uri.file(target), { preview: true });
  }

  /** "Changed N files": what a finished edit changed, in the diff editor. */
  async showEdits(messageId: string): Promise<ShownEdit[]> {
    const row = this.model.snapshot.items.find((i): i is ChatMessageItem => i.type === "message" && i.id === messageId);
    const edits = row?.toolCall?.edits ?? [];
    if (edits.length === 0) throw new Error("That tool call changed no file.");
    return this.proposed.showApplied(edits, this.workspaceRoot);
  }

  /** The pending approval's change, in the diff editor (again). */
  async showProposed(): Promise<ShownEdit[]> {
    const ask = this.model.snapshot.pendingAsk;
    if (!ask || ask.edits.length === 0) throw new Error("No change is waiting for approval.");
    return this.proposed.showProposal(ask.askId, ask.edits, this.workspaceRoot, true);
  }

  /** Which checkpoint a diff tab shows (diff-titles.ts), as this chat lists it. */
  private checkpointDetail(checkpointId: string): string {
    const listed = this.model.snapshot.checkpoints.find((c) => c.id === checkpointId);
    return checkpointTabDetail(checkpointId, listed);
  }

  /** Compare: the checkpoint against the current workspace, in the native multi-file diff. */
  async compare(checkpointId: string): Promise<ShownDiff[]> {
    const taskId = this.requireTask();
    const { clients } = await this.supervisor.ready();
    const res = await this.heldElsewhere(clients, taskId).during(() =>
      clients.checkpoints.compare({ taskId, checkpointId }),
    );
    return this.diffs.show({
      title: COMPARE_TITLE,
      detail: this.checkpointDetail(checkpointId),
      workspaceRoot: this.workspaceRoot,
      files: res.files,
      rightIsWorkspace: true,
    });
  }

  /**
   * View Changes: what the task changed since its previous completion, up to the completion
   * `which` names (a completion card's message, or its checkpoint), else the latest.
   */
  async viewChanges(which: ViewChangesTarget = {}): Promise<ShownDiff[]> {
    const taskId = this.requireTask();
    const { clients } = await this.supervisor.ready();
    const res = await this.heldElsewhere(clients, taskId).during(() =>
      clients.checkpoints.viewChanges({
        taskId,
        messageId: which.messageId ?? "",
        checkpointId: which.checkpointId ?? "",
      }),
    );
    return this.diffs.show({
      title: VIEW_CHANGES_TITLE,
      detail: res.toCheckpointId ? this.checkpointDetail(res.toCheckpointId) : undefined,
      workspaceRoot: this.workspaceRoot,
      files: res.files,
      rightIsWorkspace: false,
    });
  }

  /**
   * Restore: the menu of docs/checkpoints.md (Restore Files & Task; under "More options" Restore
   * Files Only and Restore Task Only), or the given mode without asking.
   */
  async restore(checkpointId: string, mode?: RestoreMode): Promise<boolean> {
    const taskId = this.requireTask();
    const { clients } = await this.supervisor.ready();
    const waiting = this.heldElsewhere(clients, taskId);
    const checkpoint = (await waiting.during(() => clients.checkpoints.listCheckpoints({ taskId }))).checkpoints.find(
      (c) => c.id === checkpointId,
    );
    if (!checkpoint) throw new Error("That checkpoint no longer exists.");
    const options = restoreOptions({
      hasFiles: checkpoint.hasFiles,
      compaction: checkpoint.kind === CheckpointKind.COMPACTION,
      restored: checkpoint.restored,
      undoPoint: checkpoint.kind === CheckpointKind.BEFORE_RESTORE,
    });
    const chosen = mode ?? (await pickRestore(options, restoreMenuUi));
    if (chosen === undefined) return false;
    const option = options.find((o) => o.mode === chosen);
    if (!option) throw new Error("That restore is not available for this checkpoint.");
    if (option.disabled) throw new Error(unavailableRestoreMessage(option).replace(/^Dline: /, ""));
    const files = chosen !== RestoreMode.TASK;
    // What a file restore will write, for its question and for the editors with unsaved changes in those files.
    const plan =
      files && (mode === undefined || unsavedDocuments(this.workspaceRoot, undefined).length > 0)
        ? await this.restorePlan(taskId, checkpointId, waiting)
        : undefined;
    const changed = plan?.restorePaths;
    const unsaved = files ? unsavedDocuments(this.workspaceRoot, changed) : [];
    // Chosen in the menu: a file restore overwrites what changed since, the person's own edits
    // too, and Files & Task and Task Only delete the later messages, which nothing brings back:
    // so it asks first (a caller passing the mode, a script or a key binding, has chosen).
    // A task that runs (here; one running in another window is stopped there alike) stops first.
    if (mode === undefined && !(await this.confirmRestore(option, plan, unsaved, this.runningNow(taskId))))
      return false;
    await saveBeforeRestore(this.workspaceRoot, unsaved);
    const res = await waiting.during(() => clients.checkpoints.restore({ taskId, checkpointId, mode: chosen }));
    if (res.fileError) void vscode.window.showErrorMessage(fileErrorNotice(res.fileError, res.conversationRestored));
    else if (res.filesRestored) await this.noticeRestore(taskId, res);
    // A Compare or View Changes diff opened before shows files as they were: it goes.
    if (res.filesRestored) await this.diffs.closeAll();
    await this.refreshCheckpoints();
    return res.filesRestored || res.conversationRestored;
  }

  /**
   * What a file restore to this checkpoint would do, from Compare: the files it would change
   * (`restorePaths`), and the changed files it would leave as they are (not tracked by
   * checkpoints, ...); undefined when that could not be read.
   */
  private async restorePlan(
    taskId: string,
    checkpointId: string,
    waiting: HeldElsewhere,
  ): Promise<{ restorePaths: string[]; leftAlone: LeftAlone[] } | undefined> {
    const { clients } = await this.supervisor.ready();
    try {
      // Only what the restore would change: with the task's recorded edits, not every change since.
      const res = await waiting.during(() => clients.checkpoints.compare({ taskId, checkpointId }));
      return { restorePaths: res.restorePaths, leftAlone: leftAloneByRestore(res.files, res.restorePaths) };
    } catch (err) {
      this.log.warn(`compare before restore: ${(err as Error).message}`);
      return undefined;
    }
  }

  /**
   * The modal before a restore chosen in the menu (restoreQuestion): which files changed since the
   * checkpoint will be overwritten, which have unsaved changes, and which messages go.
   */
  private async confirmRestore(
    option: RestoreOption,
    plan: RestorePlan | undefined,
    unsaved: readonly vscode.TextDocument[],
    running: RunningTask,
  ): Promise<boolean> {
    const unsavedPaths = unsaved.flatMap((d) => workspaceRelative(this.workspaceRoot, d.uri) ?? []);
    const question = restoreQuestion(option.mode, plan, unsavedPaths, running);
    const answer = await vscode.window.showWarningMessage(
      question.message,
      { modal: true, detail: question.detail },
      question.button,
    );
    return answer === question.button;
  }

  /** Whether the task runs here (a restore stops it first), and whether one of its commands runs. */
  private runningNow(taskId: string): RunningTask {
    const snap = this.model.snapshot;
    if (snap.taskId !== taskId || (snap.status !== "running" && snap.status !== "waiting")) return false;
    const command = snap.items.some(
      (i) =>
        i.type === "message" &&
        i.toolCall?.status === "running" &&
        (i.kind === "command" || i.toolCall.command !== undefined),
    );
    return command ? "command" : "task";
  }

  /**
   * What a file restore did, with Undo: the "before restore" checkpoint the core saved, restored.
   * Called as soon as the restore answered: what it left in the files is read now, for Undo.
   */
  private async noticeRestore(
    taskId: string,
    res: Pick<
      RestoreResponse,
      "restoredPaths" | "deletedPaths" | "keptPaths" | "keptPathsIncomplete" | "undoCheckpointId"
    > & { runStopped?: boolean; repositoryNote?: string },
  ): Promise<void> {
    const notices = restoreNotices(res);
    const undo = res.undoCheckpointId;
    if (!undo) void vscode.window.showInformationMessage(notices.info);
    else {
      const left = await RestoredFiles.read(this.workspaceRoot, res.restoredPaths, res.deletedPaths);
      void offerUndo(undoNoticeUi, notices.info, () => this.undoRestore(taskId, undo, left)).catch((err: unknown) =>
        this.showError(err),
      );
    }
    if (notices.warning) void vscode.window.showWarningMessage(notices.warning);
  }

  /**
   * Undo of a file restore: its "before restore" checkpoint, while the core still offers it. Files
   * the person changed since the restore (`left` is what the restore left) would be overwritten:
   * it names them and asks first.
   */
  private async undoRestore(taskId: string, undoCheckpointId: string, left: RestoredFiles): Promise<void> {
    const { clients } = await this.supervisor.ready();
    const waiting = this.heldElsewhere(clients, taskId);
    const undo = (await waiting.during(() => clients.checkpoints.listCheckpoints({ taskId }))).checkpoints.find(
      (c) => c.id === undoCheckpointId,
    );
    if (!undo?.undoAvailable) throw new UndoGone("a checkpoint was saved (or files restored) since.");
    const writes = (await this.restorePlan(taskId, undo.id, waiting))?.restorePaths;
    const unsaved = new Set(
      unsavedDocuments(this.workspaceRoot, undefined).flatMap(
        (d) => workspaceRelative(this.workspaceRoot, d.uri) ?? [],
      ),
    );
    const changed = await left.changedSince(writes, (rel) => unsaved.has(rel));
    if (changed.length > 0 && !(await confirmUndoOverwrite(changed))) throw new UndoDeclined();
    // Confirmed: unsaved changes are saved first, as before a restore (the editor's own undo keeps them).
    await saveUnsavedBeforeWrite(this.workspaceRoot, () => Promise.resolve(writes));
    const res = await waiting.during(() =>
      clients.checkpoints.restore({ taskId, checkpointId: undo.id, mode: RestoreMode.FILES }),
    );
    await this.diffs.closeAll();
    const count = res.restoredPaths.length + res.deletedPaths.length;
    void vscode.window.showInformationMessage(
      `Dline: restore undone: the files are back as they were before it (${count} file${count === 1 ? "" : "s"}).`,
    );
    if (taskId === this.model.snapshot.taskId) await this.refreshCheckpoints();
  }

  /**
   * Restore Chat / Restore All for an edited earlier message. `ask`: Restore All, from the chat's
   * button, asks first (as the checkpoint menu's Restore does) when it would change files; a caller
   * passing the mode (a script, a key binding) has chosen.
   */
  async editMessage(messageId: string, text: string, mode: "chat" | "all", ask = false): Promise<boolean> {
    const taskId = this.requireTask();
    const { clients } = await this.supervisor.ready();
    const waiting = this.heldElsewhere(clients, taskId);
    // Restore All writes the files of the checkpoint the core chooses: what it will write is read
    // beforehand (a dry run) for its question, and unsaved changes in those files are saved
    // first, as before a restore from the checkpoint menu (an unchanged text restores nothing).
    // Asked by a script without a question and with nothing unsaved, the dry run is not needed.
    if (mode === "all" && (ask || unsavedDocuments(this.workspaceRoot, undefined).length > 0)) {
      const dry = await restoreAllPlan(
        (req) => waiting.during(() => clients.checkpoints.editMessage(req)),
        taskId,
        messageId,
        text,
      );
      const writes = [...dry.restoredPaths, ...dry.deletedPaths];
      if (ask && dry.restored && writes.length > 0 && !(await this.confirmRestoreAll(taskId, dry, writes, waiting)))
        return false;
      await saveUnsavedBeforeWrite(this.workspaceRoot, () => Promise.resolve(writes));
    }
    const res = await waiting.during(() =>
      clients.checkpoints.editMessage({
        taskId,
        messageId,
        text,
        mode: mode === "chat" ? EditMessageMode.RESTORE_CHAT : EditMessageMode.RESTORE_ALL,
      }),
    );
    if (res.fileError) void vscode.window.showErrorMessage(fileErrorNotice(res.fileError, res.restored));
    if (!res.restored) void vscode.window.showInformationMessage("Dline: the text is unchanged, nothing was restored.");
    else if (mode === "all") {
      await this.diffs.closeAll();
      // Restore All overwrote what changed since, the person's own edits too: Undo brings them back.
      // What it left as it was (too large, not tracked by checkpoints) is named as a file restore names it.
      const changed = res.restoredPaths.length + res.deletedPaths.length > 0;
      if (!res.fileError && res.undoCheckpointId && changed) await this.noticeRestore(taskId, res);
      else if (!res.fileError) {
        const { warning } = restoreNotices(res);
        if (warning) void vscode.window.showWarningMessage(warning);
      }
    }
    await this.refreshCheckpoints();
    return res.restored;
  }

  /** The modal before Restore All (restoreAllQuestion): true to go ahead. */
  private async confirmRestoreAll(
    taskId: string,
    dry: RestoreAllPlan,
    writes: readonly string[],
    waiting: HeldElsewhere,
  ): Promise<boolean> {
    // The changed files it leaves as they are, as the checkpoint menu's question names them
    // (a Compare of the checkpoint it goes to).
    const plan = dry.checkpointId ? await this.restorePlan(taskId, dry.checkpointId, waiting) : undefined;
    const leftAlone = plan?.leftAlone ?? [];
    const unsaved = unsavedDocuments(this.workspaceRoot, writes).flatMap(
      (d) => workspaceRelative(this.workspaceRoot, d.uri) ?? [],
    );
    const question = restoreAllQuestion(dry, leftAlone, unsaved, this.runningNow(taskId));
    const answer = await vscode.window.showWarningMessage(
      question.message,
      { modal: true, detail: question.detail },
      question.button,
    );
    return answer === question.button;
  }

  async retryCheckpoints(): Promise<void> {
    const { clients } = await this.supervisor.ready();
    const res = await clients.checkpoints.retry(this.statusQuery());
    this.headerUpdates.answered();
    this.noticeRepair(res.status);
    this.model.setCheckpointHeader(checkpointHeader(this.folders(), res.status));
    this.emit();
  }

  async disableCheckpoints(): Promise<void> {
    const { clients } = await this.supervisor.ready();
    const res = await clients.checkpoints.disable(this.statusQuery());
    this.headerUpdates.answered();
    this.model.setCheckpointHeader(checkpointHeader(this.folders(), res.status));
    this.emit();
  }

  async refreshCheckpointHeader(): Promise<void> {
    const folders = this.folders();
    const current = this.headerUpdates.read();
    let status;
    if (folders.length === 1 && this.supervisor.current) {
      try {
        status = await this.supervisor.current.clients.checkpoints.getStatus(this.statusQuery());
      } catch (err) {
        this.log.warn(`checkpoint status: ${(err as Error).message}`);
      }
    }
    // A repair is news even in a read a later action made out of date.
    this.noticeRepair(status);
    if (!current()) return;
    this.model.setCheckpointHeader(checkpointHeader(folders, status));
    this.emit();
  }

  /** Ready after the core repaired the checkpoint store: its sentence, once (plain ready says nothing). */
  private noticeRepair(status: GetStatusResponse | undefined): void {
    if (status) this.repairNotices.offer(CheckpointState[status.state] ?? "", status.message);
  }

  /** Tells the core which files have unsaved changes now (it refuses to edit those). */
  async reportEditorState(): Promise<void> {
    const { taskId, status } = this.model.snapshot;
    if (!taskId || (status !== "running" && status !== "waiting") || !this.supervisor.current) return;
    await this.supervisor.current.clients.tasks.updateEditorState({ taskId, editor: editorFiles(this.workspaceRoot) });
  }

  dispose(): void {
    this.stream?.close();
    if (this.checkpointRefresh) clearTimeout(this.checkpointRefresh);
    this.changed.dispose();
  }

  private async refreshTaskPreferences(taskId: string): Promise<void> {
    try {
      await this.preferences.refresh({ taskId, workspaceRoot: this.workspaceRoot });
    } catch (err) {
      this.log.warn(`preferences: ${(err as Error).message}`);
    }
  }

  private follow(taskId: string, workspaceRoot: string, afterSeq: bigint): void {
    this.stream?.close();
    this.workspaceRoot = workspaceRoot;
    this.stream = new TaskStream(taskId, this.supervisor, (event) => this.onEvent(taskId, event), this.log, afterSeq);
  }

  private onEvent(taskId: string, event: TaskEvent): void {
    if (taskId !== this.model.snapshot.taskId) return;
    this.model.apply(event);
    this.emit();
    if (event.event.case === "checkpointStatus")
      this.repairNotices.offer(event.event.value.state, event.event.value.message);
    const kind = event.event.case;
    if (kind === "ask" || kind === "askResolved" || kind === "statusChanged" || kind === "rewound") this.onAskChanged();
    if (kind === "checkpointSaved" || kind === "rewound" || kind === "filesRestored") this.scheduleCheckpointRefresh();
    if (kind === "statusChanged") void this.refreshCheckpointHeader();
  }

  /** An edit approval opens its diff; once answered (or dropped), the diff goes. */
  private onAskChanged(): void {
    const ask = this.model.snapshot.pendingAsk;
    const work =
      ask && ask.edits.length > 0
        ? this.proposed.showProposal(ask.askId, ask.edits, this.workspaceRoot)
        : this.proposed.closeProposal();
    void Promise.resolve(work).catch((err: Error) => this.log.warn(`proposed change: ${err.message}`));
  }

  /** Checkpoint flags (restored, has files) come from ListCheckpoints; batched. */
  private scheduleCheckpointRefresh(): void {
    if (this.checkpointRefresh) return;
    this.checkpointRefresh = setTimeout(() => {
      this.checkpointRefresh = undefined;
      void this.refreshCheckpoints().catch((err) => this.log.warn(`checkpoints: ${(err as Error).message}`));
    }, 100);
  }

  private async refreshCheckpoints(): Promise<void> {
    const taskId = this.model.snapshot.taskId;
    if (!taskId) return;
    const { clients } = await this.supervisor.ready();
    const list = await clients.checkpoints.listCheckpoints({ taskId });
    if (taskId !== this.model.snapshot.taskId) return;
    this.model.setCheckpoints(list.checkpoints.map(toChatCheckpoint));
    this.emit();
  }

  /**
   * One action's checkpoint calls, said once while they wait for another Dline window holding
   * the workspace's checkpoint repository (held-elsewhere.ts): a progress notification until the
   * call answers.
   */
  private heldElsewhere(clients: DlineClients, taskId: string): HeldElsewhere {
    return new HeldElsewhere(
      async () => (await clients.checkpoints.getStatus({ taskId }, { timeoutMs: STATUS_ASK_MS })).waitingForPid,
      waitNotice,
    );
  }

  private requireTask(): string {
    const taskId = this.model.snapshot.taskId;
    if (!taskId) throw new Error("No task is open.");
    return taskId;
  }

  private folders(): string[] {
    return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  }

  private statusQuery(): { taskId: string; workspaceRoot: string } {
    return { taskId: this.model.snapshot.taskId ?? "", workspaceRoot: this.folders()[0] ?? this.workspaceRoot };
  }

  private emit(): void {
    this.changed.fire(this.model.snapshot);
  }
}

function toChatCheckpoint(c: Checkpoint): ChatState["checkpoints"][number] {
  return {
    id: c.id,
    kind: CheckpointKind[c.kind] ? `CHECKPOINT_KIND_${CheckpointKind[c.kind]}` : "",
    messageId: c.messageId,
    hasFiles: c.hasFiles,
    restored: c.restored,
    createdAt: Number(c.createdAt),
    editedPaths: [...c.editedPaths],
    undoAvailable: c.undoAvailable,
  };
}

/** A status read asked while a call waits gives up after this (a later one asks again). */
const STATUS_ASK_MS = 5000;

/** The wait for another window as a progress notification, there until the call answers. */
function waitNotice(sentence: string): WaitNotice {
  let end = () => {};
  const answered = new Promise<void>((resolve) => (end = resolve));
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Dline: ${visibleLine(sentence)}` },
    () => answered,
  );
  return { end };
}

/** The two-level restore menu as quick picks. */

/** The restore menu in VS Code: its quick pick, and a notice saying why an unavailable option restores nothing. */
const restoreMenuUi: RestoreMenuUi = {
  pick: (items, title, placeHolder) => vscode.window.showQuickPick(items, { title, placeHolder }),
  explain: (message) => void vscode.window.showInformationMessage(message),
};

/**
 * The modal before an Undo that would overwrite files changed since the restore: true to undo anyway.
 * Keep My Changes comes first: VS Code's dialog focuses its first button, so Enter (and Escape,
 * the Cancel it adds) keeps the person's changes; Undo Anyway is one click away.
 */
async function confirmUndoOverwrite(changed: readonly string[]): Promise<boolean> {
  const { message, detail } = undoOverwriteQuestion(changed);
  const answer = await vscode.window.showWarningMessage(message, { modal: true, detail }, KEEP_MY_CHANGES, UNDO_ANYWAY);
  return answer === UNDO_ANYWAY;
}

/** A restore's notice in VS Code: an information message with Undo, and an error message when Undo fails. */
const undoNoticeUi: UndoNoticeUi = {
  info: (text, ...actions) => vscode.window.showInformationMessage(text, ...actions),
  error: (text) => void vscode.window.showErrorMessage(text),
};
