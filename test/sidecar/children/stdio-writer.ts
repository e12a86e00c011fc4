// Writes numbered lines to stdout and stderr with writeToStdio; "nonblocking" first turns
// stdout's pipe non-blocking, as some parents hand it over, so that a full pipe answers EAGAIN.
import { writeToStdio } from "../../../core/src/logging/stdio.js";

const [mode, countText] = process.argv.slice(2);
if (mode === "nonblocking") (process.stdout as unknown as { _handle: { setBlocking(on: boolean): number } })._handle.setBlocking(false);
const count = Number(countText);
const filler = "x".repeat(100);
for (let i = 0; i < count; i++) {
  writeToStdio(1, `out ${i} ${filler}\n`);
  if (i % 100 === 0) writeToStdio(2, `err ${i}\n`);
}
// Tells the test whether the pipe ever refused a write (then the stream holds a queue).
writeToStdio(2, `queued ${process.stdout.writableLength > 0 || process.stdout.writableNeedDrain}\n`);
// Whatever went through process.stdout's queue is flushed before the exit.
process.stdout.write("", () => process.exit(0));
