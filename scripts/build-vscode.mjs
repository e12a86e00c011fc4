// Builds the VS Code extension (adapters/vscode): typechecks it, then bundles the extension and
// its end-to-end test suite with esbuild into adapters/vscode/out/ (CommonJS, `vscode` external).
// `--no-typecheck` skips the typecheck (the e2e harness rebuilds the bundle quickly with it).
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const extension = path.join(root, "adapters", "vscode");
const out = path.join(extension, "out");

if (!process.argv.includes("--no-typecheck")) {
  execFileSync(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", path.join(extension, "tsconfig.json")], {
    stdio: "inherit",
  });
}

fs.mkdirSync(out, { recursive: true });
const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
  sourcemap: "linked",
  logLevel: "warning",
};
await esbuild.build({ ...common, entryPoints: [path.join(extension, "src", "extension.ts")], outfile: path.join(out, "extension.js") });
await esbuild.build({ ...common, entryPoints: [path.join(extension, "src", "test", "index.ts")], outfile: path.join(out, "test", "index.js") });
console.log(`built ${path.relative(root, out)}/extension.js and out/test/index.js`);
