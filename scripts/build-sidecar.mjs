// Builds dist/dline-core: a stripped copy of the pinned Node (scripts/node-runtime.json, never
// the Node that runs this script) made a single executable application whose main script
// (scripts/sea/main.cjs) runs an esbuild bundle of core/src/main.ts with V8's code cache of a
// warmed-up run (see warmEditorCodeCache); the bundle, the caches and better-sqlite3's addon
// compiled for that Node (stripped and gzipped) are its assets. The runtime and the addon come from the build cache
// (scripts/lib/node-runtime.mjs), made there on first need.
//
//   node scripts/build-sidecar.mjs [--platform linux-arm64] [--out FILE] [--readable]
//
// --readable keeps the bundle's names (whitespace and syntax are still minified), so that CPU
// profiles and stack traces of that binary name the sources' functions.
//
// Another platform than this machine's is cross-built: its Node from the registry, the addon
// compiled with the platform's cross compiler, the code cache made by running that Node under
// qemu-user when it is installed (without it the binary compiles its bundle at start-up).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { cliBundleOptions } from "./lib/cli-bundle.mjs";
import {
  HOST_PLATFORM,
  assertCanBuildFor,
  ensureNodeRuntime,
  ensureSqliteAddon,
  nodeCommand,
  stripFor,
} from "./lib/node-runtime.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const option = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const platform = option("--platform") ?? HOST_PLATFORM;
const target = path.resolve(
  option("--out") ?? path.join(dist, platform === HOST_PLATFORM ? "dline-core" : `dline-core-${platform}`),
);
// A folder per build process, so that two builds at once (parallel test runs) do not collide.
const work = path.join(dist, "build", String(process.pid));
const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
const require = (await import("node:module")).createRequire(import.meta.url);

// The Node the binary is made of, and one of the same version this machine runs (the same one
// unless cross-building): it makes the SEA blob and tells which exports the built-ins have.
assertCanBuildFor(platform);
const runtime = ensureNodeRuntime(platform);
const hostRuntime = platform === HOST_PLATFORM ? runtime : ensureNodeRuntime(HOST_PLATFORM);
const addon = ensureSqliteAddon(runtime);
const nodeMajor = runtime.version.split(".")[0];
/** Runs the embedded Node: directly, or under qemu-user for another architecture (undefined without it). */
const embeddedNodeCommand = nodeCommand(runtime);

/**
 * Built-ins the bundle's start-up path imports but seldom or never uses (connect-node's client
 * transports import http2 and https; child_process and sea serve a few calls; crypto, 3 ms to
 * load, serves the domain modules' hashing, not start-up or the first calls) are replaced with
 * an object whose getters load the real module on first use, so that starting the sidecar does
 * not load them. The getters cover every export of the module as the embedded Node has it.
 */
const LAZY_BUILTINS = ["http2", "https", "child_process", "sea", "crypto"];

function lazyBuiltinsPlugin() {
  const keys = JSON.parse(
    execFileSync(
      hostRuntime.node,
      [
        "-p",
        `JSON.stringify(Object.fromEntries(${JSON.stringify(LAZY_BUILTINS)}.map((n) => [n, Object.keys(require("node:" + n))])))`,
      ],
      {
        encoding: "utf8",
      },
    ),
  );
  const filter = new RegExp(`^(node:)?(${LAZY_BUILTINS.join("|")})$`);
  return {
    name: "lazy-builtins",
    setup(build) {
      build.onResolve({ filter }, (args) =>
        // The stub's own require of the built-in stays a plain require.
        args.namespace === "lazy-builtin"
          ? { path: args.path, external: true }
          : { path: args.path.replace(/^node:/, ""), namespace: "lazy-builtin" },
      );
      build.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (args) => ({
        loader: "js",
        contents:
          `let m; const load = () => (m ??= require("node:${args.path}"));\n` +
          `module.exports = {${keys[args.path].map((k) => `get ${JSON.stringify(k)}() { return load()[${JSON.stringify(k)}]; }`).join(", ")}};\n`,
      }));
    },
  };
}

/**
 * Built-ins the sources import as namespaces (`import * as fs from "node:fs"`) go through one ES
 * module each that re-exports them. esbuild otherwise gives every importing module its own copy
 * of the built-in's namespace (a getter per export: about 0.15-0.3 ms for node:fs), and some 50
 * modules import node:fs, most of them with the editor's first domain call.
 */
