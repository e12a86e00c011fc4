import * as vscode from "vscode";
import { RestoreMode } from "../../../core/src/gen/dline/v1/checkpoint_pb.js";
import type { DlineApi } from "./api.js";
import { ChatController } from "./chat/chat-controller.js";
import { ChatViewProvider } from "./chat/chat-view.js";
import type { ViewChangesTarget } from "./chat/chat-state.js";
import { OpenTaskMemory } from "./chat/open-task-memory.js";
import { PROPOSED_SCHEME, ProposedChanges } from "./chat/proposed-changes.js";
import { checkpointPickItems } from "./checkpoints/checkpoint-pick.js";
import { CHECKPOINT_SCHEME, CheckpointDocuments } from "./checkpoints/checkpoint-documents.js";
import { DiffPresenter } from "./checkpoints/diff-presenter.js";
import { CapabilitiesTree, registerCapabilityCommands } from "./capabilities/capabilities-tree.js";
import { registerHistoryCommands } from "./history/history-commands.js";
import { HistoryTree } from "./history/history-tree.js";
import { importFromCline } from "./import/import-command.js";
import { registerProfileCommands } from "./profiles.js";
import { migrateHostState } from "./settings/host-state-migration.js";
import { SettingsMirror } from "./settings/settings-mirror.js";
import { CORE_PATH_SETTING, CoreProblemReporter, openCoreSettings } from "./sidecar/core-problem-reporter.js";
import { locateCore } from "./sidecar/locate-core.js";
import type { Log } from "./sidecar/log.js";
import { SidecarSupervisor } from "./sidecar/sidecar-supervisor.js";
import { watchUnsavedFiles } from "./tasks/unsaved-files.js";

// VS Code's deactivate() takes no arguments: the one running supervisor is kept here for it.
let supervisor: SidecarSupervisor | undefined;

