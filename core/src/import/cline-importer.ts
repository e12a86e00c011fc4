import * as fs from "node:fs";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import type { InstanceLayout, SqliteFactory } from "../storage/index.js";
import { TaskJsonFiles, TaskOwnedElsewhere, type TaskRecord, type TaskStorage } from "../tasks/index.js";
import {
  candidateSources,
  describeCandidate,
  discoveryContext,
  listCandidates,
  parseCandidate,
  type Candidate,
  type DiscoveryContext,
} from "./cline-discovery.js";
import { resolveClineRoots, type ClineRoots } from "./cline-roots.js";
import { MalformedClineFile, type ClineItem, type ImportItemResult, type ParsedClineItem } from "./import-types.js";
import { ImportCommitter } from "./import-committer.js";
import { importRecord, IMPORT_FORMAT, sourceStamp, storedImportRecord } from "./import-record.js";
import { changedInDline, refreshImportedTask } from "./import-refresh.js";
import { buildImportedTask, clearInterruptedAttempt } from "./imported-task-writer.js";
import { importedTaskId, importSource, legacySourceKey } from "./source-keys.js";

export interface DiscoveredItem extends ClineItem {
  /** The Dline task this item was already imported as ("" when it was not). */
  importedTaskId: string;
}

export interface ClineImporterDeps {
  /** The sidecar's environment: HOME, APPDATA, CLINE_* (read at every call). */
  env: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  layout: InstanceLayout;
  sqlite: SqliteFactory;
  tasks: () => Promise<TaskStorage>;
  logger: Logger;
  /** How long to wait for another sidecar importing the same item (default 60 s). */
  claimWaitMs?: number;
}

/** Lets other requests run between items of a long discovery or import. */
const YIELD_EVERY = 25;
const tick = () => new Promise<void>((r) => setImmediate(r));

/** The Dline task an item goes to, and its history row when it was imported before. */
interface Target {
  taskId: string;
  row?: TaskRecord;
}

/**
 * The explicit, read-only "import from Cline". Discovery lists what is under the Cline roots;
 * import writes selected items through Dline's owners. Idempotent by source key (the task id is
 * derived from it, and the history row says where it came from); an item whose source changed
 * since it was imported is refreshed, unless its Dline copy was changed in Dline. Two sidecars
 * importing at once serialise on the task's claim, so each item is imported once.
 */
