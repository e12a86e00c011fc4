import * as fs from "node:fs";
import * as path from "node:path";
import type { Logger } from "../logging/logger.js";
import { type InstanceLayout, type SqliteFactory, mkdirPrivate } from "../storage/index.js";
import { DlineError } from "../errors.js";
import { importLegacyTaskFiles } from "./legacy-import.js";
import { MessageStore, type StoredUiMessage } from "./message-store.js";
import { TaskFileDamaged } from "./task-db.js";
import { TaskFiles } from "./task-files.js";
import type { TaskHistory } from "./task-history.js";
import type { TaskOwnership } from "./task-ownership.js";
import { newTaskRecord, type TaskRecord, type TaskRecordInit } from "./task-record.js";

export interface TaskView {
  record: TaskRecord;
  messages: StoredUiMessage[];
  /** Pid of the live sidecar owning the task, 0 when none does. */
  ownerPid: number;
}

/** An open, owned task: its files plus the release of the claim. */
export interface WritableTask {
  files: TaskFiles;
  release(): void;
}

/**
 * Opens tasks for reading (GetTask) and writing (the runtime), with the checks every open
 * makes: a task left running/waiting by a dead sidecar becomes interrupted, legacy files are
 * imported by whichever sidecar can own the task, and a file that cannot be read marks the
 * task damaged (with the reason) instead of failing other tasks or the listing.
 */
export class TaskStore {
  constructor(
    private readonly layout: InstanceLayout,
    private readonly sqlite: SqliteFactory,
    private readonly history: TaskHistory,
    private readonly ownership: TaskOwnership,
    private readonly logger: Logger,
  ) {}

  /** Creates a task folder, its metadata and history row, and claims it for this process. */
  create(init: TaskRecordInit): WritableTask {
    const task = this.layout.task(init.id);
    if (this.history.get(init.id) || fs.existsSync(task.dir))
      throw new DlineError("already_exists", `Task ${init.id} already exists.`);
    mkdirPrivate(task.dir);
    this.ownership.claim(init.id);
    const record = newTaskRecord(init);
    const files = new TaskFiles(task, this.sqlite, this.logger);
    files.json.writeMetadata({
      id: record.id,
      workspaceRoot: record.workspaceRoot,
      title: record.title,
      createdAt: record.createdAt,
      source: record.source,
    });
    this.history.put(record);
    return { files, release: () => this.release(init.id, files) };
  }

  /** Claims an existing task for writing (failed_precondition naming the owner's pid if another sidecar has it). */
  openForWrite(taskId: string): WritableTask {
    if (!this.history.get(taskId)) throw new DlineError("not_found", `Task ${taskId} does not exist.`);
    this.ownership.claim(taskId);
    const files = new TaskFiles(this.layout.task(taskId), this.sqlite, this.logger);
    try {
      this.runLegacyImports(taskId);
    } catch (err) {
      this.release(taskId, files);
      throw err;
    }
    return { files, release: () => this.release(taskId, files) };
  }

  /** GetTask: the summary and messages. Never writes a task another sidecar owns. */
  get(taskId: string): TaskView {
    this.layout.task(taskId);
    // The claim is looked at before the row: an owner writes the row's last status before it
    // lets the claim go, so a row read after finding no owner is the one its run ended with.
    const owner = this.ownership.owner(taskId);
    let record = this.history.get(taskId);
    if (!record) throw new DlineError("not_found", `Task ${taskId} does not exist.`);
    record = this.recoverIfInterrupted(record, owner !== undefined);
    if (!owner && this.hasLegacyFiles(taskId)) {
      try {
        this.ownership.claim(taskId);
        try {
          this.runLegacyImports(taskId);
        } finally {
          this.ownership.release(taskId);
        }
      } catch (err) {
        if (!(err instanceof DlineError) || err.code !== "failed_precondition") throw err;
      }
      record = this.history.get(taskId) ?? record;
    }
    let messages: StoredUiMessage[] = [];
    if (!fs.existsSync(this.layout.task(taskId).dir)) {
      // Rows are removed before folders when deleting, so a row without a folder is damage, not a race.
      return { record: this.markDamaged(record, "the task folder is missing"), messages, ownerPid: 0 };
    }
    try {
      messages = this.readMessages(taskId);
      new TaskFiles(this.layout.task(taskId), this.sqlite, this.logger).state.read({ keepAsideDamaged: !owner });
    } catch (err) {
      if (!(err instanceof TaskFileDamaged)) throw err;
      record = this.markDamaged(record, err.message);
    }
    return { record, messages, ownerPid: owner?.pid ?? 0 };
  }

