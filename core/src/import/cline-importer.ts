import * as fs from "node:fs";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import type { InstanceLayout } from "../storage/instance-layout.js";
import type { SqliteFactory } from "../storage/sqlite.js";
import { TaskOwnedElsewhere } from "../tasks/task-ownership.js";
import type { TaskStorage } from "../tasks/task-storage.js";
import { describeCandidate, listCandidates, parseCandidate, type Candidate } from "./cline-discovery.js";
import { resolveClineRoots, type ClineRoots } from "./cline-roots.js";
import { MalformedClineFile, type ClineItem } from "./import-types.js";
import { ImportCommitter } from "./import-committer.js";
import { buildImportedTask, clearInterruptedAttempt } from "./imported-task-writer.js";
import { importedTaskId, importSource } from "./source-keys.js";

export interface DiscoveredItem extends ClineItem {
  /** The Dline task this item was already imported as ("" when it was not). */
  importedTaskId: string;
}

export type ImportOutcome = "imported" | "would_import" | "already_imported" | "skipped" | "failed";

export interface ImportItemResult {
  sourceKey: string;
  taskId: string;
  outcome: ImportOutcome;
  notCarriedOver: string[];
  error: string;
  item?: ClineItem;
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

/**
 * The explicit, read-only "import from Cline" (specs/cline-import.md). Discovery lists what is
 * under the Cline roots; import writes selected items through Dline's owners. Idempotent by
 * source key (the task id is derived from it, and the history row says where it came from);
 * two sidecars importing at once serialise on the task's claim, so each item is imported once.
 */
export class ClineImporter {
  /** One import at a time in this process (the claim is per process, not per request). */
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ClineImporterDeps) {}

  roots(): ClineRoots {
    return resolveClineRoots(this.deps.env, this.deps.platform ?? process.platform);
  }

  async discover(signal?: AbortSignal): Promise<{ items: DiscoveredItem[]; rootsSearched: string[] }> {
    const roots = this.roots();
    const { candidates, rootsSearched } = listCandidates(roots);
    const { history } = await this.deps.tasks();
    const items: DiscoveredItem[] = [];
    for (const [i, c] of candidates.entries()) {
      if (i % YIELD_EVERY === YIELD_EVERY - 1) {
        await tick();
        signal?.throwIfAborted();
      }
      const { item } = describeCandidate(c, roots);
      const row = item.taskId ? history.get(item.taskId) : undefined;
      items.push({ ...item, importedTaskId: row && row.source === importSource(c.sourceKey) ? row.id : "" });
    }
    return { items, rootsSearched };
  }

  import(request: { sourceKeys: string[]; all: boolean; dryRun: boolean }, signal?: AbortSignal): Promise<ImportItemResult[]> {
    if (!request.all && request.sourceKeys.length === 0) {
      throw new DlineError("invalid_argument", "Name the items to import (source_keys) or set all.");
    }
    const run = this.running.then(() => this.importNow(request, signal));
    this.running = run.catch(() => {});
    return run;
  }

  private async importNow(request: { sourceKeys: string[]; all: boolean; dryRun: boolean }, signal?: AbortSignal): Promise<ImportItemResult[]> {
    const roots = this.roots();
    const { candidates } = listCandidates(roots);
    const byKey = new Map(candidates.map((c) => [c.sourceKey, c]));
    const selected: (Candidate | string)[] = request.all ? candidates : [...new Set(request.sourceKeys)].map((k) => byKey.get(k) ?? k);
    const storage = await this.deps.tasks();
    const results: ImportItemResult[] = [];
    const committer = new ImportCommitter(storage, this.deps.layout.tasksDir, this.deps.logger);
    try {
      for (const [i, c] of selected.entries()) {
        if (i % YIELD_EVERY === YIELD_EVERY - 1) await tick();
        signal?.throwIfAborted();
        if (typeof c === "string") {
          results.push({ sourceKey: c, taskId: "", outcome: "failed", notCarriedOver: [], error: "no such item under the Cline roots (run DiscoverCline)" });
          continue;
        }
        results.push(await this.importOne(c, roots, storage, committer, request.dryRun));
      }
    } finally {
      // What was written is committed (durable) before the import answers, even when it was cancelled.
      await committer.flush();
      // WatchHistory subscribers hear about the new tasks now rather than at the next poll.
      if (committer.committed > 0) {
        storage.watcher.poll();
        this.deps.logger.info("imported from Cline", { tasks: committer.committed });
      }
    }
    return results;
  }

  /**
   * Imports one item. A written item is handed to the committer with its claim held, and its
   * result says "imported" once the committer made it durable (at the latest when the import ends).
   */
  private async importOne(c: Candidate, roots: ClineRoots, storage: TaskStorage, committer: ImportCommitter, dryRun: boolean): Promise<ImportItemResult> {
    const base = { sourceKey: c.sourceKey, taskId: "", notCarriedOver: [] as string[], error: "" };
    if (c.decided) return { ...base, outcome: "skipped", error: c.decided.skip?.reason ?? "not importable", item: c.decided };
    const taskId = importedTaskId(c.kind, c.sourceId);
    const alreadyImported = (): ImportItemResult | undefined => {
      const row = storage.history.get(taskId);
      if (!row) return undefined;
      if (row.source === importSource(c.sourceKey)) return { ...base, taskId, outcome: "already_imported" };
      return { ...base, outcome: "failed", error: `Dline task ${taskId} already exists and did not come from ${c.sourceKey}` };
    };
    const before = alreadyImported();
    if (before) return before;
    let parsed;
    try {
      parsed = parseCandidate(c, roots);
    } catch (err) {
      if (err instanceof MalformedClineFile) return { ...base, outcome: "skipped", error: `malformed file: ${err.message}` };
      return { ...base, outcome: "failed", error: (err as Error).message };
    }
    const result: ImportItemResult = { ...base, taskId, notCarriedOver: parsed.notCarriedOver, item: parsed.item, outcome: "failed" };
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
      built = buildImportedTask(this.deps.sqlite, task, taskId, parsed, Date.now());
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
