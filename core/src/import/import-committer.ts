import * as fs from "node:fs";
import type { Logger } from "../logging/logger.js";
import type { TaskStorage } from "../tasks/index.js";
import type { ImportItemResult } from "./import-types.js";
import type { BuiltTask } from "./imported-task-writer.js";
import { PRIVATE_FILE_MODE } from "../storage/index.js";

/** The per-item result an import reports; the committer sets its outcome when the batch is committed. */
type PendingResult = Pick<ImportItemResult, "outcome" | "error">;

/** A batch is committed when it holds this many tasks... */
const BATCH_TASKS = 64;
/** ...or this many bytes of files (held in memory until written: two batches at most)... */
const BATCH_BYTES = 4 * 1024 * 1024;
/** ...or when its first task was built this long ago (claims are not held for long). */
const BATCH_AGE_MS = 1000;
/** Writes or fsyncs in flight at once: the file system commits concurrent syncs together. */
const IO_CONCURRENCY = 16;

/**
 * Makes built import tasks durable in batches: writes and fsyncs every file of the batch (and
 * the folders naming them) concurrently on the thread pool, then commits the batch's history
 * rows in one transaction, then releases the tasks' claims. The row is the commit point, so a
 * killed import leaves complete tasks (row present, files synced) or folders without a row
 * that the next import redoes. Files are written in place, not through a temp file and a
 * rename: until its row exists nobody reads the folder, and the next attempt clears it first.
 * One batch is written while the importer builds the next.
 */
export class ImportCommitter {
  private batch: { built: BuiltTask; result: PendingResult }[] = [];
  private batchStartedAt = 0;
  private batchBytes = 0;
  private inFlight: Promise<void> = Promise.resolve();
  committed = 0;

  constructor(
    private readonly storage: TaskStorage,
    private readonly tasksDir: string,
    private readonly logger: Logger,
  ) {}

  /**
   * Adds a built task (its claim held); its result becomes "imported" or "failed" once committed.
   * When this starts a commit while the previous batch is still in flight, waits for that one:
   * at most one batch is being written while the next is built (memory stays bounded).
   */
  async add(built: BuiltTask, result: PendingResult): Promise<void> {
    if (this.batch.length === 0) this.batchStartedAt = Date.now();
    this.batch.push({ built, result });
    this.batchBytes += built.files.reduce((n, f) => n + f.bytes.length, 0);
    const full = this.batch.length >= BATCH_TASKS || this.batchBytes >= BATCH_BYTES;
    if (!full && Date.now() - this.batchStartedAt < BATCH_AGE_MS) return;
    const previous = this.inFlight;
    void this.startCommit();
    await previous;
  }

  /** Commits everything added so far and waits for it (before waiting for another sidecar's claim, and at the end). */
  async flush(): Promise<void> {
    await this.startCommit();
  }

  /** Starts committing the current batch after the one in flight; resolves when both are done. Never rejects. */
  private startCommit(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    if (batch.length > 0) {
      this.inFlight = this.inFlight
        .then(() => this.commit(batch))
        .catch((err: unknown) =>
          this.logger.error("committing imported tasks failed", { error: (err as Error).message }),
        );
    }
    return this.inFlight;
  }

  private async commit(batch: { built: BuiltTask; result: PendingResult }[]): Promise<void> {
    const { history, ownership } = this.storage;
    try {
      try {
        const files = batch.flatMap(({ built }) => built.files);
        await eachConcurrently(files, (f) => fs.promises.writeFile(f.path, f.bytes, { mode: PRIVATE_FILE_MODE }));
        // Stryker disable next-line all: only a power loss shows what an fsync did
        await syncAll(
          files.map((f) => f.path),
          "file",
        );
        // Stryker disable next-line all: only a power loss shows what an fsync did
        await syncAll([...batch.map(({ built }) => built.dir), this.tasksDir], "dir");
        history.putMany(batch.map(({ built }) => built.row));
        // The index commits with synchronous=NORMAL (durable once the process returns, synced at
        // checkpoints); syncing its WAL now makes these rows survive a power loss as well, as
        // synchronous=FULL would, before the import reports them imported.
        // Stryker disable next-line all: only a power loss shows what an fsync did
        await syncAll(fs.existsSync(`${history.file}-wal`) ? [`${history.file}-wal`] : [], "file");
      } catch (err) {
        const error = (err as Error).message.slice(0, 500);
        this.logger.warn("committing imported tasks failed", { count: batch.length, error });
        for (const { built, result } of batch) {
          result.outcome = "failed";
          result.error = error;
          // Without its history row the folder is not a task: remove what this attempt wrote.
          if (!history.get(built.taskId)) {
            fs.rmSync(built.dir, { recursive: true, force: true });
            ownership.forget(built.taskId);
          }
        }
        return;
      }
      this.committed += batch.length;
      for (const { result } of batch) result.outcome = "imported";
    } finally {
      for (const { built } of batch) {
        try {
          ownership.release(built.taskId);
        } catch (err) {
          this.logger.warn("releasing an imported task's claim failed", {
            taskId: built.taskId,
            error: (err as Error).message,
          });
        }
      }
    }
  }
}

/** Runs `fn` on every item, IO_CONCURRENCY at a time. */
async function eachConcurrently<T>(items: T[], fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  // Stryker disable next-line MethodExpression: more workers than items changes nothing but speed
  await Promise.all(Array.from({ length: Math.min(IO_CONCURRENCY, items.length) }, worker));
}

// Stryker disable all: fsyncs (only a power loss shows what they did) and their Windows cases
/** fsyncs paths (on the thread pool, off the event loop). */
function syncAll(paths: string[], kind: "file" | "dir"): Promise<void> {
  return eachConcurrently(paths, (p) => syncOne(p, kind));
}

async function syncOne(p: string, kind: "file" | "dir"): Promise<void> {
  let handle: fs.promises.FileHandle;
  try {
    // Windows flushes only handles opened for writing, and cannot open a folder at all.
    handle = await fs.promises.open(p, kind === "file" ? "r+" : "r");
  } catch (err) {
    if (kind === "dir" && process.platform === "win32") return;
    throw err;
  }
  try {
    await handle.sync();
  } catch (err) {
    // Some file systems refuse fsync on a folder (EINVAL); the files themselves are synced.
    if (!(kind === "dir" && ["EINVAL", "EPERM", "EISDIR"].includes((err as NodeJS.ErrnoException).code ?? "")))
      throw err;
  } finally {
    await handle.close();
  }
}
// Stryker restore all
