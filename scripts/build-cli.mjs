// Builds dist/dline: the CLI bundled into one executable ESM script for the local node.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { cliBundleOptions } from "./lib/cli-bundle.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
const outfile = path.join(root, "dist", "dline");
const staging = `${outfile}.${process.pid}.tmp`;
await esbuild.build({ ...cliBundleOptions(root), outfile: staging });
fs.chmodSync(staging, 0o755);
fs.renameSync(staging, outfile);
console.log(`built ${path.relative(root, outfile)} ${version}`);
