import type { Logger } from "./logging/logger.js";

export type Flusher = () => Promise<void> | void;

/**
 * Owns the process's orderly stop: flushers run in reverse registration order (last started,
 * first flushed), each bounded in time, then `exit` is called once. Every trigger (stdin EOF,
 * SIGTERM, SIGINT, SystemService.Shutdown) goes through `stop`.
 */
export class Lifecycle {
  private readonly flushers: { name: string; fn: Flusher }[] = [];
  private readonly firstFlushers: { name: string; fn: Flusher }[] = [];
  private closer: Flusher | undefined;
  private flushing: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(
    private readonly logger: Logger,
    private readonly exit: (code: number) => void,
    /** Upper bound for all flushing; the process must be gone within 2 s of stdin EOF. */
    private readonly flushBudgetMs = 1500,
  ) {}

  /** Aborted as soon as a stop begins: long-running work (streams, tasks) listens to it. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /**
   * Registers buffered state to flush before exit (reverse order of registration). `first`:
   * runs before every other (work under way that the others' stops would cut short: a restore
   * rewinds the conversation through the task runtime, which stops its runs when flushed).
   */
  onStop(name: string, fn: Flusher, options: { first?: boolean } = {}): void {
    if (options.first) this.firstFlushers.push({ name, fn });
    else this.flushers.push({ name, fn });
  }

  /** The last step before exit: closing the server, after every flusher ran. */
  setCloser(fn: Flusher): void {
    this.closer = fn;
  }

  /**
   * Begins the stop; resolves once every flusher ran (data is on disk). The process exits
   * after the closer, and in any case within the hard limit.
   */
  stop(reason: string, code = 0): Promise<void> {
    if (!this.flushing) {
      this.logger.info("stopping", { reason });
      this.abort.abort(new Error(`sidecar stopping: ${reason}`));
      setTimeout(() => this.exit(code), this.flushBudgetMs + 400).unref();
      this.flushing = this.runFlushers();
      this.stopping = this.flushing
        .then(() => this.closer?.())
        .catch((err) => this.logger.error("close failed", { error: (err as Error).message }))
        .then(() => this.exit(code));
    }
    return this.flushing;
  }

  private async runFlushers(): Promise<void> {
    const deadline = Date.now() + this.flushBudgetMs;
    for (const { name, fn } of [...this.flushers, ...this.firstFlushers].reverse()) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        this.logger.error("flush budget exhausted", { skipped: name });
        continue;
      }
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(fn),
          new Promise<void>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`flush of ${name} timed out`)), remaining);
          }),
        ]);
      } catch (err) {
        this.logger.error("flush failed", { name, error: (err as Error).message });
      } finally {
        clearTimeout(timer);
      }
    }
  }
}
