/**
 * A big file's window is read in chunks (readWindowStreamed); it must show exactly what the
 * whole-text reader (readWindow) shows of the same file, wherever the chunk boundaries fall:
 * inside a line, a multi-byte character, a line cut at the budget, or at the final newline.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, expect, it } from "vitest";
import { readWindow, readWindowStreamed } from "../../core/src/agent/tools/read-window.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-read-window-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The text before the note, and the note's line numbers. */
function parts(result: string): { text: string; lines: string | undefined } {
  const at = result.lastIndexOf("\n\n[Showing lines ");
  if (at < 0) return { text: result, lines: undefined };
  return { text: result.slice(0, at), lines: /Showing lines (\d+-\d+)/.exec(result.slice(at))![1] };
}

async function either(read: () => string | Promise<string>): Promise<string> {
  try {
    return await read();
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}

it("shows the same lines as a whole read, and the same errors, whatever the chunk size", async () => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const file = path.join(dir, "f.txt");
  let cuts = 0;
  for (let round = 0; round < 300; round++) {
    const count = 1 + Math.floor(random() * 25);
    const lines = Array.from(
      { length: count },
      () =>
        "é€".repeat(Math.floor(random() * 3)) +
        "x".repeat(random() < 0.1 ? Math.floor(random() * 3000) : Math.floor(random() * 40)) +
        (random() < 0.1 ? "\r" : ""),
    );
    const content = lines.join("\n") + (random() < 0.5 ? "\n" : "");
    fs.writeFileSync(file, content);
    const startLine = random() < 0.4 ? undefined : 1 + Math.floor(random() * (count + 2));
    const endLine = random() < 0.5 ? undefined : (startLine ?? 1) + Math.floor(random() * 10);
    const options = { startLine, endLine, maxChars: 1400, path: "f.txt" };
    const whole = await either(() => readWindow(content, options));
    const handle = await fs.promises.open(file);
    const size = (await handle.stat()).size;
    const streamed = await either(() =>
      readWindowStreamed(handle, size, { ...options, chunkBytes: 1 + Math.floor(random() * 60) }),
    ).finally(() => handle.close());
    const context = JSON.stringify({ content: content.slice(0, 200), options, whole, streamed });
    if (whole.startsWith("error:")) {
      expect(streamed, context).toBe(whole);
      continue;
    }
    const a = parts(whole);
    const b = parts(streamed);
    // A file shown whole comes back as it is, final newline included.
    expect(b.text, context).toBe(a.lines ? a.text : a.text.replace(/\n$/, ""));
    if (a.lines) expect(b.lines, context).toBe(a.lines);
    if (streamed.includes("only its first")) cuts++;
  }
  expect(cuts).toBeGreaterThan(5);
});

it("reads no further than the window when the rest of the file is too big to count", async () => {
  const file = path.join(dir, "big.txt");
  fs.writeFileSync(file, "line\n".repeat(200_000));
  const handle = await fs.promises.open(file);
  let furthest = 0;
  const tracked = {
    read: async (buffer: Buffer, offset: number, length: number, position: number) => {
      const read = await handle.read(buffer, offset, length, position);
      furthest = Math.max(furthest, position + read.bytesRead);
      return read;
    },
  };
  const result = await readWindowStreamed(tracked, 1_000_000, {
    startLine: 10,
    endLine: 12,
    path: "big.txt",
    countLimit: 100_000,
    chunkBytes: 1024,
  }).finally(() => handle.close());
  expect(result).toBe(
    "line\nline\nline\n\n[Showing lines 10-12 of big.txt (1000000 bytes; its lines past line 12 were not counted). To read more, call read_file with start_line 13.]",
  );
  expect(furthest).toBe(1024);
});
