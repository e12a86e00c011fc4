/**
 * search_files runs the model's regular expression in a worker thread with a time budget: a
 * regex with catastrophic backtracking (`^(a+)+$`, `.*x.*y` on a minified line) would
 * otherwise hold the sidecar's only thread, and every editor with it, for as long as it likes.
 * The worker reports matches file by file; when the budget runs out (or the call is
 * cancelled) it is terminated, which V8 does even in the middle of a regex, and the matches
 * found so far come back with a note. Lines longer than `maxLineChars` (minified or generated
 * code) are not searched; the result says how many were skipped.
 */
import { Worker } from "node:worker_threads";

export interface SearchJob {
  /** Real path of the workspace root; `files` are relative to it (forward slashes). */
  root: string;
  files: string[];
  source: string;
  flags: string;
  maxResults: number;
  /** Files up to this size are read whole; larger ones are read in chunks, line by line. */
  maxWholeFileBytes: number;
  /** Files larger than this are not searched (named in the outcome). */
  maxFileBytes: number;
  maxLineChars: number;
  /** Characters of a matching line shown in a result. */
  shownLineChars: number;
  /** Bytes read at a time from a big file (tests use small ones). */
  chunkBytes?: number;
}

/** Files not searched, by reason (relative paths). */
export interface SkippedFiles {
  binary: string[];
  tooLarge: string[];
  /** Pipes, sockets, devices. */
  special: string[];
  unreadable: string[];
}

export interface SearchOutcome {
  results: string[];
  /** Why the search stopped before the end: the time budget ran out (partial results). */
  stoppedAt?: { reason: "time"; file: string | undefined };
  longLinesSkipped: number;
  skipped: SkippedFiles;
}

/** What the worker posts after a file it has something to say about. */
interface FileReport {
  kind: "file";
  matches: string[];
  longLines: number;
  skipped?: keyof SkippedFiles;
  file: string;
}

/**
 * The worker's program. It is passed to the worker as source text (no file to ship inside the
 * single executable), so it uses nothing but globals and Node built-ins.
 */
