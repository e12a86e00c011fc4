// Builds the VS Code extension (adapters/vscode): typechecks it (the extension, and the chat
// webview against the DOM), then bundles with esbuild into adapters/vscode/out/: the extension
// and its end-to-end test suite (CommonJS for Node, `vscode` external) and the chat webview's
// script out/webview/chat.js (one browser script with markdown-it and highlight.js inside).
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
  const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
  for (const project of [
    path.join(extension, "tsconfig.json"),
    path.join(extension, "src", "webview", "tsconfig.json"),
  ]) {
    execFileSync(process.execPath, [tsc, "-p", project], { stdio: "inherit" });
  }
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
const shipped = [];
shipped.push(
  await esbuild.build({
    ...common,
    metafile: true,
    entryPoints: [path.join(extension, "src", "extension.ts")],
    outfile: path.join(out, "extension.js"),
  }),
);
await esbuild.build({
  ...common,
  entryPoints: [path.join(extension, "src", "test", "index.ts")],
  outfile: path.join(out, "test", "index.js"),
});
shipped.push(
  await esbuild.build({
    metafile: true,
    entryPoints: [path.join(extension, "src", "webview", "main.ts")],
    outfile: path.join(out, "webview", "chat.js"),
    bundle: true,
    platform: "browser",
    format: "iife",
    // The webview runs in the editor's own Chromium (VS Code 1.90+: Chromium 122+).
    target: "chrome114",
    minify: true,
    sourcemap: "linked",
    legalComments: "none",
    logLevel: "warning",
  }),
);
fs.writeFileSync(path.join(out, "THIRD-PARTY-NOTICES.txt"), thirdPartyNotices(shipped.map((r) => r.metafile)));
console.log(`built ${path.relative(root, out)}/extension.js, out/webview/chat.js and out/test/index.js`);

/**
 * The licences of the npm packages bundled into what the VSIX ships (extension.js and the
 * webview's chat.js), read from the packages themselves: one section per package.
 */
function thirdPartyNotices(metafiles) {
  const packages = new Map();
  for (const metafile of metafiles) {
    for (const input of Object.keys(metafile.inputs)) {
      const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (match) packages.set(match[1], path.join(root, input.slice(0, input.indexOf(match[0]) + match[0].length)));
    }
  }
  const sections = [...packages.keys()].sort().map((name) => {
    const dir = packages.get(name);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
    const licenceFile = fs.readdirSync(dir).find((f) => /^(licen[cs]e|copying)/i.test(f));
    const repository = typeof pkg.repository === "string" ? pkg.repository : (pkg.repository?.url ?? "");
    // Some packages ship no licence file: their declared licence and where its text is.
    const text = licenceFile
      ? fs.readFileSync(path.join(dir, licenceFile), "utf8").trim()
      : `Licensed under ${pkg.license}; the package ships no licence file (${repository}).`;
    return `${name} ${pkg.version} (${pkg.license})\n\n${text}\n`;
  });
  return `Dline for VS Code bundles these packages.\n\n${sections.join("\n" + "-".repeat(72) + "\n\n")}`;
}
