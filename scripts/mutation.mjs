#!/usr/bin/env node
// npm run test:mutation [-- NAME...]: Stryker on each module that guards user data (all, or the
// named ones of test/mutation/modules.mjs), one module at a time with only its tests, then a
// table of the scores and the mutants no test detected. Exits 1 when a module is below the
// threshold or a run fails. DLINE_MUTATION_CONCURRENCY sets Stryker's workers (default 2);
// --report prints the table from the last runs' reports without running Stryker. A run retests
// only the mutants whose code or covering test files changed since the module's last run
// (Stryker's incremental mode); --force retests them all.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { breakThreshold, mutationModules } from "../test/mutation/modules.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const reportOnly = process.argv.includes("--report");
const force = process.argv.includes("--force");
const names = process.argv.slice(2).filter((a) => a !== "--report" && a !== "--force");
const unknown = names.filter((n) => !mutationModules.some((m) => m.name === n));
if (unknown.length > 0) {
  console.error(`unknown module ${unknown.join(", ")}; known: ${mutationModules.map((m) => m.name).join(", ")}`);
  process.exit(2);
}
const selected = names.length > 0 ? mutationModules.filter((m) => names.includes(m.name)) : mutationModules;

const DETECTED = new Set(["Killed", "Timeout"]);
const UNDETECTED = new Set(["Survived", "NoCoverage"]);

const results = [];
for (const module of selected) {
  const report = path.join(root, "test-output", "mutation", `${module.name}.json`);
  if (!reportOnly) {
    fs.rmSync(report, { force: true });
    console.log(`\n== ${module.name}: ${module.mutate.join(", ")}`);
    const run = spawnSync(
      path.join(root, "node_modules", ".bin", "stryker"),
      ["run", "test/mutation/stryker.config.mjs", ...(force ? ["--force"] : [])],
      {
        cwd: root,
        stdio: "inherit",
        env: { ...process.env, DLINE_MUTATION_MODULE: module.name },
      },
    );
    if (!fs.existsSync(report)) {
      results.push({ module, error: `stryker exited ${run.status ?? run.signal} without a report` });
      continue;
    }
  } else if (!fs.existsSync(report)) {
    results.push({ module, error: "no report yet" });
    continue;
  }
  // One score per file: the threshold holds for each module file, not only for their sum.
  for (const [file, f] of Object.entries(JSON.parse(fs.readFileSync(report, "utf8")).files)) {
    const detected = f.mutants.filter((m) => DETECTED.has(m.status)).length;
    const undetected = f.mutants.filter((m) => UNDETECTED.has(m.status));
    results.push({
      module,
      file: path.relative(root, path.resolve(root, file)),
      detected,
      valid: detected + undetected.length,
      undetected,
    });
  }
}

const percent = (r) => (100 * r.detected) / r.valid;
console.log("\n| module | mutants detected / valid |\n|---|---|");
for (const r of results) {
  console.log(
    `| ${r.file ?? r.module.mutate.join(", ")} | ${r.error ?? `${r.detected}/${r.valid} (${percent(r).toFixed(1)}%)`} |`,
  );
}
for (const r of results.filter((r) => !r.error && r.undetected.length > 0)) {
  console.log(`\nundetected in ${r.file}:`);
  for (const m of r.undetected.sort((a, b) => a.location.start.line - b.location.start.line)) {
    const replacement = m.replacement.split("\n")[0].slice(0, 100);
    console.log(`  ${m.location.start.line}:${m.location.start.column} ${m.status} ${m.mutatorName}: ${replacement}`);
  }
}
const failed = results.filter((r) => r.error || percent(r) < breakThreshold);
if (failed.length > 0) {
  console.error(
    `\nbelow ${breakThreshold}% detected or failed: ${failed.map((r) => r.file ?? r.module.name).join(", ")}`,
  );
  process.exit(1);
}
