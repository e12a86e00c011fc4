// Runs every bench/*.bench.ts (or the ones named on the command line): each is bundled with
// esbuild and run in its own node process, which prints its figures and ratios. Benchmarks
// measure their baseline in the same run; nothing here asserts a time.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

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
  const result = spawnSync(process.execPath, ["--expose-gc", outfile], { stdio: "inherit", cwd: root });
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