export class ClineImporter {
  /** One import at a time in this process (the claim is per process, not per request). */
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ClineImporterDeps) {}

  roots(): ClineRoots {
    return resolveClineRoots(this.deps.env, this.deps.platform ?? process.platform);
  }

  async discover(signal?: AbortSignal): Promise<{ items: DiscoveredItem[]; rootsSearched: string[] }> {
    const ctx = discoveryContext(this.roots());
    const { candidates, rootsSearched } = listCandidates(ctx.roots);
    const { history } = await this.deps.tasks();
    const items: DiscoveredItem[] = [];
    for (const [i, c] of candidates.entries()) {
      if (i % YIELD_EVERY === YIELD_EVERY - 1) {
        await tick();
        signal?.throwIfAborted();
      }
      const { item } = describeCandidate(c, ctx);
      const target = c.decided ? undefined : this.targetOf(c, history);
      const imported = target?.row && this.fromThisSource(c, target.row) ? target.row.id : "";
      items.push({
        ...item,
        taskId: item.taskId && target ? target.taskId : item.taskId,
        importedTaskId: imported,
        skip: this.withDuplicateHint(c, item, history),
      });
    }
    return { items, rootsSearched };
  }

  import(
    request: { sourceKeys: string[]; all: boolean; dryRun: boolean },
    signal?: AbortSignal,
  ): Promise<ImportItemResult[]> {
    if (!request.all && request.sourceKeys.length === 0) {
      throw new DlineError("invalid_argument", "Name the items to import (source_keys) or set all.");
    }
    const run = this.running.then(() => this.importNow(request, signal));
    this.running = run.catch(() => {});
    return run;
  }

  private async importNow(
    request: { sourceKeys: string[]; all: boolean; dryRun: boolean },
    signal?: AbortSignal,
  ): Promise<ImportItemResult[]> {
    const ctx = discoveryContext(this.roots());
    const { candidates } = listCandidates(ctx.roots);
    const byKey = new Map(candidates.map((c) => [c.sourceKey, c]));
    const selected: (Candidate | string)[] = request.all
      ? candidates
      : [...new Set(request.sourceKeys)].map((k) => byKey.get(k) ?? k);
    const storage = await this.deps.tasks();
    const results: ImportItemResult[] = [];
    const committer = new ImportCommitter(storage, this.deps.layout.tasksDir, this.deps.logger);
    try {
      for (const [i, c] of selected.entries()) {
        if (i % YIELD_EVERY === YIELD_EVERY - 1) await tick();
        signal?.throwIfAborted();
        if (typeof c === "string") {
          results.push({
            sourceKey: c,
            taskId: "",
            outcome: "failed",
            notCarriedOver: [],
            error: "no such item under the Cline roots",
            errorCode: "unknown_source_key",
          });
          continue;
        }
        results.push(await this.importOne(c, ctx, storage, committer, request.dryRun));
      }
    } finally {
      // What was written is committed (durable) before the import answers, even when it was cancelled.
      await committer.flush();
      const refreshed = results.filter((r) => r.outcome === "refreshed").length;
      // WatchHistory subscribers hear about the new tasks now rather than at the next poll.
      if (committer.committed > 0 || refreshed > 0) {
        storage.watcher.poll();
        this.deps.logger.info("imported from Cline", { tasks: committer.committed, refreshed });
      }
    }
    return results;
  }

  /**
   * The task an item goes to: the one it was imported as before, else the id derived from its
   * source key. A session that continues a legacy task goes to the legacy task's import when
   * only that one exists (imported before Cline 4 resumed it), so it is not counted twice.
   */
  private targetOf(c: Candidate, history: TaskStorage["history"]): Target {
    const own = importedTaskId(c.kind, c.sourceId);
    const ownRow = history.get(own);
    if (ownRow || !c.legacyPartner) return { taskId: own, row: ownRow };
    const legacyId = importedTaskId("legacy_task", c.sourceId);
    const legacyRow = history.get(legacyId);
    return legacyRow && this.fromThisSource(c, legacyRow) ? { taskId: legacyId, row: legacyRow } : { taskId: own };
  }

  private fromThisSource(c: Candidate, row: TaskRecord): boolean {
    return (
      row.source === importSource(c.sourceKey) ||
      (c.legacyPartner !== undefined && row.source === importSource(legacySourceKey(c.sourceId)))
    );
  }

  /**
   * A migrated legacy task that an earlier import made a task of its own while its session was
   * imported too: both are kept (nothing is deleted), and the reason says which one to remove.
   */
  private withDuplicateHint(c: Candidate, item: ClineItem, history: TaskStorage["history"]): ClineItem["skip"] {
    if (item.skip?.code !== "migrated") return item.skip;
    const legacyId = importedTaskId("legacy_task", c.sourceId);
    const sessionId = importedTaskId("session", c.sourceId);
    const legacyRow = history.get(legacyId);
    if (!legacyRow || legacyRow.source !== importSource(c.sourceKey) || !history.get(sessionId)) return item.skip;
    return {
      ...item.skip,
      reason: `${item.skip.reason}; an earlier import also made it Dline task ${legacyId}, which ${sessionId} includes: delete ${legacyId} so its usage is not counted twice`,
    };
  }

  /**
   * Imports one item. A written item is handed to the committer with its claim held, and its
   * result says "imported" once the committer made it durable (at the latest when the import ends).
   */
  private async importOne(
    c: Candidate,
    ctx: DiscoveryContext,
    storage: TaskStorage,
    committer: ImportCommitter,
    dryRun: boolean,
  ): Promise<ImportItemResult> {
    const base = { sourceKey: c.sourceKey, taskId: "", notCarriedOver: [] as string[], error: "" };
    if (c.decided) {
      const skip = this.withDuplicateHint(c, c.decided, storage.history);
      return { ...base, outcome: "skipped", error: skip?.reason ?? "not importable", item: c.decided };
    }
    const target = this.targetOf(c, storage.history);
    const taskId = target.taskId;
    const alreadyImported = (): ImportItemResult | undefined => {
      const row = storage.history.get(taskId);
      if (!row) return undefined;
      if (this.fromThisSource(c, row)) return { ...base, taskId, outcome: "already_imported" };
      return {
        ...base,
        outcome: "failed",
        error: `Dline task ${taskId} already exists and did not come from ${c.sourceKey}`,
      };
    };
    const sources = candidateSources(c, ctx);
    const stamp = sourceStamp(sources.files, sources.facts);
    if (target.row) {
      const before = alreadyImported()!;
      return before.outcome === "failed" ? before : this.refreshIfChanged(c, ctx, storage, target.row, stamp, dryRun);
    }
    let parsed;
    try {
      parsed = parseCandidate(c, ctx);
    } catch (err) {
      if (err instanceof MalformedClineFile)
        return { ...base, outcome: "skipped", error: `malformed file: ${err.message}` };
      return { ...base, outcome: "failed", error: (err as Error).message };
    }
    const result: ImportItemResult = {
      ...base,
      taskId,
      notCarriedOver: parsed.notCarriedOver,
      detail: parsed.detail,
      item: { ...parsed.item, taskId },
      outcome: "failed",
    };
    if (dryRun) return { ...result, outcome: "would_import" };

    const claimed = await this.claim(taskId, storage, committer);
    if (claimed !== true) return { ...result, error: claimed };
    const task = this.deps.layout.task(taskId);
    let built;
    try {
      // Another sidecar may have finished this item while we waited for its claim.
      const meanwhile = alreadyImported();
      if (meanwhile) {
        storage.ownership.release(taskId);
        return meanwhile;
      }
      clearInterruptedAttempt(task);
      built = buildImportedTask(this.deps.sqlite, task, taskId, parsed, Date.now(), importRecord(parsed, stamp));
    } catch (err) {
      this.deps.logger.warn("importing from Cline failed", { sourceKey: c.sourceKey, error: (err as Error).message });
      // Without its history row the folder is not a task: remove what this attempt wrote.
      if (!storage.history.get(taskId)) {
        fs.rmSync(task.dir, { recursive: true, force: true });
        storage.ownership.forget(taskId);
      }
      storage.ownership.release(taskId);
      return { ...result, error: (err as Error).message.slice(0, 500) };
    }
    await committer.add(built, result);
    return result;
  }

  /**
   * An item imported before: left as it is when its source did not change (the stamp of its
   * files, then the hash of what it reads to), refreshed when it did and the Dline copy was not
   * changed in Dline, otherwise reported and left alone. A copy made by an earlier version of
   * the import (no record, or an older one) is refreshed too when unchanged in Dline: the import
   * reads more of Cline's data now (usage, the workspace, the truncated conversation).
   */
  private async refreshIfChanged(
    c: Candidate,
    ctx: DiscoveryContext,
    storage: TaskStorage,
    row: TaskRecord,
    stamp: string,
    dryRun: boolean,
  ): Promise<ImportItemResult> {
    const task = this.deps.layout.task(row.id);
    const unchanged: ImportItemResult = {
      sourceKey: c.sourceKey,
      taskId: row.id,
      outcome: "already_imported",
      notCarriedOver: [],
      error: "",
    };
    let stored: ReturnType<typeof storedImportRecord> | undefined;
    try {
      stored = storedImportRecord(new TaskJsonFiles(task).readMetadata());
    } catch {
      stored = undefined;
    }
    const current = stored?.format === IMPORT_FORMAT;
    if (current && stored!.sourceStamp === stamp) return unchanged;
    let parsed: ParsedClineItem;
    try {
      parsed = parseCandidate(c, ctx);
    } catch (err) {
      if (!(err instanceof MalformedClineFile)) throw err;
      return {
        ...unchanged,
        detail: `its source cannot be read now (${err.message}): the imported copy is kept as it is`,
      };
    }
    const record = importRecord(parsed, stamp);
    if (current && stored!.contentHash === record.contentHash) return unchanged;
    if (changedInDline(this.deps.sqlite, task, stored)) {
      return current
        ? {
            ...unchanged,
            outcome: "skipped",
            error: `changed in Cline since the import, but ${row.id} was continued or rewound in Dline: not refreshed, nothing overwritten`,
          }
        : unchanged;
    }
    const why = current ? "changed in Cline since the import" : "imported by an earlier version of the import";
    const result: ImportItemResult = {
      ...unchanged,
      notCarriedOver: parsed.notCarriedOver,
      item: { ...parsed.item, taskId: row.id },
      detail: why,
    };
    if (dryRun) return { ...result, outcome: "would_refresh" };
    try {
      storage.ownership.claim(row.id);
    } catch (err) {
      return { ...result, outcome: "skipped", error: `${(err as Error).message} Not refreshed.` };
    }
    try {
      refreshImportedTask(
        { sqlite: this.deps.sqlite, history: storage.history },
        task,
        row,
        parsed,
        Date.now(),
        record,
        !current,
      );
    } catch (err) {
      this.deps.logger.warn("refreshing an imported task failed", { taskId: row.id, error: (err as Error).message });
      return { ...result, outcome: "failed", error: (err as Error).message.slice(0, 500) };
    } finally {
      storage.ownership.release(row.id);
    }
    return { ...result, outcome: "refreshed" };
  }

  /** Claims the task folder, waiting (bounded) while another sidecar imports the same item. */
  private async claim(taskId: string, storage: TaskStorage, committer: ImportCommitter): Promise<true | string> {
    const deadline = Date.now() + (this.deps.claimWaitMs ?? 60_000);
    for (;;) {
      try {
        storage.ownership.claim(taskId, { mustExist: false });
        return true;
      } catch (err) {
        if (!(err instanceof TaskOwnedElsewhere)) return (err as Error).message;
        if (Date.now() > deadline) return `${err.message} (still busy after waiting)`;
      }
      // Never wait while holding claims: the other sidecar may be waiting for one of ours.
      await committer.flush();
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
