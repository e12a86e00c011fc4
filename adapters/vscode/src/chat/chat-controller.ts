import * as vscode from "vscode";
import { CheckpointKind, EditMessageMode, RestoreMode, type Checkpoint } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema, ErrorReason } from "../../../../core/src/gen/dline/v1/errors_pb.js";
import type { TaskEvent } from "../../../../core/src/gen/dline/v1/task_pb.js";
import { checkpointHeader } from "../checkpoints/checkpoint-header.js";
import { COMPARE_TITLE, VIEW_CHANGES_TITLE, type DiffPresenter, type ShownDiff } from "../checkpoints/diff-presenter.js";
import { MORE_OPTIONS_LABEL, restoreOptions, type RestoreOption } from "../checkpoints/restore-options.js";
import type { SidecarSupervisor } from "../sidecar/sidecar-supervisor.js";
import type { Log } from "../sidecar/log.js";
import { TaskStream } from "../tasks/task-stream.js";
import { ChatModel } from "./chat-model.js";
import type { ChatState, WebviewRequest } from "./chat-state.js";

/**
 * The chat's behaviour, apart from how it is drawn: which task is open, its event stream,
 * and every action the chat view, the commands and other extensions can take on it.
 */
export class ChatController implements vscode.Disposable {
  private readonly model = new ChatModel();
  private stream: TaskStream | undefined;
  private workspaceRoot = "";
  private readonly changed = new vscode.EventEmitter<ChatState>();
  readonly onDidChangeState = this.changed.event;
  private checkpointRefresh: NodeJS.Timeout | undefined;

  constructor(
    private readonly supervisor: SidecarSupervisor,
    private readonly diffs: DiffPresenter,
    private readonly log: Log,
  ) {}

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

  /** Handles a message from the webview. Errors are shown, never thrown at the webview. */
  async handle(request: WebviewRequest): Promise<void> {
    try {
      switch (request.type) {
        case "ready":
          this.emit();
          await this.refreshCheckpointHeader();
          break;
        case "newTask":
          await this.newTask(request.text);
          break;
        case "send":
          await this.send(request.text);
          break;
        case "respond":
          await this.respond(request.approve, request.text);
          break;
        case "cancel":
          await this.cancel();
          break;
        case "resume":
          await this.resume();
          break;
        case "compare":
          await this.compare(request.checkpointId);
          break;
        case "restore":
          await this.restore(request.checkpointId);
          break;
        case "viewChanges":
          await this.viewChanges();
          break;
        case "editMessage":
          await this.editMessage(request.messageId, request.text, request.mode);
          break;
        case "retryCheckpoints":
          await this.retryCheckpoints();
          break;
        case "disableCheckpoints":
          await this.disableCheckpoints();
          break;
      }
    } catch (err) {
      this.showError(err);
      if (request.type === "newTask" || request.type === "send") {
        this.model.setUnsent(request.text, errorReason(err));
        this.emit();
      }
    }
  }

  showError(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.log.error(message);
    void vscode.window.showErrorMessage(`Dline: ${message}`);
  }

  /** Starts a task in the first workspace folder with the default profile. */
  async newTask(text: string, profileId = ""): Promise<string> {
    if (!text.trim()) throw new Error("Type what the task should do.");
    const { clients } = await this.supervisor.ready();
    const workspaceRoot = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
    const { taskId } = await clients.tasks.newTask({ workspaceRoot, text, profileId });
    this.model.reset(taskId, text.split("\n")[0].slice(0, 80));
    this.model.markRunning();
    this.follow(taskId, workspaceRoot, 0n);
    this.emit();
    void this.refreshCheckpointHeader();
    return taskId;
  }

  /** Opens a task from history: loads its messages, then follows its new events. */
  async openTask(taskId: string): Promise<void> {
    const { clients } = await this.supervisor.ready();
    const task = await clients.tasks.getTask({ taskId });
    this.model.load(task);
    this.follow(taskId, task.task?.workspaceRoot ?? "", task.lastSeq);
    this.emit();
    await this.refreshCheckpoints();
    void this.refreshCheckpointHeader();
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
    this.model.setStatusFromHistory(task.task.status);
    this.emit();
  }

  /** Closes the chat of a task that was deleted. */
  forget(taskIds: string[]): void {
    if (this.taskId && taskIds.includes(this.taskId)) {
      this.stream?.close();
      this.stream = undefined;
      this.model.reset(undefined);
      this.emit();
    }
  }

