import * as fs from "node:fs";
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import { deserialize, serialize } from "node:v8";
import { PRIVATE_FILE_MODE, freeBytesOn, mkdirPrivateInExisting } from "../storage/index.js";
import type { RuntimeEvent } from "./runtime-events.js";

/** Room left on the disk for what the person's work needs; below it, events stay in memory. */
const DEFAULT_KEEP_FREE_BYTES = 512 * 1024 * 1024;

/**
 * The older events of one task's event log, moved out of memory into a file of this process:
 * each event serialized as V8 does (bigints, nested messages kept exactly), one after another.
 * The file is owner-only and unlinked as soon as it is open, so it goes with the process (also
 * when it is killed) and no other process ever reads it; where a file cannot be unlinked while
 * open, close() removes it.
 */
export class EventSpill {
  private fd: number | undefined;
  private file: string | undefined;
  private written = 0;
  /** Where each spilled event starts in the file; one more entry than events: the end. */
  private readonly offsets: number[] = [0];

  constructor(
    private readonly dir: string,
    /** Free space the file never takes: events stay in memory rather than fill the disk. */
    private readonly keepFreeBytes = DEFAULT_KEEP_FREE_BYTES,
  ) {}

  /** Events in the file. */
  get count(): number {
    return this.offsets.length - 1;
  }

  /**
   * Appends events (the oldest first) after those already spilled. Throws when the file cannot
   * be created or written (a full disk): nothing of this call is counted then, the caller keeps
   * the events.
   */
  append(events: readonly RuntimeEvent[]): void {
    const fd = this.open();
    const chunks = events.map((e) => serialize(e));
    const data = Buffer.concat(chunks);
    const free = freeBytesOn(this.dir);
    if (free !== undefined && free - data.length < this.keepFreeBytes)
      throw Object.assign(new Error(`${free} bytes free on the disk of ${this.dir}: not spending them on events`), {
        code: "ENOSPC",
      });
    let done = 0;
    while (done < data.length) done += fs.writeSync(fd, data, done, data.length - done, this.written + done);
    let at = this.written;
    for (const chunk of chunks) {
      at += chunk.length;
      this.offsets.push(at);
    }
    this.written = at;
  }

  /**
   * Spilled events from index `from` (0 is the oldest) up to `end` (excluded; all by default), as
   * many as fit in `maxBytes` of the file (at least one), in order.
   */
  read(from: number, maxBytes: number, end = this.count): RuntimeEvent[] {
    end = Math.min(end, this.count);
    if (this.fd === undefined || from >= end) return [];
    const offset = (i: number) => this.offsets[i] ?? this.written;
    const start = offset(from);
    let to = from + 1;
    while (to < end && offset(to + 1) - start <= maxBytes) to++;
    const data = Buffer.alloc(offset(to) - start);
    let done = 0;
    while (done < data.length) {
      const n = fs.readSync(this.fd, data, done, data.length - done, start + done);
      if (n === 0) throw new Error("the task's spilled events end early");
      done += n;
    }
    const events: RuntimeEvent[] = [];
    for (let i = from; i < to; i++)
      events.push(deserialize(data.subarray(offset(i) - start, offset(i + 1) - start)) as RuntimeEvent);
    return events;
  }

  /**
   * Where a backward reader's next batch starts: the first index of the events before `end`
   * that fit in `maxBytes` of the file (at least one).
   */
  batchStartBefore(end: number, maxBytes: number): number {
    end = Math.min(end, this.count);
    const last = this.offsets[end] ?? this.written;
    let from = Math.max(0, end - 1);
    while (from > 0 && last - (this.offsets[from - 1] ?? 0) <= maxBytes) from--;
    return from;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    if (this.file) fs.rmSync(this.file, { force: true });
    this.file = undefined;
  }

  private open(): number {
    if (this.fd !== undefined) return this.fd;
    // Inside the task's folder, which must exist: a task deleted meanwhile keeps its events in memory.
    mkdirPrivateInExisting(this.dir);
    const file = path.join(this.dir, `events-${process.pid}-${randomBytes(6).toString("hex")}.spill`);
    const fd = fs.openSync(file, "wx+", PRIVATE_FILE_MODE);
    try {
      fs.unlinkSync(file);
    } catch {
      this.file = file;
    }
    this.fd = fd;
    return fd;
  }
}
