// Builds dist/dline-core: an esbuild bundle of core/src/main.ts injected into a stripped copy of
// the local `node` as a single executable application, with better-sqlite3's addon as an asset.
// See ../shared/TOOLCHAIN.md ("The sidecar binary") for why each step is the way it is.
import { execFileSync, spawnSync } from "node:child_process";
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
 * The binary starts from a V8 start-up snapshot of the evaluated bundle (see core/src/main.ts):
 * protobuf descriptors, connect and every module are deserialised instead of compiled and run,
 * which is most of the start-up cost. A snapshot cannot hold some built-ins (node:http fails to
 * load while one is built; child_process and sea are "not verified"), and HTTP/2 and TLS are
 * never used by the server anyway, so every import of these is replaced with an object whose
 * getters load the real module on first use. The getters cover every export of the module as
 * the Node that runs this build (the same Node the binary is made from) loads it.
 */
const LAZY_BUILTINS = ["http", "https", "http2", "child_process", "sea"];
/**
 * Packages that keep process state from the moment they load, which a snapshot would freeze at
 * build time: graceful-fs caches `process.cwd()` (every later process.cwd() and path.resolve()
 * would answer the build's folder). They load on first use too, after the snapshot is read.
 */
const LAZY_PACKAGES = ["graceful-fs"];

function lazyModulesPlugin() {
  const stubs = {};
  for (const name of LAZY_BUILTINS) stubs[name] = { load: `node:${name}`, keys: Object.keys(require(`node:${name}`)) };
  for (const name of LAZY_PACKAGES) {
    const file = require.resolve(name, { paths: [path.join(root, "core")] });
    stubs[name] = { load: file, keys: Object.keys(require(file)) };
  }
  const filter = new RegExp(`^(node:)?(${LAZY_BUILTINS.join("|")})$|^(${LAZY_PACKAGES.join("|")})$`);
  return {
    name: "lazy-modules",
    setup(build) {
      build.onResolve({ filter }, (args) =>
        // The stub's own require of a built-in stays a plain require.
        args.namespace === "lazy-module" ? { path: args.path, external: true } : { path: args.path.replace(/^node:/, ""), namespace: "lazy-module" },
      );
      build.onLoad({ filter: /.*/, namespace: "lazy-module" }, (args) => {
        const { load, keys } = stubs[args.path];
        return {
          loader: "js",
          // A package's absolute path is bundled (resolved from root); a built-in stays external.
          resolveDir: root,
          contents:
            `let m; const load = () => (m ??= require(${JSON.stringify(load)}));\n` +
            `module.exports = {${keys.map((k) => `get ${JSON.stringify(k)}() { return load()[${JSON.stringify(k)}]; }`).join(", ")}};\n`,
        };
      });
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
  alias: {
    "supports-color": path.join(root, "scripts/stubs/supports-color.cjs"),
    // proper-lockfile registers signal-exit's handlers when it loads; a snapshot cannot hold them.
    "signal-exit": path.join(root, "scripts/stubs/signal-exit-after-snapshot.cjs"),
    "signal-exit-at-run-time": require.resolve("signal-exit", { paths: [path.join(root, "core")] }),
  },
  plugins: [lazyModulesPlugin()],
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
    useSnapshot: true,
    assets: { "better_sqlite3.node": addon },
  }),
);
// Building the snapshot runs the bundle; its warnings matter only when it fails.
const sea = spawnSync(process.execPath, ["--experimental-sea-config", seaConfig], { encoding: "utf8" });
if (sea.status !== 0) {
  console.error(`${sea.stdout}${sea.stderr}`.slice(-1500));
  throw new Error("build-sidecar: building the single executable blob (and its start-up snapshot) failed");
}

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
// KEEP_BUILD=1 keeps dist/build/<pid> (the bundle and the blob) for inspection.
if (!process.env.KEEP_BUILD) fs.rmSync(work, { recursive: true, force: true });
console.log(`built ${path.relative(root, target)} ${version} (${(size / 1e6).toFixed(1)} MB, addon ${addonHash})`);
