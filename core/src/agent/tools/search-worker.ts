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
  maxFileBytes: number;
  maxLineChars: number;
  /** Characters of a matching line shown in a result. */
  shownLineChars: number;
}

export interface SearchOutcome {
  results: string[];
  /** Why the search stopped before the end: the time budget ran out (partial results). */
  stoppedAt?: { reason: "time"; file: string | undefined };
  longLinesSkipped: number;
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
  const { job, current: currentBuffer } = threads.workerData as { job: SearchJob; current: SharedArrayBuffer };
  const current = new Int32Array(currentBuffer);
  const regex = new RegExp(job.source, job.flags);
  let found = 0;
  let longLines = 0;
  for (let index = 0; index < job.files.length && found < job.maxResults; index++) {
    Atomics.store(current, 0, index);
    const file = job.files[index]!;
    let text: string;
    let fd: number | undefined;
    try {
      // Non-blocking: a FIFO put in place of a listed file must not block the open.
      fd = fs.openSync(path.join(job.root, file), fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      const stat = fs.fstatSync(fd);
      if (!stat.isFile() || stat.size > job.maxFileBytes) continue;
      const bytes = fs.readFileSync(fd);
      if (bytes.subarray(0, 8000).includes(0)) continue;
      text = bytes.toString("utf8");
    } catch {
      continue;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
    const matches: string[] = [];
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length && found < job.maxResults; i++) {
      const line = lines[i]!;
      if (line.length > job.maxLineChars) {
        longLines++;
        continue;
      }
      if (regex.test(line)) {
        found++;
        matches.push(
          `${file}:${i + 1}: ${line.length > job.shownLineChars ? `${line.slice(0, job.shownLineChars)}…` : line}`,
        );
      }
    }
    if (matches.length) parentPort!.postMessage({ kind: "matches", matches });
  }
  parentPort!.postMessage({ kind: "done", longLines });
}

/** Runs `job` in a worker; resolves with what was found when it ends, the budget runs out or `signal` aborts (then it rejects). */
export function searchInWorker(job: SearchJob, budgetMs: number, signal: AbortSignal): Promise<SearchOutcome> {
  signal.throwIfAborted();
  const current = new SharedArrayBuffer(4);
  const worker = new Worker(`(${searchWorkerProgram.toString()})()`, { eval: true, workerData: { job, current } });
  const results: string[] = [];
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
      finish({ results, stoppedAt: { reason: "time", file: job.files[index] }, longLinesSkipped: 0 });
    }, budgetMs);
    signal.addEventListener("abort", onAbort, { once: true });
    worker.on("message", (message: { kind: "matches"; matches: string[] } | { kind: "done"; longLines: number }) => {
      if (message.kind === "matches") results.push(...message.matches);
      else finish({ results, longLinesSkipped: message.longLines });
    });
    worker.on("error", (err) => finish(undefined, err));
    worker.on("exit", () => finish(undefined, new Error("The search worker stopped unexpectedly.")));
  });
}
