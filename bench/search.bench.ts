// search_files over a real source tree (copies of installed packages' sources, about 3,000
// files, outside any git repository): the tool as it runs (listing with .gitignore rules,
// then the regular expression in a worker thread with its time budget) against the same
// search done on the main thread (read each file, test each line), the baseline the worker
// adds its start and message passing to. Both find the same lines.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readFileTool, searchFilesTool } from "../core/src/agent/tools/file-tools.js";
import { listWorkspaceFiles } from "../core/src/agent/tools/file-listing.js";
import { IgnoreMatcher } from "../core/src/agent/tools/ignore-matcher.js";
import { noToolGuard } from "../core/src/agent/tools/tool-guard.js";
import { median, fmtMs, report, ratio } from "./helpers.js";

const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-bench-search-"));
const tree = path.join(base, "tree");
for (const pkg of [
  "@bufbuild/protobuf",
  "@connectrpc/connect",
  "@modelcontextprotocol/sdk",
  "better-sqlite3",
  "vitest",
  "esbuild",
  "ajv",
  "zod",
]) {
  const from = path.join(process.cwd(), "node_modules", pkg);
  if (fs.existsSync(from))
    fs.cpSync(from, path.join(tree, pkg), {
      recursive: true,
      dereference: false,
      filter: (src) => !src.endsWith(".node"),
    });
}
fs.writeFileSync(path.join(tree, ".gitignore"), "*.map\n");

const ctx = {
  workspaceRoot: tree,
  signal: new AbortController().signal,
  agentIgnore: new IgnoreMatcher(),
  guard: noToolGuard,
  recordEditedPath: () => {},
};

/** The search as the main thread would do it: the same listing, each file read and each line tested. */
async function mainThreadSearch(source: string): Promise<number> {
  const regex = new RegExp(source, "u");
  const { files } = await listWorkspaceFiles(tree, ".", 20_000);
  let found = 0;
  for (const file of files) {
    const st = await fs.promises.stat(path.join(tree, file)).catch(() => undefined);
    if (!st?.isFile() || st.size > 1024 * 1024) continue;
    const bytes = await fs.promises.readFile(path.join(tree, file));
    if (bytes.subarray(0, 8000).includes(0)) continue;
    for (const line of bytes.toString("utf8").split(/\r?\n/)) {
      if (line.length <= 8192 && regex.test(line) && ++found >= 300) return found;
    }
  }
  return found;
}

const listed = (await listWorkspaceFiles(tree, ".", 100_000)).files.length;
for (const [label, source] of [
  ["a rare word", "DeprecationWarning"],
  ["a common pattern, 300 results", "function\\s+\\w+\\("],
] as const) {
  const tool: number[] = [];
  const inline: number[] = [];
  let toolFound = "";
  let inlineFound = 0;
  for (let i = 0; i < 7; i++) {
    let t = performance.now();
    const result = await searchFilesTool.execute({ path: ".", regex: source }, ctx);
    tool.push(performance.now() - t);
    toolFound = result.content.split("\n", 1)[0] ?? "";
    t = performance.now();
    inlineFound = await mainThreadSearch(source);
    inline.push(performance.now() - t);
  }
  const a = median(tool.slice(2));
  const b = median(inline.slice(2));
  report(
    `search_files, ${label} (${listed} files): ${toolFound} / ${inlineFound} on the main thread`,
    fmtMs(a),
    fmtMs(b),
    ratio(a, b),
    "figure (baseline: main-thread search)",
  );
}

// A big log (1,000,000 lines, about 44 MB): search_files and a read_file window at its end read
// it in chunks; the baseline reads it whole and splits it (what both did, up to their old
// size limits of 1 and 2 MiB). maxRSS growth is the process's peak above what it had before.
const logDir = path.join(base, "log");
fs.mkdirSync(logDir);
const logLines = 1_000_000;
{
  const fd = fs.openSync(path.join(logDir, "app.log"), "w");
  for (let from = 0; from < logLines; from += 100_000) {
    const part = Array.from({ length: 100_000 }, (_, i) => `2026-12-03T06:00:00Z INFO request ${from + i + 1} ok`);
    fs.writeSync(fd, `${part.join("\n")}\n`);
  }
  fs.closeSync(fd);
}
const logCtx = { ...ctx, workspaceRoot: logDir };
const logSize = fs.statSync(path.join(logDir, "app.log")).size;
const peakMb = () => process.resourceUsage().maxRSS / 1024;
const cases = [
  [
    `search_files, a rare word in a ${Math.round(logSize / 1e6)} MB log`,
    async () =>
      (await searchFilesTool.execute({ path: ".", regex: "request 999999 " }, logCtx)).content.split("\n", 1)[0]!,
    async () => {
      const text = (await fs.promises.readFile(path.join(logDir, "app.log"))).toString("utf8");
      return `${text.split(/\r?\n/).filter((line) => /request 999999 /u.test(line)).length} on the main thread`;
    },
  ],
  [
    `read_file, its last 10 lines`,
    async () =>
      /\[(Showing lines \d+-\d+ of \d+)/.exec(
        (await readFileTool.execute({ path: "app.log", start_line: logLines - 9, end_line: logLines }, logCtx)).content,
      )?.[1] ?? "no window",
    async () => {
      const text = (await fs.promises.readFile(path.join(logDir, "app.log"))).toString("utf8");
      return `${text.split("\n").slice(logLines - 10, logLines).length} lines read whole`;
    },
  ],
] as const;
// Every tool run first, then every baseline: a peak is seen only by what raises it first.
const measured = [];
for (const [label, run, baseline] of cases) {
  const times: number[] = [];
  const peak = peakMb();
  let said = "";
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    said = await run();
    times.push(performance.now() - t);
  }
  measured.push({ label, baseline, said, time: median(times), grew: peakMb() - peak });
}
for (const { label, baseline, said, time, grew } of measured) {
  const baseTimes: number[] = [];
  const peak = peakMb();
  let baseSaid = "";
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    baseSaid = await baseline();
    baseTimes.push(performance.now() - t);
  }
  const baseGrew = peakMb() - peak;
  report(
    `${label}: ${said} / ${baseSaid}; peak RSS +${grew.toFixed(0)} MB / +${baseGrew.toFixed(0)} MB`,
    fmtMs(time),
    fmtMs(median(baseTimes)),
    ratio(time, median(baseTimes)),
    "figure (baseline: the file read whole)",
  );
}
fs.rmSync(base, { recursive: true, force: true });
