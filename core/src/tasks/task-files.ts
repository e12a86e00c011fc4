import type { TaskLayout, SqliteFactory } from "../storage/index.js";
import type { Logger } from "../logging/logger.js";
import { ActivityStore } from "./activity-store.js";
import { TaskArtifacts } from "./artifacts.js";
import { CommandLogs, DEFAULT_COMMAND_LOG_BUDGET } from "./command-logs.js";
import { JournalStore } from "./journal-store.js";
import { MessageStore } from "./message-store.js";
import { MetricsStore } from "./metrics-store.js";
import { StateFile } from "./state-file.js";
import { TaskJsonFiles } from "./task-json-files.js";

/**
 * The stores of one task folder (or one subagent folder: same layout, nested to any depth),
 * opened lazily and closed together. Only a holder of the task's ownership claim creates a
 * writable TaskFiles (TaskStore.openForWrite), so each file has one writer.
 */
export class TaskFiles {
  private opened: { close(): void }[] = [];
  private _messages?: MessageStore;
  private _journal?: JournalStore;
  private _activities?: ActivityStore;
  private _metrics?: MetricsStore;
  private readonly children: TaskFiles[] = [];
  readonly state: StateFile;
  readonly json: TaskJsonFiles;
  readonly artifacts: TaskArtifacts;
  readonly commandLogs: CommandLogs;

  constructor(
    readonly layout: TaskLayout,
    private readonly sqlite: SqliteFactory,
    private readonly logger: Logger,
    commandLogBudget = DEFAULT_COMMAND_LOG_BUDGET,
  ) {
    this.state = new StateFile(layout.stateJson, layout.stateJsonBak, logger);
    this.json = new TaskJsonFiles(layout);
    this.artifacts = new TaskArtifacts(layout.artifactsDir);
    this.commandLogs = new CommandLogs(layout.commandLogsDir, commandLogBudget);
  }

  get messages(): MessageStore {
    return (this._messages ??= this.track(MessageStore.open(this.sqlite, this.layout.messagesDb)));
  }
  get journal(): JournalStore {
    return (this._journal ??= this.track(JournalStore.open(this.sqlite, this.layout.journalDb)));
  }
  get activities(): ActivityStore {
    return (this._activities ??= this.track(ActivityStore.open(this.sqlite, this.layout.activitiesDb)));
  }
  get metrics(): MetricsStore {
    return (this._metrics ??= this.track(MetricsStore.open(this.sqlite, this.layout.metricsDb)));
  }

  /** The files of a subagent of this task (or of this subagent). */
  subagent(subagentId: string): TaskFiles {
    const child = new TaskFiles(this.layout.subagent(subagentId), this.sqlite, this.logger);
    this.children.push(child);
    return child;
  }

  close(): void {
    for (const child of this.children.splice(0)) child.close();
    for (const store of this.opened.splice(0)) {
      try {
        store.close();
      } catch (err) {
        this.logger.warn("closing a task store failed", { dir: this.layout.dir, error: (err as Error).message });
      }
    }
    this._messages = this._journal = this._activities = this._metrics = undefined;
  }

  private track<T extends { close(): void }>(store: T): T {
    this.opened.push(store);
    return store;
  }
}
