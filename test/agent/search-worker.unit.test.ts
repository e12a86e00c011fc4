/**
 * search_files reads a big file in chunks; it must find the same lines, at the same numbers,
 * and skip the same long lines as a whole read, wherever the chunk boundaries fall (inside a
 * line, a multi-byte character, a CRLF, a long line); a file past the hard limit is named.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, expect, it } from "vitest";
import { searchInWorker, type SearchJob } from "../../core/src/agent/tools/search-worker.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "dline-search-worker-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

it("finds the same matches and long lines reading in chunks as reading whole", async () => {
  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const files: string[] = [];
  for (let i = 0; i < 40; i++) {
    const lines = Array.from({ length: 1 + Math.floor(random() * 30) }, () => {
      const long = random() < 0.1;
      return (
        "é€".repeat(Math.floor(random() * 3)) +
        "x".repeat(long ? 60 + Math.floor(random() * 100) : Math.floor(random() * 20)) +
        (random() < 0.4 ? "hit" : "") +
        (random() < 0.2 ? "\r" : "")
      );
    });
    const name = `f${i}.txt`;
    fs.writeFileSync(path.join(root, name), lines.join("\n") + (random() < 0.5 ? "\n" : ""));
    files.push(name);
  }
  // Past the hard limit: named, not searched.
  fs.writeFileSync(path.join(root, "too-big.txt"), "hit\n".repeat(40_000));
  files.push("too-big.txt");
  const job = (whole: boolean, chunkBytes: number): SearchJob => ({
    root,
    files,
    source: "hit|^$|é$",
    flags: "u",
    maxResults: 10_000,
    maxWholeFileBytes: whole ? 1024 * 1024 : 0,
    maxFileBytes: 100_000,
    maxLineChars: 64,
    shownLineChars: 300,
    chunkBytes,
  });
  const signal = new AbortController().signal;
  const whole = await searchInWorker(job(true, 1), 10_000, signal);
  expect(whole.results.length).toBeGreaterThan(100);
  expect(whole.longLinesSkipped).toBeGreaterThan(5);
  expect(whole.skipped).toEqual({ binary: [], tooLarge: ["too-big.txt"], special: [], unreadable: [] });
  for (const chunkBytes of [1, 2, 3, 5, 7, 16, 61, 4096]) {
    const streamed = await searchInWorker(job(false, chunkBytes), 10_000, signal);
    expect({ chunkBytes, ...streamed }).toEqual({ chunkBytes, ...whole });
  }
});
