// The Node the sidecar embeds and better-sqlite3's addon compiled for it, both kept in a build
// cache outside the repository (shared by every checkout; $DLINE_BUILD_CACHE, default
// ~/.cache/dline-build) and made on first need:
// - the runtime is the npm registry's node-<platform> package at the version pinned in
//   scripts/node-runtime.json, fetched with `npm pack` and accepted only if the tarball's SHA-512
//   matches the pinned integrity;
// - the addon is better-sqlite3 (the version in node_modules) compiled by npm's node-gyp against
//   that package's headers (`--nodedir`: nothing is downloaded), in a copy of the package, so the
//   addon in node_modules stays the one for the Node that runs npm and the tests.
// `node scripts/lib/node-runtime.mjs [--node-only] [platform...]` makes sure both exist and prints
// their paths as JSON on stdout (progress goes to stderr).
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const require = createRequire(import.meta.url);

export const HOST_PLATFORM = `${process.platform}-${process.arch}`;

/** The pinned runtime: { version, platforms: { [platform]: { package, integrity } } }. */
export function runtimePin() {
  return JSON.parse(fs.readFileSync(path.join(root, "scripts", "node-runtime.json"), "utf8"));
}

export function buildCacheDir() {
  return (
    process.env.DLINE_BUILD_CACHE ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "dline-build")
  );
}

/**
 * Cross toolchains by target platform (Debian's packages). A platform not listed here builds
 * only on a machine of that platform.
 */
const CROSS = {
  "linux-arm64": {
    prefix: "aarch64-linux-gnu-",
    arch: "arm64",
    qemu: "aarch64",
    apt: ["g++-aarch64-linux-gnu", "binutils-aarch64-linux-gnu", "qemu-user"],
  },
};

/**
 * The command that runs `runtime`'s node on this machine: itself, or under qemu-user (with the
 * cross toolchain's libraries as its root) for another architecture; undefined without qemu.
 */
export function nodeCommand(runtime) {
  if (runtime.platform === HOST_PLATFORM) return [runtime.node];
  const { qemu } = crossToolchain(runtime.platform);
  const found = spawnSync("sh", ["-c", `command -v qemu-${qemu}`], { encoding: "utf8" }).stdout.trim();
  return found ? [found, "-L", `/usr/${qemu}-linux-gnu`, runtime.node] : undefined;
}

/** The `strip` that understands binaries of `platform`. */
export function stripFor(platform) {
  return platform === HOST_PLATFORM ? "strip" : `${crossToolchain(platform).prefix}strip`;
}

function crossToolchain(platform) {
  const cross = CROSS[platform];
  if (!cross)
    throw new Error(`node-runtime: no cross toolchain is known for ${platform} (building on ${HOST_PLATFORM})`);
  return cross;
}

/** Throws, naming the packages to install, when building for `platform` needs a cross compiler that is missing. */
export function assertCanBuildFor(platform) {
  if (platform === HOST_PLATFORM) return;
  const cross = crossToolchain(platform);
  const missing = ["gcc", "g++", "strip"].filter(
    (tool) => spawnSync("sh", ["-c", `command -v ${cross.prefix}${tool}`]).status !== 0,
  );
  if (missing.length > 0) {
    throw new Error(
      `node-runtime: building for ${platform} needs ${missing.map((t) => cross.prefix + t).join(", ")}: apt-get install ${cross.apt.join(" ")} (scripts/setup-test.sh does)`,
    );
  }
}

/** A folder next to `target` for building it, renamed into place when complete. */
function scratchNextTo(target) {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  return fs.mkdtempSync(`${target}.tmp-${process.pid}-`);
}

/** Moves a finished `from` to `to`; if another build got there first, keeps theirs. */
function publish(from, to) {
  try {
    fs.renameSync(from, to);
  } catch (err) {
    if (!fs.existsSync(to)) throw err;
  }
}

function sriSha512(file) {
  return `sha512-${createHash("sha512").update(fs.readFileSync(file)).digest("base64")}`;
}

/**
 * The pinned Node for `platform`, verified and unpacked:
 * { platform, version, dir (the package folder, with include/node), node (its bin/node) }.
 */