const SHARED_BUILTINS = ["fs", "fs/promises", "path", "os", "http", "net", "zlib"];

function sharedBuiltinsPlugin() {
  const filter = new RegExp(`^node:(${SHARED_BUILTINS.map((name) => name.replace("/", "\\/")).join("|")})$`);
  return {
    name: "shared-builtins",
    setup(build) {
      build.onResolve({ filter }, (args) => {
        // The re-exporting module's own import stays a plain require of the built-in, and so does
        // every require() (a CommonJS package may patch or compare what it gets).
        if (args.namespace === "shared-builtin" || args.kind !== "import-statement")
          return { path: args.path, external: true };
        return { path: args.path, namespace: "shared-builtin" };
      });
      build.onLoad({ filter: /.*/, namespace: "shared-builtin" }, (args) => ({
        loader: "js",
        contents: `export * from ${JSON.stringify(args.path)};\n`,
      }));
    },
  };
}

fs.mkdirSync(work, { recursive: true });
// The addon's debug symbols are of no use to users; gzip halves what is left. The hash is the
// extracted file's (core/src/native/sqlite-addon.ts checks it when it extracts the asset).
const strippedAddon = path.join(work, "better_sqlite3.node");
fs.copyFileSync(addon, strippedAddon);
try {
  execFileSync(stripFor(platform), ["--strip-unneeded", strippedAddon], { stdio: "inherit" });
} catch {
  console.warn(`build-sidecar: ${stripFor(platform)} is not available; the SQLite addon stays unstripped`);
}
const addonBytes = fs.readFileSync(strippedAddon);
const addonHash = createHash("sha256").update(addonBytes).digest("hex").slice(0, 24);
const addonAsset = path.join(work, "better_sqlite3.node.gz");
fs.writeFileSync(addonAsset, gzipSync(addonBytes, { level: 9 }));

const bundle = path.join(work, "dline-core.cjs");
await esbuild.build({
  entryPoints: [path.join(root, "core/src/main.ts")],
  outfile: bundle,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: `node${nodeMajor}`,
  // Without keepNames: it wraps every function and class in a naming call as the bundle loads
  // (5-9 ms of start-up). Nothing here depends on a function's or class's own name.
  minify: !process.argv.includes("--readable"),
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  define: {
    DLINE_VERSION: JSON.stringify(version),
    DLINE_SQLITE_ADDON_HASH: JSON.stringify(addonHash),
  },
  // debug's optional colour support is not needed and would be an unresolvable require in a SEA.
  alias: { "supports-color": path.join(root, "scripts/stubs/supports-color.cjs") },
  plugins: [sharedBuiltinsPlugin(), lazyBuiltinsPlugin()],
  logLevel: "warning",
});

// The bundle as a CommonJS function, the form scripts/sea/main.cjs compiles and calls; it reads
// it as Latin-1, which is only right for ASCII (esbuild's default output charset).
const bundleText = fs.readFileSync(bundle, "latin1");
if (/[^\x00-\x7f]/.test(bundleText))
  throw new Error("build-sidecar: the bundle is not ASCII; scripts/sea/main.cjs reads it as Latin-1");
const wrapped = path.join(work, "dline-core.js");
fs.writeFileSync(wrapped, `(function (exports, require, module, __filename, __dirname) {${bundleText}\n})`, "latin1");
const codeCache = path.join(work, "dline-core.cache");
const cliCodeCache = path.join(work, "dline-core-cli.cache.zst");
if (embeddedNodeCommand) {
  await warmEditorCodeCache(wrapped, codeCache);
  await warmCliCodeCache(wrapped, cliCodeCache);
} else {
  // An empty cache is rejected at start-up (scripts/sea/main.cjs says so on stderr): the bundle compiles as usual.
  console.warn(
    `build-sidecar: qemu-user is not installed, so no code cache for ${platform}: its binary compiles the bundle at each start`,
  );
  fs.writeFileSync(codeCache, "");
  fs.writeFileSync(cliCodeCache, "");
}

