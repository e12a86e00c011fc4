// Retakes the VS Code extension's Marketplace screenshots (adapters/vscode/media/screenshots/)
// from the released VSIX in code-server + headless Chromium (test/release/marketplace-screenshots.ts).
//   npm run release && node scripts/vscode-screenshots.mjs [vsix]
// Needs the VS Code test harness (scripts/setup-vscode-test.sh).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outfile = path.join(root, "dist", "build", `marketplace-screenshots-${process.pid}.mjs`);
await esbuild.build({
  entryPoints: [path.join(root, "test", "release", "marketplace-screenshots.ts")],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  logLevel: "warning",
});
const result = spawnSync(process.execPath, [outfile, ...process.argv.slice(2)], { stdio: "inherit", cwd: root });
fs.rmSync(outfile, { force: true });
process.exit(result.status ?? 1);