export function ensureNodeRuntime(platform = HOST_PLATFORM) {
  const pin = runtimePin();
  const entry = pin.platforms[platform];
  if (!entry) throw new Error(`node-runtime: scripts/node-runtime.json pins no Node for ${platform}`);
  const dir = path.join(buildCacheDir(), "node", `${entry.package}-${pin.version}`);
  const runtime = { platform, version: pin.version, dir, node: path.join(dir, "bin", "node") };
  const marker = path.join(dir, ".dline-integrity");
  if (fs.existsSync(marker) && fs.readFileSync(marker, "utf8") === entry.integrity) return runtime;

  fs.rmSync(dir, { recursive: true, force: true });
  const scratch = scratchNextTo(dir);
  try {
    console.error(`node-runtime: fetching ${entry.package}@${pin.version} from the npm registry`);
    const packed = spawnSync(
      "npm",
      ["pack", `${entry.package}@${pin.version}`, "--pack-destination", scratch, "--json", "--ignore-scripts"],
      {
        cwd: scratch,
        encoding: "utf8",
      },
    );
    if (packed.status !== 0)
      throw new Error(`node-runtime: npm pack ${entry.package}@${pin.version} failed:\n${packed.stderr.slice(-1500)}`);
    const tarball = path.join(scratch, JSON.parse(packed.stdout)[0].filename);
    const integrity = sriSha512(tarball);
    if (integrity !== entry.integrity) {
      throw new Error(
        `node-runtime: ${entry.package}@${pin.version} does not match its pinned checksum ` +
          `(scripts/node-runtime.json says ${entry.integrity}, the tarball is ${integrity}); refusing to use it`,
      );
    }
    const unpacked = path.join(scratch, "unpacked");
    fs.mkdirSync(unpacked);
    execFileSync("tar", ["-xzf", tarball, "-C", unpacked]);
    const pkg = path.join(unpacked, "package");
    fs.writeFileSync(path.join(pkg, ".dline-integrity"), entry.integrity);
    if (platform === HOST_PLATFORM) {
      const printed = execFileSync(path.join(pkg, "bin", "node"), ["--version"], { encoding: "utf8" }).trim();
      if (printed !== `v${pin.version}`)
        throw new Error(`node-runtime: ${entry.package}@${pin.version} runs as ${printed}`);
    }
    publish(pkg, dir);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return runtime;
}

/** npm's own node-gyp (the one npm runs for install scripts). */
function nodeGypScript() {
  const npmCli =
    process.env.npm_execpath && fs.existsSync(process.env.npm_execpath) ? process.env.npm_execpath : undefined;
  const npmBin = npmCli ?? fs.realpathSync(execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim());
  // .../npm/bin/npm-cli.js -> .../npm/node_modules/node-gyp/bin/node-gyp.js
  const script = path.join(path.dirname(path.dirname(npmBin)), "node_modules", "node-gyp", "bin", "node-gyp.js");
  if (!fs.existsSync(script)) throw new Error(`node-runtime: npm's node-gyp is not at ${script}`);
  return script;
}

/**
 * The environment node-gyp compiles the addon in: the caller's, less npm's configuration. node-gyp
 * reads `npm_config_*` (and `npm_package_config_node_gyp_*`) variables as options, and those beat
 * its command line: `npm run build` exports the user's npm settings, and a `nodedir=/usr` in an
 * npmrc (some Node installs write one) compiled the addon against the machine's Node headers
 * instead of the pinned Node's.
 */
export function nodeGypEnvironment(env) {
  // The Python a user named for node-gyp (npm's `python` setting) still counts: it only runs gyp.
  const npmSettings = /^npm_(config|package_config_node_gyp)_(?!python$)/i;
  return Object.fromEntries(Object.entries(env).filter(([name]) => !npmSettings.test(name)));
}

function betterSqlite3Dir() {
  return path.dirname(require.resolve("better-sqlite3/package.json", { paths: [path.join(root, "core")] }));
}

/**
 * Throws unless better-sqlite3 declares support for both Nodes that load it: the embedded one
 * and the one running the build and the tests (which load it in-process). npm's own engines
 * check cannot say it: scripts/setup.sh runs npm on the embedded Node. (better-sqlite3 13
 * declares Node 22+ and crashes on Node 20.)
 */
export function assertSqliteSupports(runtime, buildNodeVersion = process.versions.node) {
  const manifest = JSON.parse(fs.readFileSync(path.join(betterSqlite3Dir(), "package.json"), "utf8"));
  const range = manifest.engines?.node;
  if (!range) return;
  const semver = require("semver");
  for (const [who, version] of [
    [`the embedded Node (scripts/node-runtime.json, ${runtime.platform})`, runtime.version],
    ["the Node running the build and the tests", buildNodeVersion],
  ]) {
    if (!semver.satisfies(version, range)) {
      throw new Error(
        `node-runtime: better-sqlite3 ${manifest.version} supports Node ${range}, not ${who}: v${version}`,
      );
    }
  }
}

/**
 * better-sqlite3's addon compiled for `runtime` (from ensureNodeRuntime), unstripped; a path in
 * the build cache keyed by better-sqlite3's version, the Node version and the platform.
 */
export function ensureSqliteAddon(runtime) {
  assertSqliteSupports(runtime);
  const source = betterSqlite3Dir();
  const sqliteVersion = JSON.parse(fs.readFileSync(path.join(source, "package.json"), "utf8")).version;
  const folder = path.join(
    buildCacheDir(),
    "addons",
    `better-sqlite3-${sqliteVersion}-node-v${runtime.version}-${runtime.platform}`,
  );
  const file = path.join(folder, "better_sqlite3.node");
  if (fs.existsSync(file)) return file;

  const scratch = scratchNextTo(folder);
  try {
    const copy = path.join(scratch, "better-sqlite3");
    fs.cpSync(source, copy, { recursive: true, filter: (src) => path.relative(source, src) !== "build" });
    const args = [nodeGypScript(), "rebuild", "--release", `--nodedir=${runtime.dir}`];
    const env = nodeGypEnvironment(process.env);
    if (runtime.platform !== HOST_PLATFORM) {
      const cross = crossToolchain(runtime.platform);
      args.push(`--arch=${cross.arch}`);
      Object.assign(env, {
        CC: `${cross.prefix}gcc`,
        CXX: `${cross.prefix}g++`,
        LINK: `${cross.prefix}g++`,
        AR: `${cross.prefix}ar`,
        CC_host: "gcc",
        CXX_host: "g++",
        LINK_host: "g++",
        AR_host: "ar",
      });
    }
    console.error(
      `node-runtime: compiling better-sqlite3 ${sqliteVersion} for node v${runtime.version} ${runtime.platform} (a minute or two)`,
    );
    const built = spawnSync(process.execPath, args, { cwd: copy, env, encoding: "utf8" });
    if (built.status !== 0) {
      throw new Error(
        `node-runtime: compiling better-sqlite3 for ${runtime.platform} failed:\n${`${built.stdout}${built.stderr}`.slice(-3000)}`,
      );
    }
    const result = path.join(scratch, "result");
    fs.mkdirSync(result);
    fs.copyFileSync(
      path.join(copy, "build", "Release", "better_sqlite3.node"),
      path.join(result, "better_sqlite3.node"),
    );
    assertLoads(runtime, path.join(result, "better_sqlite3.node"));
    publish(result, folder);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return file;
}

/** The embedded Node loads the addon (a wrong ABI fails here, not in the sidecar); skipped when it cannot run here. */
function assertLoads(runtime, addon) {
  const command = nodeCommand(runtime);
  if (!command) return;
  const check = spawnSync(
    command[0],
    [
      ...command.slice(1),
      "-e",
      "const m = { exports: {} }; process.dlopen(m, process.argv[1]); if (typeof m.exports.Database !== 'function') process.exit(3);",
      addon,
    ],
    { encoding: "utf8" },
  );
  if (check.status !== 0)
    throw new Error(
      `node-runtime: node v${runtime.version} cannot load the compiled addon:\n${check.stderr.slice(-1500)}`,
    );
}

/** A sentence for the logs: which Node, where. */
export function describeRuntime(runtime) {
  return `node v${runtime.version} ${runtime.platform} (${runtime.dir})`;
}

// `node scripts/lib/node-runtime.mjs [--node-only] [platform...]`: prepare and print as JSON.
// --node-only skips the addon (it needs node_modules; setup.sh asks for the Node before npm ci).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const nodeOnly = args.includes("--node-only");
  const platforms = args.filter((a) => a !== "--node-only");
  if (platforms.length === 0) platforms.push(HOST_PLATFORM);
  const out = platforms.map((platform) => {
    const runtime = ensureNodeRuntime(platform);
    return nodeOnly ? runtime : { ...runtime, sqliteAddon: ensureSqliteAddon(runtime) };
  });
  console.log(JSON.stringify(out.length === 1 ? out[0] : out, null, 2));
}