/**
 * V8's code caches of the bundle, made by running it in the Node the binary is made from (V8
 * accepts only a cache of its own version and flags; under qemu-user for another architecture)
 * as the single executable runs it (scripts/sea/warm-code-cache.cjs). Start-up is kept short by
 * loading modules on first need; a cache saves compiling what ran when it was made. Two, since
 * V8 deserializes a whole cache before the bundle's first line runs:
 * - an editor's sidecar (`serve`): a start and an editor's first calls (Health, Initialize),
 *   0.7 MB; the rest compiles when first used, once in the sidecar's life;
 * - the CLI's sidecar (`serve --one-command`, one process per command): also one whole task, a
 *   later one of its workspace (warmCodeCacheWithTask), driven by the CLI against the scripted
 *   model (the test suite's model server, as the quick start's demo;
 *   scripts/sea/warm-up-task.json: a read, two edits and a command with their checkpoints, the
 *   completion): 1.8 MB, zstd-compressed to fit the binary's size budget. Without it the turn
 *   loop, the tools and the checkpoints compiled in every CLI run: a later CLI task at 27,000
 *   files took 534 ms with checkpoints and 460 ms without, 506 and 431 ms with it (2026-12-07;
 *   its decompression, about 3.5 ms, included). The editor's cache stays small: with the task's,
 *   the first Health came 4-5 ms later.
 * (Not a start-up snapshot, `useSnapshot`: Node 24 cannot put node:http in one (its HTTP parser
 * binding does not serialize), and a snapshot holding only net and stream is 6.6 MB, over the
 * size budget, and took longer to deserialize than they take to load.)
 */
