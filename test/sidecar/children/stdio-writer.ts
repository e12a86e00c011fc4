// Writes numbered lines to stdout and stderr with writeToStdio; "nonblocking" first turns
// stdout's pipe non-blocking, as some parents hand it over, so that a full pipe answers EAGAIN.
// It writes until a write is refused (or half the lines), then sleeps without running the event
// loop while the reader drains the pipe, so the pipe has room again while process.stdout still
// holds the refused rest; the other half must not overtake that rest.
import { writeToStdio } from "../../../core/src/logging/stdio.js";

const [mode, countText] = process.argv.slice(2);
if (mode === "nonblocking")
  (process.stdout as unknown as { _handle: { setBlocking(on: boolean): number } })._handle.setBlocking(false);
const count = Number(countText);
const filler = "x".repeat(100);
const refused = () => mode === "nonblocking" && process.stdout.writableLength > 0;
const writeLine = (i: number) => {
  writeToStdio(1, `out ${i} ${filler}\n`);
  if (i % 100 === 0) writeToStdio(2, `err ${i}\n`);
};
let i = 0;
while (i < count / 2 && !refused()) writeLine(i++);
const wasRefused = refused();
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
while (i < count) writeLine(i++);
// Tells the test whether the pipe ever refused a write (then the stream held a queue).
writeToStdio(2, `queued ${wasRefused}\n`);
// Whatever went through process.stdout's queue is flushed before the exit.
process.stdout.write("", () => process.exit(0));
