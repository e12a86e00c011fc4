import * as vscode from "vscode";
import { TaskStatus, type TaskSummary } from "../../../../core/src/gen/dline/v1/task_pb.js";
import type { SidecarSupervisor } from "../sidecar/sidecar-supervisor.js";
import type { Log } from "../sidecar/log.js";
import { visibleLine } from "../text/visible-text.js";

/**
 * The task history view: the core's task index (HistoryService.ListTasks), filtered by a
 * search, refreshed whenever WatchHistory says the index changed (in this or another window).
 */
export class HistoryTree implements vscode.TreeDataProvider<TaskSummary>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TaskSummary | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly tasksChanged = new vscode.EventEmitter<string[]>();
  /** Ids of tasks whose history row changed (in this window's core or another one). */
  readonly onDidChangeTasks = this.tasksChanged.event;
  private queryText = "";
  private watching: AbortController | undefined;
  private disposed = false;
  private view: vscode.TreeView<TaskSummary> | undefined;

  constructor(
    private readonly supervisor: SidecarSupervisor,
    private readonly log: Log,
  ) {}

  get query(): string {
    return this.queryText;
  }

  attach(view: vscode.TreeView<TaskSummary>): void {
    this.view = view;
    this.updateDescription();
  }

  setQuery(query: string): void {
    this.queryText = query.trim();
    void vscode.commands.executeCommand("setContext", "dline.historySearchActive", this.queryText.length > 0);
    this.updateDescription();
    this.refresh();
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  /** The tasks as the view lists them (newest first), all pages. */
  async listTasks(): Promise<TaskSummary[]> {
    const { clients } = await this.supervisor.ready();
    const tasks: TaskSummary[] = [];
    let pageToken = "";
    do {
      const page = await clients.history.listTasks({ query: this.queryText, pageSize: 200, pageToken });
      tasks.push(...page.tasks);
      pageToken = page.nextPageToken;
    } while (pageToken && tasks.length < 5_000);
    return tasks;
  }

  async getChildren(element?: TaskSummary): Promise<TaskSummary[]> {
    if (element) return [];
    try {
      return await this.listTasks();
    } catch (err) {
      this.log.warn(`history: ${(err as Error).message}`);
      return [];
    }
  }

  getTreeItem(task: TaskSummary): vscode.TreeItem {
    const item = new vscode.TreeItem(
      visibleLine(task.title || "(untitled task)"),
      vscode.TreeItemCollapsibleState.None,
    );
    item.id = task.id;
    item.contextValue = task.favorite ? "dlineTaskFavorite" : "dlineTask";
    item.description = [
      task.favorite ? "★" : "",
      relativeTime(Number(task.updatedAt || task.createdAt)),
      statusWord(task.status),
    ]
      .filter(Boolean)
      .join(" · ");
    item.tooltip = new vscode.MarkdownString(
      [
        `**${escapeMarkdown(visibleLine(task.title || "(untitled task)"))}**`,
        task.workspaceRoot,
        task.costUnknown ? "Cost: unknown" : `Cost: $${task.cost.toFixed(4)}`,
        task.damagedReason,
      ]
        .filter(Boolean)
        .join("\n\n"),
    );
    item.iconPath = new vscode.ThemeIcon(
      task.status === TaskStatus.DAMAGED ? "warning" : task.favorite ? "star-full" : "comment-discussion",
    );
    item.command = { command: "dline.openTask", title: "Open Task", arguments: [task.id] };
    return item;
  }

  /** Follows WatchHistory for the life of each sidecar, resuming after the last seq seen. */
  watch(): void {
    let afterSeq = 0n;
    const loop = async () => {
      while (!this.disposed) {
        this.watching = new AbortController();
        try {
          const { clients } = await this.supervisor.whenRunning();
          this.refresh();
          for await (const notice of clients.history.watchHistory({ afterSeq }, { signal: this.watching.signal })) {
            afterSeq = notice.seq;
            this.refresh();
            if (notice.changedTaskIds.length > 0) this.tasksChanged.fire([...notice.changedTaskIds]);
          }
        } catch (err) {
          if (this.disposed) return;
          this.log.warn(`history watch interrupted: ${(err as Error).message}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    };
    void loop();
  }

  dispose(): void {
    this.disposed = true;
    this.watching?.abort();
    this.changed.dispose();
    this.tasksChanged.dispose();
  }

  private updateDescription(): void {
    if (this.view) this.view.description = this.queryText ? `“${this.queryText}”` : undefined;
  }
}

function statusWord(status: TaskStatus): string {
  switch (status) {
    case TaskStatus.RUNNING:
      return "running";
    case TaskStatus.WAITING:
      return "waiting";
    case TaskStatus.INTERRUPTED:
      return "interrupted";
    case TaskStatus.FAILED:
      return "failed";
    case TaskStatus.DAMAGED:
      return "damaged";
    default:
      return "";
  }
}

function relativeTime(ms: number): string {
  if (!ms) return "";
  const minutes = Math.round((Date.now() - ms) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  return new Date(ms).toLocaleDateString();
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|]/g, "\\$&");
}