async function warmEditorCodeCache(script, cacheFile) {
  const scratch = fs.mkdtempSync(path.join(work, "warm-"));
  try {
    // stdin stays open while it runs: the sidecar stops when its stdin closes.
    const [command, ...prefix] = embeddedNodeCommand;
    const child = spawn(command, [...prefix, ...warmUpArgs(script, cacheFile, "first-calls"), "serve"], {
      stdio: ["pipe", "inherit", "pipe"],
      env: { PATH: process.env.PATH, ...rootsIn(scratch) },
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    if (code !== 0 || !fs.existsSync(cacheFile)) {
      console.error(stderr.slice(-1500));
      throw new Error("build-sidecar: warming up the code cache failed");
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** The warm-up's command line after the Node that runs it (scripts/sea/warm-code-cache.cjs). */
function warmUpArgs(script, cacheFile, mode) {
  return [path.join(root, "scripts/sea/warm-code-cache.cjs"), script, cacheFile, addonAsset, mode];
}

/** The sidecar's roots (and HOME) in a scratch folder: a warm-up touches nothing of the builder's. */
function rootsIn(scratch) {
  return {
    HOME: path.join(scratch, "home"),
    DLINE_DIR: path.join(scratch, "data"),
    DLINE_HOME_DIR: path.join(scratch, "dline-home"),
    DLINE_DOCS_DIR: path.join(scratch, "docs"),
  };
}

async function warmCliCodeCache(script, compressedCacheFile) {
  const cacheFile = path.join(work, "dline-core-cli.cache");
  await warmCodeCacheWithTask(script, cacheFile);
  // The build's own Node may be older than zstd (Node 22.15): the pinned one compresses.
  execFileSync(hostRuntime.node, [
    "-e",
    `const z = require("node:zlib"), fs = require("node:fs");
     fs.writeFileSync(process.argv[2], z.zstdCompressSync(fs.readFileSync(process.argv[1]),
       { params: { [z.constants.ZSTD_c_compressionLevel]: 19 } }));`,
    cacheFile,
    compressedCacheFile,
  ]);
}

async function warmCodeCacheWithTask(script, cacheFile) {
  const scratch = fs.mkdtempSync(path.join(work, "warm-"));
  let model;
  try {
    const cli = path.join(scratch, "cli.mjs");
    const modelServer = path.join(scratch, "model-server.mjs");
    await Promise.all([
      esbuild.build({ ...cliBundleOptions(root), outfile: cli }),
      esbuild.build({
        entryPoints: [path.join(root, "test/model-server/cli.ts")],
        outfile: modelServer,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        logLevel: "warning",
      }),
    ]);
    model = spawn(process.execPath, [modelServer, path.join(root, "scripts/sea/warm-up-task.json")], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const { url } = JSON.parse(await firstLine(model.stdout));
    const workspace = path.join(scratch, "project");
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, "hello.txt"), "hello\n");
    // A repository, as most workspaces are (the checkpoints read its HEAD); without git on PATH
    // the task runs with checkpoints unavailable, and their code is not in the cache.
    spawnSync("git", ["init", "-q"], { cwd: workspace });
    // The CLI starts its sidecar as `$DLINE_CORE serve --one-command ...`: here the bundle in this
    // build's embedded Node, with the addon asset beside it.
    const core = path.join(scratch, "dline-core");
    const command = [...embeddedNodeCommand, ...warmUpArgs(script, cacheFile, "task")];
    fs.writeFileSync(core, `#!/bin/sh\nexec ${command.map(shellQuote).join(" ")} "$@"\n`, { mode: 0o755 });
    // Two tasks in the workspace, each its own sidecar process (as every CLI command is): the
    // cache is the second's, which it writes at exit over the first's. Most CLI tasks are later
    // tasks of a workspace, whose checkpoints take their baseline from an existing shadow
    // repository (git's status against its index, trees read from its packs); a first task's
    // own paths (the repository made, every file taken in) compile at their first use.
    for (const round of ["first", "later"]) {
      fs.rmSync(cacheFile, { force: true });
      const task = spawnSync(process.execPath, [cli, "task", "--yes", "--workspace", workspace, "Add a greeting."], {
        encoding: "utf8",
        timeout: 120_000,
        env: {
          PATH: process.env.PATH,
          ...rootsIn(scratch),
          DLINE_CORE: core,
          OPENAI_BASE_URL: url,
          OPENAI_MODEL: "scripted-warm-up",
          OPENAI_API_KEY: "warm-up",
        },
      });
      if (task.status !== 0 || !fs.existsSync(cacheFile) || !task.stdout.includes("[completed")) {
        console.error(`${task.stdout ?? ""}${task.stderr ?? ""}`.slice(-1500));
        throw new Error(`build-sidecar: warming up the CLI's code cache with a ${round} task failed`);
      }
    }
  } finally {
    model?.kill();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function firstLine(stream) {
  return new Promise((resolve, reject) => {
    let text = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk) => {
      text += chunk;
      if (text.includes("\n")) resolve(text.slice(0, text.indexOf("\n")));
    });
    stream.once("end", () => reject(new Error("build-sidecar: the scripted model server did not start")));
  });
}

function shellQuote(word) {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

const seaConfig = path.join(work, "sea-config.json");
const blob = path.join(work, "sea-prep.blob");
fs.writeFileSync(
  seaConfig,
  JSON.stringify({
    main: path.join(root, "scripts/sea/main.cjs"),
    output: blob,
    disableExperimentalSEAWarning: true,
    // V8's young generation starts at 2 MB a semi-space instead of 1 MB: with 1 MB, start-up took
    // two scavenges (about 1 ms each) before the first Health answer; with 2 MB none. 4 MB was no
    // faster to start (its fresh pages cost as much to touch) and made the first ListTasks about
    // 4 ms slower. Heap sizes are not part of V8's flag hash, so the code caches (this bundle's
    // and Node's own) stay valid; flags that are (--no-opt...) would make V8 reject them.
    // It grows to 4 MB at most: Node 24's V8 (no pointer compression) lets it grow to 32 MB while
    // tasks stream, and their events survive (the event log keeps them): ten tasks streaming at
    // once took 90 MB of anonymous memory against 70 MB capped (50 tasks: 171-198 MB against
    // 91-129 MB), with no change the benchmarks could see in events per second or the import.
    execArgv: ["--min-semi-space-size=2", "--max-semi-space-size=4"],
    assets: {
      "dline-core.js": wrapped,
      "dline-core.cache": codeCache,
      "dline-core-cli.cache.zst": cliCodeCache,
      "better_sqlite3.node.gz": addonAsset,
    },
  }),
);
// Its warnings matter only when it fails. Without useCodeCache or a snapshot the blob does not
// depend on the architecture, only on Node's version.
const sea = spawnSync(hostRuntime.node, ["--experimental-sea-config", seaConfig], { encoding: "utf8" });
if (sea.status !== 0) {
  console.error(`${sea.stdout}${sea.stderr}`.slice(-1500));
  throw new Error("build-sidecar: building the single executable blob failed");
}

const staging = `${target}.${process.pid}.tmp`;
fs.mkdirSync(path.dirname(target), { recursive: true });
fs.copyFileSync(runtime.node, staging);
fs.chmodSync(staging, 0o755);
try {
  execFileSync(stripFor(platform), [staging], { stdio: "inherit" });
} catch {
  console.warn(`build-sidecar: ${stripFor(platform)} is not available; the binary stays unstripped`);
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
console.log(
  `built ${path.relative(root, target)} ${version} (${platform}, node v${runtime.version}, ${(size / 1e6).toFixed(1)} MB, addon ${addonHash})`,
);
