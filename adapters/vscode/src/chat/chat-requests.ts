import * as vscode from "vscode";
import { DeleteMode, type TaskSummary } from "../../../../core/src/gen/dline/v1/task_pb.js";
import { openCoreSettings } from "../sidecar/core-problem-reporter.js";
import type { SidecarSupervisor } from "../sidecar/sidecar-supervisor.js";
import type { ChatController } from "./chat-controller.js";
import { statusName } from "./chat-model.js";
import type { HistoryRow, WebviewAction, WebviewUpdate } from "./chat-state.js";

export interface ChatRequestDeps {
  controller: ChatController;
  supervisor: SidecarSupervisor;
  /** Sends an update to the chat view. */
  post(update: WebviewUpdate): void;
  showLog(): void;
  /** Tells the History tree and others that tasks were deleted. */
  onDeleted(taskIds: string[]): void;
  /** The history screen's search, kept so that a list sent after a change matches it. */
  historyQuery: { value: string };
}

/** Carries out one action of the chat view; a failure is thrown to the caller (which tells the view). */
export async function handleChatRequest(action: WebviewAction, deps: ChatRequestDeps): Promise<void> {
  const chat = deps.controller;
  switch (action.type) {
    case "ready":
      await chat.refreshCheckpointHeader();
      await chat.preferences.refresh({ taskId: chat.taskId });
      return;
    case "newTask":
      await chat.newTask(action.text);
      return;
    case "send":
      await chat.send(action.text);
      return;
    case "respond":
      await chat.respond(action.approve, action.text);
      return;
    case "cancel":
      return chat.cancel();
    case "resume":
    case "retry":
      return chat.resume();
    case "compare":
      await chat.compare(action.checkpointId);
      return;
    case "restore":
      await chat.restore(action.checkpointId);
      return;
    case "viewChanges":
      await chat.viewChanges(action.messageId ? { messageId: action.messageId } : {});
      return;
    case "editMessage": {
      // The chat's button: Restore All asks first when it would change files; the chat keeps its
      // edit box until it is answered (declined, the box stays with the edited text).
      const restored = await chat.editMessage(action.messageId, action.text, action.mode, true);
      if (action.mode === "all")
        deps.post({ type: "restoreAllDone", messageId: action.messageId, text: action.text, restored });
      return;
    }
    case "retryCheckpoints":
      return chat.retryCheckpoints();
    case "disableCheckpoints":
      return chat.disableCheckpoints();
    case "openFile":
      return chat.openFile(action.path);
    case "showEdits":
      await chat.showEdits(action.messageId);
      return;
    case "showProposed":
      await chat.showProposed();
      return;
    case "copy":
      return vscode.env.clipboard.writeText(action.text);
    case "setMode":
      return chat.preferences.setMode(action.mode, chat.taskId);
    case "setAutoApproval":
      return chat.preferences.setAutoApproval(action.patch);
    case "selectProfile":
      await chat.preferences.selectProfile(action.profileId, chat.taskId);
      chat.dismissBanner();
      return;
    case "saveProfile":
      await chat.preferences.saveProfile(action.form, chat.taskId);
      chat.dismissBanner();
      return;
    case "listHistory":
      // The start screen's recent tasks are no search: the history screen keeps its own.
      if (action.recent) return postHistory(deps, true);
      deps.historyQuery.value = action.query;
      return postHistory(deps);
    case "openTask":
      await chat.openTask(action.taskId);
      deps.post({ type: "screen", screen: "chat" });
      return;
    case "deleteTask": {
      const { clients } = await deps.supervisor.ready();
      const res = await clients.tasks.deleteTasks({ taskIds: [action.taskId], mode: DeleteMode.SELECTED });
      deps.onDeleted(res.deletedTaskIds);
      return postHistory(deps);
    }
    case "deleteAllHistory":
      await vscode.commands.executeCommand("dline.history.deleteAll");
      return postHistory(deps);
    case "toggleFavorite": {
      const { clients } = await deps.supervisor.ready();
      const task = (await clients.tasks.getTask({ taskId: action.taskId })).task;
      await clients.history.setFavorite({ taskId: action.taskId, favorite: !task?.favorite });
      return postHistory(deps);
    }
    case "newChat":
      return chat.newChat();
    case "dismissBanner":
      chat.dismissBanner();
      return;
    case "core":
      if (action.action === "openSettings") return openCoreSettings();
      if (action.action === "showLog") return deps.showLog();
      await vscode.commands.executeCommand("dline.restartCore");
      return;
  }
}

/** Sends the chat's history screen the tasks matching its search (or the start screen its recent tasks). */
export async function postHistory(
  deps: Pick<ChatRequestDeps, "supervisor" | "historyQuery" | "post">,
  recent = false,
): Promise<void> {
  const query = recent ? "" : deps.historyQuery.value;
  const { clients } = await deps.supervisor.ready();
  const page = await clients.history.listTasks({ query, pageSize: 200, pageToken: "" });
  deps.post({ type: "history", query, tasks: page.tasks.map(historyRow), ...(recent ? { recent: true } : {}) });
}

export function historyRow(t: TaskSummary): HistoryRow {
  return {
    id: t.id,
    title: t.title,
    workspaceRoot: t.workspaceRoot,
    favorite: t.favorite,
    status: statusName(t.status),
    updatedAt: Number(t.updatedAt || t.createdAt),
    tokensIn: Number(t.tokensIn),
    tokensOut: Number(t.tokensOut),
    cost: t.cost,
    costUnknown: t.costUnknown,
  };
}
