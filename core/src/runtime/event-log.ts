import { EventSpill } from "./event-spill.js";
import type { RuntimeEvent, RuntimeEventBody } from "./runtime-events.js";

type Waiter = () => void;

/** Where a log keeps its older events once those in memory pass `memoryBytes` (see EventSpill). */
export interface EventSpillOptions {
  /** A private folder of the task's (its tmp folder). */
  dir: string;
  /** Events held in memory, in approximate bytes, before the older half goes to the file. */
  memoryBytes?: number;
  /** Free disk space the file leaves alone (see EventSpill). */
  keepFreeBytes?: number;
}

const DEFAULT_MEMORY_BYTES = 8 * 1024 * 1024;
/** How much of the file a subscriber replaying spilled events reads at a time. */
const READ_BATCH_BYTES = 4 * 1024 * 1024;

/**
 * One ordered, resumable stream of a task's events. Every event gets the next `seq`; a
 * subscriber passing `afterSeq` receives exactly the events after it, then live ones, with no
 * gap and no duplicate. `firstSeq` continues from the task's last persisted seq, so that seq
 * keeps increasing across sidecar restarts.
 *
 * A long task over big files makes many large events (every edit's content, several times):
 * with `spill`, only the newest few megabytes stay in memory and the older events are read
 * back from a file of this process when a subscriber asks for them.
 */
