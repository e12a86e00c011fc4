// Builds dist/dline-core: an esbuild bundle of core/src/main.ts injected into a stripped copy of
// the local `node` as a single executable application, with better-sqlite3's addon as an asset.
// See ../shared/TOOLCHAIN.md ("The sidecar binary") for why each step is the way it is.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
// A folder per build process, so that two builds at once (parallel test runs) do not collide.
const work = path.join(dist, "build", String(process.pid));
const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
const require = (await import("node:module")).createRequire(import.meta.url);
const addon = path.join(path.dirname(require.resolve("better-sqlite3/package.json", { paths: [path.join(root, "core")] })), "build", "Release", "better_sqlite3.node");
const addonHash = createHash("sha256").update(fs.readFileSync(addon)).digest("hex").slice(0, 24);

/**
 * connect-node imports node:http2 and node:https at the top of modules the sidecar's server
 * path loads, though the server only touches them on HTTP/2 or TLS (which it never serves).
 * Compiling those built-ins costs ~15 ms of every start, so inside connect-node they are
 * replaced with objects that load the real module on first use.
 */
function lazyBuiltinsPlugin() {
  const lazy = {
    "node:http2": ["constants", "connect"],
    "node:https": ["request", "Agent", "globalAgent"],
  };
  return {
    name: "lazy-builtins",
    setup(build) {
      build.onResolve({ filter: /^node:(http2|https)$/ }, (args) =>
        args.importer.includes(`${path.sep}@connectrpc${path.sep}connect-node${path.sep}`)
          ? { path: args.path, namespace: "lazy-builtin" }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (args) => ({
        loader: "js",
        contents:
          `let m; const load = () => (m ??= require(${JSON.stringify(args.path)}));\n` +
          `module.exports = {${lazy[args.path].map((k) => `get ${k}() { return load().${k}; }`).join(", ")}};\n`,
      }));
    },
  };
}

fs.mkdirSync(work, { recursive: true });
const bundle = path.join(work, "dline-core.cjs");
await esbuild.build({
  entryPoints: [path.join(root, "core/src/main.ts")],
  outfile: bundle,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  keepNames: true,
  legalComments: "none",
  define: {
    DLINE_VERSION: JSON.stringify(version),
    DLINE_SQLITE_ADDON_HASH: JSON.stringify(addonHash),
  },
  // debug's optional colour support is not needed and would be an unresolvable require in a SEA.
  alias: { "supports-color": path.join(root, "scripts/stubs/supports-color.cjs") },
  plugins: [lazyBuiltinsPlugin()],
  logLevel: "warning",
});

const seaConfig = path.join(work, "sea-config.json");
const blob = path.join(work, "sea-prep.blob");
fs.writeFileSync(
  seaConfig,
  JSON.stringify({
    main: bundle,
    output: blob,
    disableExperimentalSEAWarning: true,
    useCodeCache: false,
    assets: { "better_sqlite3.node": addon },
  }),
);
execFileSync(process.execPath, ["--experimental-sea-config", seaConfig], { stdio: ["ignore", "ignore", "inherit"] });

const target = path.join(dist, "dline-core");
const staging = `${target}.${process.pid}.tmp`;
fs.copyFileSync(process.execPath, staging);
fs.chmodSync(staging, 0o755);
try {
  execFileSync("strip", [staging], { stdio: "inherit" });
} catch {
  console.warn("build-sidecar: strip is not available; the binary stays unstripped");
}
const postject = path.join(path.dirname(require.resolve("postject/package.json")), "dist", "cli.js");
const out = execFileSync(
  process.execPath,
  [postject, staging, "NODE_SEA_BLOB", blob, "--sentinel-fuse", "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2"],
  { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
);
if (/error/i.test(out)) console.error(out);
fs.renameSync(staging, target);
const size = fs.statSync(target).size;
fs.rmSync(work, { recursive: true, force: true });
console.log(`built ${path.relative(root, target)} ${version} (${(size / 1e6).toFixed(1)} MB, addon ${addonHash})`);
