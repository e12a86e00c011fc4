import * as fs from "node:fs";

/**
 * Writes to stdout (1) or stderr (2) with plain synchronous writes, which is what
 * process.stdout and process.stderr do for files and pipes on Linux, without creating those
 * streams: the first costs about a millisecond that the handshake line and an editor's first
 * call would wait for. A non-blocking descriptor that is full (EAGAIN) gets the rest through the
 * stream, which queues it, and so does everything after it, to keep the order. Other errors (a
 * closed pipe) are thrown.
 */
export function writeToStdio(fd: 1 | 2, text: string): void {
  if (queuing.has(fd)) {
    streamOf(fd).write(text);
    return;
  }
  const bytes = Buffer.from(text);
  let offset = 0;
  try {
    while (offset < bytes.byteLength) offset += fs.writeSync(fd, bytes, offset);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
    queuing.add(fd);
    streamOf(fd).write(bytes.subarray(offset));
  }
}

/** The descriptors whose writes go through their stream since one was refused (process-wide, as the descriptors are). */
const queuing = new Set<1 | 2>();

function streamOf(fd: 1 | 2): NodeJS.WriteStream {
  return fd === 1 ? process.stdout : process.stderr;
}