export class TaskEventLog {
  /** The events held in memory: the newest ones, from position `memoryFrom` on (0: the first event). */
  private events: RuntimeEvent[] = [];
  private sizes: number[] = [];
  private heldBytes = 0;
  /** Held bytes past which older events go to the file (higher for a while after the file failed). */
  private spillAt: number;
  private memoryFrom = 0;
  /** Events appended so far (positions 0 to count - 1). */
  private count = 0;
  /**
   * Where seqs jump (continueAbove): from position `pos` on, events have seqs `seq`, `seq + 1`…
   * up to the next run's position. Ascending in both; the first run starts the log.
   */
  private readonly runs: { pos: number; seq: bigint }[];
  private readonly spilled: EventSpill | undefined;
  private readonly memoryBytes: number;
  private readonly waiters = new Set<Waiter>();
  private subscriptions = 0;
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
    spill?: EventSpillOptions,
    private readonly onSpillFailure: (err: Error) => void = () => {},
  ) {
    this.nextSeq = baseSeq + 1n;
    this.reservedUpTo = baseSeq;
    this.runs = [{ pos: 0, seq: baseSeq + 1n }];
    this.spilled = spill ? new EventSpill(spill.dir, spill.keepFreeBytes) : undefined;
    this.memoryBytes = spill?.memoryBytes ?? DEFAULT_MEMORY_BYTES;
    this.spillAt = this.memoryBytes;
  }

  get lastSeq(): bigint {
    return this.nextSeq - 1n;
  }

  /** Subscriptions reading this log now (replaying or waiting for live events). */
  get subscribers(): number {
    return this.subscriptions;
  }

  /**
   * The next event's seq is above `seq` (nothing changes when it is already): a sidecar that
   * takes the task's claim continues above every seq another sidecar may have shown for it (its
   * reservation, which a follower's GetTask and Subscribe start from). The next event reserves again.
   */
  continueAbove(seq: bigint): void {
    if (seq < this.nextSeq) return;
    this.nextSeq = seq + 1n;
    this.reservedUpTo = seq;
    const last = this.runs[this.runs.length - 1]!;
    if (last.pos === this.count) last.seq = this.nextSeq;
    else this.runs.push({ pos: this.count, seq: this.nextSeq });
  }

  /** How many events have a seq up to `seq`: the position of the first one after it. */
  private countUpTo(seq: bigint): number {
    let n = 0;
    for (let i = 0; i < this.runs.length; i++) {
      const run = this.runs[i]!;
      if (run.seq > seq) break;
      const end = this.runs[i + 1]?.pos ?? this.count;
      n = Math.min(end, run.pos + Number(seq - run.seq) + 1);
    }
    return n;
  }

  /** Adds an event (its seq, task id and time are given here) and wakes the subscribers. */
  append(body: RuntimeEventBody): RuntimeEvent {
    if (this.nextSeq > this.reservedUpTo) {
      this.reservedUpTo = this.nextSeq + this.reservationSize;
      this.reserve(this.reservedUpTo);
    }
    const event: RuntimeEvent = { seq: this.nextSeq++, taskId: this.taskId, time: BigInt(Date.now()), event: body };
    this.count++;
    const size = approximateBytes(body);
    this.events.push(event);
    this.sizes.push(size);
    this.heldBytes += size;
    if (this.heldBytes > this.spillAt) this.spillOlder();
    for (const wake of [...this.waiters]) wake();
    return event;
  }

  /**
   * Events with seq > afterSeq that this process still holds, in order: all of those in memory,
   * or, from the file, a batch of a few megabytes (ask again after the last one for the rest).
   */
  since(afterSeq: bigint): RuntimeEvent[] {
    const from = this.countUpTo(afterSeq);
    // Once closed, the file is gone: a subscriber gets nothing more rather than a gap.
    if (from < this.memoryFrom) return this.spilled && !this.closed ? this.spilled.read(from, READ_BATCH_BYTES) : [];
    return this.events.slice(from - this.memoryFrom);
  }

  /** The newest event that matches, searched from the newest back (memory first, then the file). */
  findLast(matches: (event: RuntimeEvent) => boolean): RuntimeEvent | undefined {
    const inMemory = this.events.findLast(matches);
    if (inMemory || !this.spilled || this.closed) return inMemory;
    for (let end = this.spilled.count; end > 0;) {
      const from = this.spilled.batchStartBefore(end, READ_BATCH_BYTES);
      const found = this.spilled.read(from, READ_BATCH_BYTES, end).findLast(matches);
      if (found) return found;
      end = from;
    }
    return undefined;
  }

  /**
   * The newest events held in memory that match, oldest first: up to `limit` of them, and no
   * older one once they would take more than `maxBytes` (approximately). `all`: every matching
   * event of the log is among them (none was left out or moved to the file).
   */
  newestInMemory(
    limit: number,
    maxBytes: number,
    matches: (event: RuntimeEvent) => boolean,
  ): { events: RuntimeEvent[]; all: boolean } {
    const found: RuntimeEvent[] = [];
    let bytes = 0;
    let i = this.events.length - 1;
    for (; i >= 0; i--) {
      const event = this.events[i]!;
      if (!matches(event)) continue;
      bytes += this.sizes[i] ?? 0;
      if (found.length === limit || bytes > maxBytes) break;
      found.push(event);
    }
    return { events: found.reverse(), all: i < 0 && this.memoryFrom === 0 };
  }

  /** Ends every subscription (the task was deleted or the sidecar stops) and drops the file. */
  close(): void {
    this.closed = true;
    this.spilled?.close();
    for (const wake of [...this.waiters]) wake();
  }

  /**
   * Yields every event after `afterSeq`, then live events until `signal` aborts or the log
   * closes. Events are yielded in seq order; a slow subscriber never blocks the task (the
   * events it has not read yet are in memory or in the file).
   */
  async *subscribe(afterSeq: bigint, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    this.subscriptions++;
    try {
      yield* this.follow(afterSeq, signal);
    } finally {
      this.subscriptions--;
    }
  }

  private async *follow(afterSeq: bigint, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    let cursor = afterSeq < this.baseSeq ? this.baseSeq : afterSeq;
    while (!signal.aborted) {
      const pending = this.since(cursor);
      for (const event of pending) {
        if (signal.aborted) return;
        cursor = event.seq;
        yield event;
      }
      if (this.closed || signal.aborted) return;
      if (this.countUpTo(cursor) < this.count) continue;
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

  /**
   * Moves the older events to the file until those left in memory take half the limit. When the
   * file cannot take them (a full disk), they stay in memory: an event is never lost.
   */
  private spillOlder(): void {
    if (!this.spilled || this.closed) return;
    let count = 0;
    let bytes = this.heldBytes;
    // The newest event stays in memory: subscribers waiting for it read it from there.
    while (count < this.events.length - 1 && bytes > this.memoryBytes / 2) bytes -= this.sizes[count++] ?? 0;
    if (count === 0) return;
    try {
      this.spilled.append(this.events.slice(0, count));
    } catch (err) {
      // Tried again once twice as much is held, not at every event (a full disk stays full a while).
      this.spillAt = this.heldBytes * 2;
      this.onSpillFailure(err as Error);
      return;
    }
    this.spillAt = this.memoryBytes;
    this.events = this.events.slice(count);
    this.sizes = this.sizes.slice(count);
    this.heldBytes = bytes;
    this.memoryFrom += count;
  }
}

/**
 * About how much memory a value takes: its strings' lengths and a little per field. Events are
 * plain data; the walk still stops after a bounded number of fields (a cycle would never end).
 */
function approximateBytes(value: unknown): number {
  let total = 0;
  const stack: unknown[] = [value];
  for (let visits = 0; stack.length && visits < 1_000_000; visits++) {
    const v = stack.pop();
    if (typeof v === "string") total += v.length + 16;
    else if (v instanceof Uint8Array) total += v.byteLength + 16;
    else if (Array.isArray(v)) {
      total += 16;
      for (const item of v) stack.push(item);
    } else if (v && typeof v === "object") {
      total += 16;
      for (const item of Object.values(v)) stack.push(item);
    } else total += 8;
  }
  return total;
}
