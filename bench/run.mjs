// Runs every bench/*.bench.ts (or the ones named on the command line): each is bundled with
// esbuild and run in its own node process, which prints its figures and ratios. Benchmarks
// measure their baseline in the same run; nothing here asserts a time.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import * as osModule from "node:os";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const benchDir = path.join(root, "bench");
const outDir = path.join(root, ".bench");
const wanted = process.argv.slice(2);
const files = fs
  .readdirSync(benchDir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
if (!fs.existsSync(path.join(root, "dist", "dline-core"))) {
  console.error('bench: dist/dline-core is missing; run "npm run build" first.');
  process.exit(1);
}
fs.mkdirSync(outDir, { recursive: true });
const resultsFile = path.join(outDir, "results.jsonl");
fs.rmSync(resultsFile, { force: true });
let failed = 0;
for (const file of files) {
  const outfile = path.join(outDir, file.replace(/\.ts$/, ".mjs"));
  await esbuild.build({
    entryPoints: [path.join(benchDir, file)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  console.log(`\n=== ${file} ===`);
  const result = spawnSync(process.execPath, ["--expose-gc", outfile], {
    stdio: "inherit",
    cwd: root,
    env: { ...process.env, DLINE_BENCH_RESULTS: resultsFile, DLINE_BENCH_NAME: file.replace(/\.bench\.ts$/, "") },
  });
  if (result.status !== 0) failed++;
}
writeReport();
process.exit(failed ? 1 : 0);

/** bench/report.md and bench/report.json: every figure of this run with its baseline, ratio and goal. */
function writeReport() {
  const measuredAt = new Date().toISOString();
  const fresh = fs.existsSync(resultsFile)
    ? fs
        .readFileSync(resultsFile, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => ({ ...JSON.parse(l), measuredAt }))
    : [];
  // A run of some benchmarks (`npm run bench -- import`) replaces their rows and keeps the others'.
  const ran = new Set(files.map((f) => f.replace(/\.bench\.ts$/, "")));
  const reportJson = path.join(benchDir, "report.json");
  const kept =
    wanted.length > 0 && fs.existsSync(reportJson)
      ? (JSON.parse(fs.readFileSync(reportJson, "utf8")).results ?? []).filter((r) => !ran.has(r.bench))
      : [];
  const rows = [...kept, ...fresh].sort((a, b) => a.bench.localeCompare(b.bench));
  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: await_os().cpus().length,
    benches: files,
  };
  fs.writeFileSync(path.join(benchDir, "report.json"), JSON.stringify({ ...meta, results: rows }, null, 2) + "\n");
  const lines = [
    "# Benchmark report",
    "",
    `Written ${meta.date} on ${meta.cpus} cores, Node ${meta.node}. Each baseline is measured in the same run as its figure; "measured" says when.`,
    "",
    "| benchmark | figure | result | baseline | ratio | goal | measured |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.bench} | ${r.name} | ${r.value} | ${r.baseline} | ${r.ratio} | ${r.goal} | ${(r.measuredAt ?? "").slice(0, 16)} |`,
    ),
    "",
  ];
  fs.writeFileSync(path.join(benchDir, "report.md"), lines.join("\n"));
  console.log(`\nreport: bench/report.md (${rows.length} figures)`);
}

function await_os() {
  return osModule;
}