function searchWorkerProgram(): void {
  const threads = process.getBuiltinModule("node:worker_threads");
  const parentPort = threads.parentPort;
  const fs = process.getBuiltinModule("node:fs");
  const path = process.getBuiltinModule("node:path");
  const { StringDecoder } = process.getBuiltinModule("node:string_decoder");
  const { job, current: currentBuffer } = threads.workerData as { job: SearchJob; current: SharedArrayBuffer };
  const current = new Int32Array(currentBuffer);
  const regex = new RegExp(job.source, job.flags);
  const chunk = Buffer.allocUnsafe(job.chunkBytes ?? 1024 * 1024);
  let found = 0;

  for (let index = 0; index < job.files.length && found < job.maxResults; index++) {
    Atomics.store(current, 0, index);
    const file = job.files[index]!;
    const matches: string[] = [];
    let longLines = 0;
    let lineNumber = 0;
    /** Searches one line (without its line break); false once the results are full. */
    const searchLine = (line: string): boolean => {
      lineNumber++;
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line.length > job.maxLineChars) {
        longLines++;
        return true;
      }
      if (regex.test(line)) {
        found++;
        // The file's name as listed-name.ts shows it (this code runs in the worker, as text).
        matches.push(
          `${/[\u0000-\u001f\u007f]/.test(file) ? JSON.stringify(file) : file}:${lineNumber}: ${line.length > job.shownLineChars ? `${line.slice(0, job.shownLineChars)}…` : line}`,
        );
      }
      return found < job.maxResults;
    };
    const report = (skipped?: keyof SkippedFiles) => {
      if (matches.length || longLines || skipped)
        parentPort!.postMessage({ kind: "file", matches, longLines, skipped, file } satisfies FileReport);
    };
    let fd: number | undefined;
    try {
      // Non-blocking: a FIFO put in place of a listed file must not block the open.
      fd = fs.openSync(path.join(job.root, file), fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      const stat = fs.fstatSync(fd);
      // A link to a folder is listed as a file; the folder's own files are listed where it is.
      if (stat.isDirectory()) continue;
      if (!stat.isFile()) {
        report("special");
        continue;
      }
      if (stat.size > job.maxFileBytes) {
        report("tooLarge");
        continue;
      }
      if (stat.size <= job.maxWholeFileBytes) {
        const bytes = fs.readFileSync(fd);
        if (bytes.subarray(0, 8000).includes(0)) {
          report("binary");
          continue;
        }
        const lines = bytes.toString("utf8").split("\n");
        // A final line break ends the last line; it does not start another.
        if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
        for (const line of lines) if (!searchLine(line)) break;
      } else {
        // Read in chunks: only the current chunk and the line it cuts are held. A line that
        // grows past the longest searched is dropped as it is read, counted once it ends.
        const decoder = new StringDecoder("utf8");
        let carry = "";
        let carryTooLong = false;
        let position = 0;
        let binary = false;
        let more = true;
        while (more) {
          const bytesRead = fs.readSync(fd, chunk, 0, chunk.length, position);
          if (position === 0 && chunk.subarray(0, Math.min(bytesRead, 8000)).includes(0)) {
            binary = true;
            break;
          }
          position += bytesRead;
          const text = bytesRead === 0 ? decoder.end() : decoder.write(chunk.subarray(0, bytesRead));
          let offset = 0;
          for (;;) {
            const newline = text.indexOf("\n", offset);
            if (newline < 0) break;
            if (carryTooLong) {
              carryTooLong = false;
              carry = "";
              lineNumber++;
              longLines++;
            } else {
              const line = carry + text.slice(offset, newline);
              carry = "";
              if (!searchLine(line)) {
                more = false;
                break;
              }
            }
            offset = newline + 1;
          }
          if (!more) break;
          if (!carryTooLong) {
            carry += text.slice(offset);
            // 2 characters of slack: a trailing \r is not part of the line.
            if (carry.length > job.maxLineChars + 2) {
              carryTooLong = true;
              carry = "";
            }
          }
          if (bytesRead === 0) {
            more = false;
            if (carryTooLong) {
              lineNumber++;
              longLines++;
            } else if (carry !== "") searchLine(carry);
          }
        }
        if (binary) {
          report("binary");
          continue;
        }
      }
    } catch {
      report("unreadable");
      continue;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
    report();
  }
  parentPort!.postMessage({ kind: "done" });
}

/** Runs `job` in a worker; resolves with what was found when it ends, the budget runs out or `signal` aborts (then it rejects). */
export function searchInWorker(job: SearchJob, budgetMs: number, signal: AbortSignal): Promise<SearchOutcome> {
  signal.throwIfAborted();
  const current = new SharedArrayBuffer(4);
  const worker = new Worker(`(${searchWorkerProgram.toString()})()`, { eval: true, workerData: { job, current } });
  const results: string[] = [];
  let longLinesSkipped = 0;
  const skipped: SkippedFiles = { binary: [], tooLarge: [], special: [], unreadable: [] };
  return new Promise<SearchOutcome>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: SearchOutcome | undefined, error?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      void worker.terminate();
      if (outcome) resolve(outcome);
      else reject(error);
    };
    const onAbort = () => finish(undefined, signal.reason);
    const timer = setTimeout(() => {
      const index = Atomics.load(new Int32Array(current), 0);
      finish({ results, stoppedAt: { reason: "time", file: job.files[index] }, longLinesSkipped, skipped });
    }, budgetMs);
    signal.addEventListener("abort", onAbort, { once: true });
    worker.on("message", (message: FileReport | { kind: "done" }) => {
      if (message.kind === "file") {
        results.push(...message.matches);
        longLinesSkipped += message.longLines;
        if (message.skipped) skipped[message.skipped].push(message.file);
      } else finish({ results, longLinesSkipped, skipped });
    });
    worker.on("error", (err) => finish(undefined, err));
    worker.on("exit", () => finish(undefined, new Error("The search worker stopped unexpectedly.")));
  });
}