  /** Measures the task folder (subagents and logs included) and queues the size into its row. */
  refreshSize(taskId: string): Promise<void> {
    return this.history.update(taskId, { sizeBytes: folderSize(this.layout.task(taskId).dir) });
  }

  /**
   * Restart recovery: a task that was running or waiting when its sidecar died (no live owner)
   * reopens as interrupted. Returns the ids changed.
   */
  recoverInterrupted(): string[] {
    const changed: string[] = [];
    for (const id of this.history.idsWithStatus(["running", "waiting"])) {
      if (this.ownership.owner(id)) continue;
      if (this.history.updateNow(id, { status: "interrupted", updatedAt: Date.now() })) changed.push(id);
    }
    if (changed.length)
      this.logger.info("tasks left running by a stopped sidecar are now interrupted", { count: changed.length });
    return changed;
  }

  private recoverIfInterrupted(record: TaskRecord, owned: boolean): TaskRecord {
    if (owned || (record.status !== "running" && record.status !== "waiting")) return record;
    if (this.ownership.owner(record.id)) return record; // claimed since: a run is live again
    this.history.updateNow(record.id, { status: "interrupted", updatedAt: Date.now() });
    return { ...record, status: "interrupted" };
  }

  private readMessages(taskId: string): StoredUiMessage[] {
    const file = this.layout.task(taskId).messagesDb;
    if (!fs.existsSync(file)) return [];
    const store = MessageStore.open(this.sqlite, file);
    try {
      return store.list();
    } finally {
      store.close();
    }
  }

  private hasLegacyFiles(taskId: string): boolean {
    const l = this.layout.task(taskId).legacy;
    return (
      [
        l.uiMessagesJsonl,
        l.uiMessagesJson,
        l.claudeMessagesJson,
        l.activitiesJson,
        l.apiRateMetricsJsonl,
        l.metricsDbByTaskId,
      ].some((f) => fs.existsSync(f)) ||
      (fs.existsSync(l.snapshotJson) && !this.snapshotImported(taskId))
    );
  }

  private snapshotImported(taskId: string): boolean {
    try {
      const v = new TaskFiles(this.layout.task(taskId), this.sqlite, this.logger).state.read().value;
      return v?.legacySnapshotImported === true;
    } catch {
      return false;
    }
  }

  /** Runs the per-task legacy imports (the caller holds the claim); damage is recorded on the row. */
  private runLegacyImports(taskId: string): void {
    const outcome = importLegacyTaskFiles(this.sqlite, this.layout.task(taskId), this.logger);
    if (outcome.damaged.length > 0) {
      const record = this.history.get(taskId);
      if (record) this.markDamaged(record, outcome.damaged.map((d) => d.reason).join(" "));
    }
  }

  private markDamaged(record: TaskRecord, reason: string): TaskRecord {
    if (record.status === "damaged" && record.damagedReason === reason) return record;
    this.history.updateNow(record.id, { status: "damaged", damagedReason: reason.slice(0, 1000) });
    this.logger.warn("task is damaged; its files were kept", { taskId: record.id, reason });
    return { ...record, status: "damaged", damagedReason: reason };
  }

  private release(taskId: string, files: TaskFiles): void {
    files.close();
    this.ownership.release(taskId);
  }
}

function folderSize(dir: string): number {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += folderSize(p);
    else if (e.isFile()) {
      try {
        total += fs.statSync(p).size;
      } catch {
        // removed meanwhile
      }
    }
  }
  return total;
}
