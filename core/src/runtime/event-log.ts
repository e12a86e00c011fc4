import type { RuntimeEvent, RuntimeEventBody } from "./runtime-events.js";

type Waiter = () => void;

/**
 * One ordered, resumable stream of a task's events. Every event gets the next `seq`; a
 * subscriber passing `afterSeq` receives exactly the events after it, then live ones, with no
 * gap and no duplicate. `firstSeq` continues from the task's last persisted seq, so that seq
 * keeps increasing across sidecar restarts.
 */
export class TaskEventLog {
  private readonly events: RuntimeEvent[] = [];
  private readonly waiters = new Set<Waiter>();
  private nextSeq: bigint;
  private closed = false;

  private reservedUpTo: bigint;

  constructor(
    readonly taskId: string,
    /** Every seq up to this one may have been used by a previous process (0n for a new task). */
    readonly baseSeq: bigint = 0n,
    /**
     * Called (synchronously, before the event is handed out) whenever seqs beyond the last
     * reservation are needed: the owner persists the new upper bound, so that a process that
     * dies without saving its last seq still never lets a successor reuse one ("hi/lo").
     */
    private readonly reserve: (upTo: bigint) => void = () => {},
    private readonly reservationSize = 10_000n,
  ) {
    this.nextSeq = baseSeq + 1n;
    this.reservedUpTo = baseSeq;
  }

  get lastSeq(): bigint {
    return this.nextSeq - 1n;
  }

  /** Adds an event (its seq, task id and time are given here) and wakes the subscribers. */
  append(body: RuntimeEventBody): RuntimeEvent {
    if (this.nextSeq > this.reservedUpTo) {
      this.reservedUpTo = this.nextSeq + this.reservationSize;
      this.reserve(this.reservedUpTo);
    }
    const event: RuntimeEvent = { seq: this.nextSeq++, taskId: this.taskId, time: BigInt(Date.now()), event: body };
    this.events.push(event);
    for (const wake of [...this.waiters]) wake();
    return event;
  }

  /** Events with seq > afterSeq that this process still holds. */
  since(afterSeq: bigint): RuntimeEvent[] {
    if (afterSeq < this.baseSeq) afterSeq = this.baseSeq;
    const index = Number(afterSeq - this.baseSeq);
    return this.events.slice(index);
  }

  /** Ends every subscription (the task was deleted or the sidecar stops). */
  close(): void {
    this.closed = true;
    for (const wake of [...this.waiters]) wake();
  }

  /**
   * Yields every event after `afterSeq`, then live events until `signal` aborts or the log
   * closes. Events are yielded in seq order; a slow subscriber never blocks the task (events
   * are kept in memory for the task's lifetime in this process).
   */
  async *subscribe(afterSeq: bigint, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    let cursor = afterSeq < this.baseSeq ? this.baseSeq : afterSeq;
    while (!signal.aborted) {
      const pending = this.since(cursor);
      for (const event of pending) {
        if (signal.aborted) return;
        cursor = event.seq;
        yield event;
      }
      if (this.closed) return;
      if (this.since(cursor).length > 0) continue;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          signal.removeEventListener("abort", wake);
          resolve();
        };
        this.waiters.add(wake);
        signal.addEventListener("abort", wake, { once: true });
      });
    }
  }
}