  /**
   * The follow-up input: answers a pending question, gives feedback on a pending approval
   * (which declines it), continues a finished task, or starts a new one.
   */
  async send(text: string): Promise<void> {
    const { taskId, pendingAsk } = this.model.snapshot;
    if (!taskId) {
      await this.newTask(text);
      return;
    }
    const { clients } = await this.supervisor.ready();
    if (pendingAsk) {
      const answers = pendingAsk.kind === "followup" || pendingAsk.kind === "completion" || pendingAsk.kind === "resume";
      await clients.tasks.respond({ taskId, askId: pendingAsk.askId, approve: answers, text });
    } else {
      await clients.tasks.sendMessage({ taskId, text });
      this.model.markRunning();
      this.emit();
    }
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

  async resume(): Promise<void> {
    const taskId = this.requireTask();
    const { clients } = await this.supervisor.ready();
    await clients.tasks.resume({ taskId });
    this.model.markRunning();
    this.emit();
  }

  /** Compare: the checkpoint against the current workspace, in the native multi-file diff. */
  async compare(checkpointId: string): Promise<ShownDiff[]> {
    const taskId = this.requireTask();
    const { clients } = await this.supervisor.ready();
    const res = await clients.checkpoints.compare({ taskId, checkpointId });
    return this.diffs.show({ title: COMPARE_TITLE, workspaceRoot: this.workspaceRoot, files: res.files, rightIsWorkspace: true });
  }

  /** View Changes: what the task changed since its previous completion. */
  async viewChanges(): Promise<ShownDiff[]> {
    const taskId = this.requireTask();
    const { clients } = await this.supervisor.ready();
    const res = await clients.checkpoints.viewChanges({ taskId });
    return this.diffs.show({ title: VIEW_CHANGES_TITLE, workspaceRoot: this.workspaceRoot, files: res.files, rightIsWorkspace: false });
  }

  /**
   * Restore: the menu of the specification (Restore Files & Task; under "More options" Restore
   * Files Only and Restore Task Only), or the given mode without asking.
   */
  async restore(checkpointId: string, mode?: RestoreMode): Promise<boolean> {
    const taskId = this.requireTask();
    const { clients } = await this.supervisor.ready();
    const checkpoint = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints.find((c) => c.id === checkpointId);
    if (!checkpoint) throw new Error("That checkpoint no longer exists.");
    const options = restoreOptions({ hasFiles: checkpoint.hasFiles, compaction: checkpoint.kind === CheckpointKind.COMPACTION, restored: checkpoint.restored });
    const chosen = mode ?? (await pickRestore(options));
    if (chosen === undefined) return false;
    const option = options.find((o) => o.mode === chosen);
    if (!option || option.disabled) throw new Error("That restore is not available for this checkpoint.");
    const res = await clients.checkpoints.restore({ taskId, checkpointId, mode: chosen });
    if (res.fileError) void vscode.window.showErrorMessage(`Dline: the files could not be restored: ${res.fileError}`);
    else if (res.filesRestored) {
      const count = res.restoredPaths.length + res.deletedPaths.length;
      void vscode.window.showInformationMessage(`Dline: files restored to the checkpoint (${count} file${count === 1 ? "" : "s"}).`);
    }
    await this.refreshCheckpoints();
    return res.filesRestored || res.conversationRestored;
  }

  /** Restore Chat / Restore All for an edited earlier message. */
  async editMessage(messageId: string, text: string, mode: "chat" | "all"): Promise<boolean> {
    const taskId = this.requireTask();
    const { clients } = await this.supervisor.ready();
    const res = await clients.checkpoints.editMessage({
      taskId,
      messageId,
      text,
      mode: mode === "chat" ? EditMessageMode.RESTORE_CHAT : EditMessageMode.RESTORE_ALL,
    });
    if (res.fileError) void vscode.window.showErrorMessage(`Dline: the files could not be restored: ${res.fileError}`);
    if (!res.restored) void vscode.window.showInformationMessage("Dline: the text is unchanged, nothing was restored.");
    await this.refreshCheckpoints();
    return res.restored;
  }

  async retryCheckpoints(): Promise<void> {
    const { clients } = await this.supervisor.ready();
    const res = await clients.checkpoints.retry(this.statusQuery());
    this.model.setCheckpointHeader(checkpointHeader(this.folders(), res.status));
    this.emit();
  }

  async disableCheckpoints(): Promise<void> {
    const { clients } = await this.supervisor.ready();
    const res = await clients.checkpoints.disable(this.statusQuery());
    this.model.setCheckpointHeader(checkpointHeader(this.folders(), res.status));
    this.emit();
  }

  async refreshCheckpointHeader(): Promise<void> {
    const folders = this.folders();
    let status;
    if (folders.length === 1 && this.supervisor.current) {
      try {
        status = await this.supervisor.current.clients.checkpoints.getStatus(this.statusQuery());
      } catch (err) {
        this.log.warn(`checkpoint status: ${(err as Error).message}`);
      }
    }
    this.model.setCheckpointHeader(checkpointHeader(folders, status));
    this.emit();
  }

  dispose(): void {
    this.stream?.close();
    if (this.checkpointRefresh) clearTimeout(this.checkpointRefresh);
    this.changed.dispose();
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
    const kind = event.event.case;
    if (kind === "checkpointSaved" || kind === "rewound") this.scheduleCheckpointRefresh();
    if (kind === "statusChanged") void this.refreshCheckpointHeader();
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

/** The machine-readable reason a Connect error carries (ErrorDetail), as its enum name; "" when none. */
export function errorReason(err: unknown): string {
  const reason = ConnectError.from(err).findDetails(ErrorDetailSchema)[0]?.reason;
  return reason ? `ERROR_REASON_${ErrorReason[reason]}` : "";
}

function toChatCheckpoint(c: Checkpoint): ChatState["checkpoints"][number] {
  return { id: c.id, kind: CheckpointKind[c.kind] ? `CHECKPOINT_KIND_${CheckpointKind[c.kind]}` : "", messageId: c.messageId, hasFiles: c.hasFiles, restored: c.restored };
}

/** The two-level restore menu as quick picks. */
async function pickRestore(options: RestoreOption[]): Promise<RestoreMode | undefined> {
  type Item = vscode.QuickPickItem & { mode?: RestoreMode; more?: boolean };
  const toItem = (o: RestoreOption): Item => ({ label: o.label, detail: o.description, mode: o.mode, description: o.disabled ? "(files already restored)" : undefined });
  const main: Item[] = options.filter((o) => !o.more).map(toItem);
  const more = options.filter((o) => o.more);
  if (more.length > 0) main.push({ label: MORE_OPTIONS_LABEL, more: true });
  const first = await vscode.window.showQuickPick(main, { title: "Restore checkpoint", placeHolder: "Restore this checkpoint" });
  if (!first) return undefined;
  if (!first.more) return first.mode;
  const second = await vscode.window.showQuickPick(
    more.filter((o) => !o.disabled).map(toItem),
    { title: "Restore checkpoint: more options" },
  );
  return second?.mode;
}