/** Composition root: builds every part of the extension and wires them together. */
export function activate(context: vscode.ExtensionContext): DlineApi {
  const channel = vscode.window.createOutputChannel("Dline", { log: true });
  const log: Log = { info: (m) => channel.info(m), warn: (m) => channel.warn(m), error: (m) => channel.error(m) };
  const version = String((context.extension.packageJSON as { version?: string }).version ?? "0.0.0");
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);

  const core = new SidecarSupervisor({
    locateBinary: () => {
      const location = locateCore(
        vscode.workspace.getConfiguration("dline").get<string>("corePath"),
        process.env,
        context.extensionUri.fsPath,
      );
      log.info(`core binary: ${location.path} (${location.source})`);
      return location.path;
    },
    workspaceRoots: folders,
    env: process.env,
    clientVersion: version,
    logDir: context.logUri.fsPath,
    log,
  });
  supervisor = core;

  const documents = new CheckpointDocuments();
  const proposedDocuments = new CheckpointDocuments(8, PROPOSED_SCHEME);
  const proposed = new ProposedChanges(proposedDocuments);
  const chat = new ChatController(core, new DiffPresenter(documents), proposed, log);
  const history = new HistoryTree(core, log);
  const historyView = vscode.window.createTreeView("dline.history", {
    treeDataProvider: history,
    showCollapseAll: false,
  });
  history.attach(historyView);
  const onDeleted = (ids: string[]) => {
    chat.forget(ids);
    history.refresh();
  };
  const chatView = new ChatViewProvider(context.extensionUri, chat, {
    supervisor: core,
    showLog: () => channel.show(),
    onDeleted,
    historyQuery: { value: "" },
  });
  const settings = new SettingsMirror(core, log);
  const capabilities = new CapabilitiesTree(core, folders[0], log);
  const capabilitiesView = vscode.window.createTreeView("dline.capabilities", {
    treeDataProvider: capabilities,
    showCollapseAll: true,
  });
  const problems = new CoreProblemReporter(() => channel.show(), log);
  history.onDidChangeTasks((ids) => {
    void chat.onTasksChanged(ids).catch((err) => log.warn(`task status: ${(err as Error).message}`));
    chatView.refreshHistory();
  });
  settings.onDidChangeCore((values) => chat.preferences.fromGlobalSettings(values));

  // The task open in this window, reopened after a reload or a restart of the editor.
  const openTask = new OpenTaskMemory(context.workspaceState);
  context.subscriptions.push(chat.onDidChangeState((state) => openTask.remember(state.taskId)));

  let migrated = false;
  core.onDidStart((running) => {
    const reopen = openTask.toReopen();
    if (reopen && !chat.taskId)
      void chat.openTask(reopen).catch((err) => {
        log.warn(`reopening the task open before the window reloaded: ${(err as Error).message}`);
        openTask.remember(chat.taskId);
      });
    problems.recovered();
    chat.setCore("running");
    void chat.refreshCheckpointHeader();
    void chat.preferences
      .refresh({ taskId: chat.taskId })
      .catch((err) => log.warn(`preferences: ${(err as Error).message}`));
    capabilities.refresh();
    history.refresh();
    if (!migrated) {
      migrated = true;
      void migrateHostState(context, core, log).catch((err) => {
        migrated = false;
        log.error(`host state migration failed (it is retried at the next start): ${(err as Error).message}`);
      });
    }
    if (running.generation > 1) {
      void vscode.window.setStatusBarMessage("Dline core restarted", 3_000);
      void chat.reload().catch((err) => log.warn(`reopening the task after a restart: ${(err as Error).message}`));
    }
  });
  core.onDidExit(() => chat.setCore("restarting"));
  // A start that fails is said at once (once per stretch of failures); the restarts go on meanwhile.
  core.onDidFailToStart((err) => {
    problems.failed(err);
    if (!core.current) chat.setCore("failed", err.message);
  });
  core.onDidFail((err) => {
    problems.failed(err);
    chat.setCore("failed", err.message);
  });

  const run =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R | undefined> => {
      try {
        return await fn(...args);
      } catch (err) {
        chat.showError(err);
        return undefined;
      }
    };
  const checkpointArg = async (arg: unknown, placeHolder: string): Promise<string | undefined> => {
    if (typeof arg === "string") return arg;
    // Each row says when, what (start of the task, after which turn and step, ...) and how many files; the id beside.
    const items = checkpointPickItems(chat.state.checkpoints, chat.state.items);
    return (await vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true, matchOnDetail: true }))
      ?.id;
  };
  // Approve / Reject also sit on the diff editor's title bar, which passes the editor's URI.
  const feedback = (arg: unknown) => (typeof arg === "string" ? arg : "");

  context.subscriptions.push(
    channel,
    documents,
    proposedDocuments,
    proposed,
    chat,
    chatView,
    history,
    historyView,
    settings,
    capabilities,
    capabilitiesView,
    problems,
    vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, documents),
    vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, proposedDocuments),
    vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chatView, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // A fixed path takes effect at once (and clears the failure when the core starts).
      if (e.affectsConfiguration(CORE_PATH_SETTING))
        void core
          .restart()
          .catch((err) => log.warn(`restart after a dline.corePath change: ${(err as Error).message}`));
    }),
    watchUnsavedFiles(
      () => void chat.reportEditorState().catch((err) => log.warn(`editor state: ${(err as Error).message}`)),
    ),
    vscode.commands.registerCommand(
      "dline.newTask",
      run(async (text?: string, profileId?: string) => {
        await chatView.reveal("chat");
        if (typeof text !== "string" || !text) {
          await chat.newChat();
          return undefined;
        }
        return chat.newTask(text, profileId);
      }),
    ),
    vscode.commands.registerCommand(
      "dline.showHistory",
      run(() => chatView.reveal("history")),
    ),
    vscode.commands.registerCommand(
      "dline.configureProfile",
      run(() => chatView.reveal("model")),
    ),
    vscode.commands.registerCommand(
      "dline.openCoreSettings",
      run(() => openCoreSettings()),
    ),
    vscode.commands.registerCommand(
      "dline.sendMessage",
      run(async (text?: string) => {
        const message =
          typeof text === "string" ? text : await vscode.window.showInputBox({ prompt: "Message to Dline" });
        if (message) await chat.send(message);
      }),
    ),
    vscode.commands.registerCommand(
      "dline.approve",
      run((text?: unknown) => chat.respond(true, feedback(text))),
    ),
    vscode.commands.registerCommand(
      "dline.reject",
      run((text?: unknown) => chat.respond(false, feedback(text))),
    ),
    vscode.commands.registerCommand(
      "dline.cancelTask",
      run(() => chat.cancel()),
    ),
    vscode.commands.registerCommand(
      "dline.resumeTask",
      run(() => chat.resume()),
    ),
    vscode.commands.registerCommand(
      "dline.openTask",
      run(async (taskId: string) => {
        await chatView.reveal("chat");
        await chat.openTask(taskId);
      }),
    ),
    vscode.commands.registerCommand(
      "dline.compare",
      run(async (checkpointId?: string) => {
        const id = await checkpointArg(checkpointId, "Compare the workspace with which checkpoint?");
        return id ? chat.compare(id) : undefined;
      }),
    ),
    vscode.commands.registerCommand(
      "dline.viewChanges",
      // From a completion card or a script: { messageId } or { checkpointId } names the completion.
      run((which?: ViewChangesTarget) => chat.viewChanges(typeof which === "object" && which ? which : {})),
    ),
    vscode.commands.registerCommand(
      "dline.restore",
      run(async (checkpointId?: string, mode?: "filesAndTask" | "files" | "task") => {
        const id = await checkpointArg(checkpointId, "Restore which checkpoint?");
        const modes = { filesAndTask: RestoreMode.FILES_AND_TASK, files: RestoreMode.FILES, task: RestoreMode.TASK };
        return id ? chat.restore(id, mode ? modes[mode] : undefined) : undefined;
      }),
    ),
    vscode.commands.registerCommand(
      "dline.editMessage",
      run(async (messageId: string, text: string, mode: "chat" | "all" = "chat") =>
        chat.editMessage(messageId, text, mode),
      ),
    ),
    vscode.commands.registerCommand(
      "dline.retryCheckpoints",
      run(() => chat.retryCheckpoints()),
    ),
    vscode.commands.registerCommand(
      "dline.disableCheckpoints",
      run(() => chat.disableCheckpoints()),
    ),
    vscode.commands.registerCommand(
      "dline.restartCore",
      run(async () => {
        const running = await core.restart();
        return running.handshake.pid;
      }),
    ),
    vscode.commands.registerCommand("dline.showLog", () => channel.show()),
    ...registerHistoryCommands(core, history, onDeleted, run),
    ...registerProfileCommands(core),
    ...registerCapabilityCommands(core, capabilities, folders[0], run),
    vscode.commands.registerCommand(
      "dline.importCline",
      run(() =>
        importFromCline(
          core,
          log,
          () => channel.show(),
          () => history.refresh(),
        ),
      ),
    ),
  );

  void core.start();
  history.watch();
  settings.start();

  const generationWaiters: { after: number; resolve: (g: number) => void }[] = [];
  core.onDidStart((running) => {
    for (const w of generationWaiters.splice(0)) {
      if (running.generation > w.after) w.resolve(running.generation);
      else generationWaiters.push(w);
    }
  });

  return {
    clients: async () => (await core.ready()).clients,
    corePid: () => core.pid,
    coreGeneration: () => core.current?.generation ?? 0,
    waitForCore: (after) =>
      core.current && core.current.generation > after
        ? Promise.resolve(core.current.generation)
        : new Promise((resolve) => generationWaiters.push({ after, resolve })),
    coreFailing: () => problems.failing,
    chat: {
      state: () => chat.state,
      onDidChangeState: (listener) => chat.onDidChangeState(listener),
      compare: (id) => chat.compare(id),
      viewChanges: (which) => chat.viewChanges(which),
    },
    history: { list: () => history.listTasks() },
    capabilities: { list: async () => (await capabilities.list()).capabilities },
  };
}

/** Stops the core: it flushes its state and exits (VS Code waits for the returned promise). */
export async function deactivate(): Promise<void> {
  await supervisor?.stop();
  supervisor = undefined;
}
