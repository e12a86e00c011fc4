import * as fs from "node:fs";

/**
 * Follows a growing log file (the sidecar's stderr) and hands each new complete line to `onLine`.
 * Polls the size: the file is appended by another process, and fs.watch is not reliable on
 * every file system.
 */
export class LogTail {
  private offset = 0;
  private partial = "";
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly file: string,
    private readonly onLine: (line: string) => void,
    private readonly intervalMs = 500,
  ) {
    try {
      this.offset = fs.statSync(file).size;
    } catch {
      this.offset = 0;
    }
  }

  start(): void {
    this.timer ??= setInterval(() => this.poll(), this.intervalMs);
  }

  /** Reads what is left, then stops. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.poll();
    if (this.partial) this.onLine(this.partial);
    this.partial = "";
  }

  private poll(): void {
    let size: number;
    try {
      size = fs.statSync(this.file).size;
    } catch {
      return;
    }
    if (size < this.offset) this.offset = 0; // truncated or replaced
    if (size === this.offset) return;
    const fd = fs.openSync(this.file, "r");
    try {
      const buffer = Buffer.alloc(Math.min(size - this.offset, 1 << 20));
      const read = fs.readSync(fd, buffer, 0, buffer.length, this.offset);
      this.offset += read;
      const lines = (this.partial + buffer.subarray(0, read).toString("utf8")).split("\n");
      this.partial = lines.pop() ?? "";
      for (const line of lines) if (line) this.onLine(line);
    } finally {
      fs.closeSync(fd);
    }
  }
}
