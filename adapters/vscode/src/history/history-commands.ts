import * as vscode from "vscode";
import { DeleteMode } from "../../../../core/src/gen/dline/v1/task_pb.js";
import type { TaskSummary } from "../../../../core/src/gen/dline/v1/task_pb.js";
import type { SidecarSupervisor } from "../sidecar/sidecar-supervisor.js";
import { visibleLine } from "../text/visible-text.js";
import type { HistoryTree } from "./history-tree.js";

export const DELETE_EVERYTHING = "Delete Everything";
export const DELETE_TASK = "Delete Task";
export const DELETE_ALL_EXCEPT_FAVORITES = "Delete All Except Favorites";
/** Delete All History's default (first) button: nothing is deleted. */
export const KEEP_HISTORY = "Keep History";

/** A task id from a command argument: a tree element, or the id itself. */
function taskIdOf(arg: TaskSummary | string | undefined): string | undefined {
  if (typeof arg === "string") return arg;
  return arg?.id;
}

type Guard = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) => (...args: A) => Promise<R | undefined>;

/** `guard` wraps each handler so that a failure is shown to the person instead of thrown. */
export function registerHistoryCommands(
  supervisor: SidecarSupervisor,
  tree: HistoryTree,
  onDeleted: (taskIds: string[]) => void,
  guard: Guard,
): vscode.Disposable[] {
  const register = <A extends unknown[], R>(id: string, fn: (...args: A) => Promise<R> | R) =>
    vscode.commands.registerCommand(
      id,
      guard(async (...args: A) => fn(...args)),
    );
  return [
    register("dline.history.search", async (query?: string) => {
      const text =
        query ??
        (await vscode.window.showInputBox({
          prompt: "Search task history",
          value: tree.query,
          placeHolder: "Words in the title or the task",
        }));
      if (text !== undefined) tree.setQuery(text);
    }),
    register("dline.history.clearSearch", () => tree.setQuery("")),
    register("dline.history.refresh", () => tree.refresh()),
    register("dline.history.toggleFavorite", async (arg: TaskSummary | string, favorite?: boolean) => {
      const taskId = taskIdOf(arg);
      if (!taskId) return;
      const { clients } = await supervisor.ready();
      const next =
        favorite ??
        (typeof arg === "string" ? !(await clients.tasks.getTask({ taskId })).task?.favorite : !arg.favorite);
      await clients.history.setFavorite({ taskId, favorite: next });
      tree.refresh();
    }),
    /** Asks first (a modal dialog); `"confirmed"` as the second argument skips it (keybindings, scripts). */
    register("dline.history.delete", async (arg: TaskSummary | string, confirmed?: "confirmed") => {
      const taskId = taskIdOf(arg);
      if (!taskId) return [];
      const { clients } = await supervisor.ready();
      if (confirmed !== "confirmed") {
        const title = typeof arg === "string" ? (await clients.tasks.getTask({ taskId })).task?.title : arg.title;
        const picked = await vscode.window.showWarningMessage(
          `Delete the task "${visibleLine(title || taskId).slice(0, 120)}"?`,
          { modal: true, detail: "Its messages and checkpoints are deleted too. This cannot be undone." },
          DELETE_TASK,
        );
        if (picked !== DELETE_TASK) return [];
      }
      const res = await clients.tasks.deleteTasks({ taskIds: [taskId], mode: DeleteMode.SELECTED });
      onDeleted(res.deletedTaskIds);
      tree.refresh();
      return res.deletedTaskIds;
    }),
    /**
     * Delete All History: asks which kind (the two buttons of docs/checkpoints.md, "Cleanup"). The choice can be passed
     * as an argument ("everything" / "exceptFavorites") by keybindings and scripts.
     */
    register("dline.history.deleteAll", async (choice?: "everything" | "exceptFavorites") => {
      let mode: DeleteMode | undefined;
      if (choice === "everything") mode = DeleteMode.ALL;
      else if (choice === "exceptFavorites") mode = DeleteMode.ALL_EXCEPT_FAVORITES;
      else {
        const picked = await vscode.window.showWarningMessage(
          "Delete all task history?",
          {
            modal: true,
            detail:
              "Delete Everything also removes every checkpoint. Delete All Except Favorites keeps favorite tasks and the checkpoints.",
          },
          // VS Code's dialog focuses its first button: Enter pressed by habit keeps everything,
          // and each delete is one click away (the least destructive first).
          KEEP_HISTORY,
          DELETE_ALL_EXCEPT_FAVORITES,
          DELETE_EVERYTHING,
        );
        if (picked === DELETE_EVERYTHING) mode = DeleteMode.ALL;
        else if (picked === DELETE_ALL_EXCEPT_FAVORITES) mode = DeleteMode.ALL_EXCEPT_FAVORITES;
      }
      if (mode === undefined) return [];
      const { clients } = await supervisor.ready();
      const res = await clients.tasks.deleteTasks({ taskIds: [], mode });
      onDeleted(res.deletedTaskIds);
      tree.refresh();
      return res.deletedTaskIds;
    }),
  ];
}
