// `npm run release` (after `npm run build`): writes dist/release/ with what users install.
//   dline-core-<version>-<platform>             the sidecar (single executable)
//   dline-vscode-<version>-<platform>.vsix      the VS Code extension with that sidecar at extension/bin/dline-core
//   dline-nvim-<version>.tar.gz                 the Neovim plugin (doc/tags made by :helptags)
//   dline-jetbrains-client-<version>.jar, .pom  the Kotlin client library (Maven)
//   SHA256SUMS                                  sha256sum's format, for every file above
// <platform> is this machine's (linux-x64) and, from linux-x64, linux-arm64: that sidecar is
// cross-built (scripts/build-sidecar.mjs --platform; Debian's aarch64 cross compiler, and
// qemu-user for its code cache). `--platform linux-x64` (or DLINE_RELEASE_PLATFORMS) chooses;
// `--only core,vscode,nvim,jetbrains` makes some of the artifacts; `--out DIR` writes them elsewhere.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { HOST_PLATFORM, ensureNodeRuntime } from "./lib/node-runtime.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
const option = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const out = path.resolve(option("--out") ?? path.join(root, "dist", "release"));
// Per process, so that two releases at once (a test and a person) do not share it.
const stage = path.join(root, "dist", "build", `release-${process.pid}`);
const CROSS_BUILT = { "linux-x64": ["linux-arm64"] };
const platforms = (
  option("--platform") ??
  process.env.DLINE_RELEASE_PLATFORMS ??
  [HOST_PLATFORM, ...(CROSS_BUILT[HOST_PLATFORM] ?? [])].join(",")
)
  .split(",")
  .filter(Boolean);
if (!platforms.includes(HOST_PLATFORM)) platforms.unshift(HOST_PLATFORM);
const only = option("--only")?.split(",");
const wanted = (what) => !only || only.includes(what);

/** Runs a command, its output shown only when it fails. */
function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.status !== 0) {
    throw new Error(
      `release: ${command} ${args.join(" ")} failed (${result.status ?? result.signal}${result.error ? `, ${result.error.message}` : ""}):\n${`${result.stdout ?? ""}${result.stderr ?? ""}`.slice(-4000)}`,
    );
  }
  return result.stdout;
}

/** The sidecar binary for `platform`: dist/dline-core from `npm run build`, or a cross-build. */
function sidecarFor(platform) {
  if (platform === HOST_PLATFORM) {
    const built = path.join(root, "dist", "dline-core");
    if (!fs.existsSync(built))
      throw new Error('release: dist/dline-core is missing; run "npm run build" first (npm run release does)');
    return built;
  }
  const file = path.join(root, "dist", `dline-core-${platform}`);
  run(process.execPath, [path.join(root, "scripts", "build-sidecar.mjs"), "--platform", platform, "--out", file], {
    stdio: "inherit",
  });
  return file;
}

function releaseSidecar(platform, binary) {
  const target = path.join(out, `dline-core-${version}-${platform}`);
  fs.copyFileSync(binary, target);
  fs.chmodSync(target, 0o755);
  return target;
}

/**
 * The VSIX for `platform`, packed by the official packager (@vscode/vsce, run on the pinned Node:
 * it needs Node 22+) from a copy of adapters/vscode holding the built extension, the sidecar at
 * bin/dline-core and the licence; .vscodeignore leaves the sources and the test bundle out.
 */
function releaseVsix(platform, binary) {
  const extension = path.join(root, "adapters", "vscode");
  if (!fs.existsSync(path.join(extension, "out", "extension.js")))
    throw new Error('release: adapters/vscode/out/extension.js is missing; run "npm run build" first');
  const dir = path.join(stage, `vscode-${platform}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(extension, dir, {
    recursive: true,
    filter: (src) => !["node_modules", "src", path.join("out", "test")].includes(path.relative(extension, src)),
  });
  fs.mkdirSync(path.join(dir, "bin"));
  fs.copyFileSync(binary, path.join(dir, "bin", "dline-core"));
  fs.chmodSync(path.join(dir, "bin", "dline-core"), 0o755);
  fs.copyFileSync(path.join(root, "LICENSE"), path.join(dir, "LICENSE"));
  const target = path.join(out, `dline-vscode-${version}-${platform}.vsix`);
  const vsce = path.join(root, "node_modules", "@vscode", "vsce", "vsce");
  run(
    ensureNodeRuntime().node,
    // Relative links (the screenshots) stay relative: VS Code shows them from the installed
    // extension. A Marketplace upload would pass --baseImagesUrl with the repository's address.
    [
      vsce,
      "package",
      "--no-dependencies",
      "--no-rewrite-relative-links",
      "--allow-missing-repository",
      "--target",
      platform,
      "--out",
      target,
    ],
    { cwd: dir },
  );
  return target;
}

/** The plugin folder as users put it on 'runtimepath', with doc/tags from Neovim's own :helptags. */
function releaseNvim() {
  const name = `dline-nvim-${version}`;
  const dir = path.join(stage, name);
  fs.rmSync(dir, { recursive: true, force: true });
  const plugin = path.join(root, "adapters", "neovim");
  for (const part of ["lua", "plugin", "doc", "README.md"])
    fs.cpSync(path.join(plugin, part), path.join(dir, part), { recursive: true });
  fs.copyFileSync(path.join(root, "LICENSE"), path.join(dir, "LICENSE"));
  // helptags fails (E154) on a duplicate tag, and `-e` makes the error an exit code.
  const helptags = spawnSync(
    "nvim",
    [
      "--headless",
      "--clean",
      "-u",
      "NONE",
      "-c",
      `try | helptags ${path.join(dir, "doc")} | catch | cquit 1 | endtry`,
      "-c",
      "qa!",
    ],
    {
      encoding: "utf8",
    },
  );
  if (helptags.error)
    throw new Error(
      `release: nvim is needed for :helptags (${helptags.error.message}); scripts/setup-test.sh installs it`,
    );
  if (helptags.status !== 0 || !fs.existsSync(path.join(dir, "doc", "tags"))) {
    throw new Error(`release: :helptags failed for adapters/neovim/doc:\n${helptags.stdout}${helptags.stderr}`);
  }
  const target = path.join(out, `${name}.tar.gz`);
  // Same input, same archive: sorted names, no owners, the commit's time.
  run(
    "tar",
    [
      "--sort=name",
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      `--mtime=@${sourceDate()}`,
      "-czf",
      target,
      "-C",
      stage,
      name,
    ],
    {
      env: { ...process.env, GZIP: "-n" },
    },
  );
  return target;
}

/** The last commit's time (seconds), for reproducible archives; now outside a git checkout. */
function sourceDate() {
  const git = spawnSync("git", ["log", "-1", "--format=%ct"], { cwd: root, encoding: "utf8" });
  return git.status === 0 && git.stdout.trim() ? git.stdout.trim() : String(Math.floor(Date.now() / 1000));
}

/**
 * The Kotlin client library's jar, built by Maven without its tests (the suite runs them), and
 * its POM for users: the client's POM has a parent (adapters/jetbrains/pom.xml) and a build that
 * generates code from proto/, neither of which a user has, so the released POM is flattened from
 * the effective one: coordinates, licence and the dependencies a user needs (test ones left out).
 */
function releaseJetbrains() {
  const adapter = path.join(root, "adapters", "jetbrains");
  // Built in a copy, so that it never shares target/ with a `mvn test` running in the client folder.
  const dir = path.join(stage, "jetbrains");
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, "client"), { recursive: true });
  fs.copyFileSync(path.join(adapter, "pom.xml"), path.join(dir, "pom.xml"));
  fs.copyFileSync(path.join(adapter, "client", "pom.xml"), path.join(dir, "client", "pom.xml"));
  fs.cpSync(path.join(adapter, "client", "src", "main"), path.join(dir, "client", "src", "main"), { recursive: true });
  const effective = path.join(dir, "effective-pom.xml");
  run(
    "mvn",
    [
      "-B",
      "-q",
      "-DskipTests",
      `-Ddline.proto.dir=${path.join(root, "proto")}`,
      "package",
      "help:effective-pom",
      `-Doutput=${effective}`,
    ],
    {
      cwd: path.join(dir, "client"),
    },
  );
  const pom = flattenPom(fs.readFileSync(effective, "utf8"));
  const jar = path.join(out, `${pom.artifactId}-${pom.version}.jar`);
  fs.copyFileSync(path.join(dir, "client", "target", `${pom.artifactId}-${pom.version}.jar`), jar);
  const pomOut = path.join(out, `${pom.artifactId}-${pom.version}.pom`);
  fs.writeFileSync(pomOut, pom.text);
  return [jar, pomOut];
}

/** A consumer's POM from Maven's effective POM (help:effective-pom: two-space indented XML). */
function flattenPom(effective) {
  const field = (name) => new RegExp(`\n  <${name}>([^<]*)</${name}>`).exec(effective)?.[1];
  const [groupId, artifactId, pomVersion, name] = ["groupId", "artifactId", "version", "name"].map(field);
  if (artifactId !== "dline-jetbrains-client" || pomVersion !== version) {
    throw new Error(
      `release: adapters/jetbrains/client/pom.xml builds ${artifactId} ${pomVersion}; the release is dline-jetbrains-client ${version}`,
    );
  }
  const dependencies = /\n {2}<dependencies>\n([\s\S]*?)\n {2}<\/dependencies>\n/.exec(effective)?.[1];
  if (!dependencies) throw new Error("release: no dependencies in the client's effective POM");
  const kept = (dependencies.match(/ {4}<dependency>[\s\S]*?\n {4}<\/dependency>/g) ?? []).filter(
    (d) => !/<scope>test<\/scope>/.test(d),
  );
  const text = `<?xml version="1.0" encoding="UTF-8"?>
<!-- Dline's Kotlin client library for JetBrains IDEs, ${version}: flattened from adapters/jetbrains/client/pom.xml by scripts/release.mjs. -->
<project xmlns="http://maven.apache.org/POM/4.0.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>${groupId}</groupId>
  <artifactId>${artifactId}</artifactId>
  <version>${pomVersion}</version>
  <packaging>jar</packaging>
  <name>${name}</name>
  <description>Kotlin client of the Dline core sidecar (Connect RPC), for JetBrains IDE plugins.</description>
  <licenses>
    <license>
      <name>Apache-2.0</name>
      <url>https://www.apache.org/licenses/LICENSE-2.0</url>
    </license>
  </licenses>
  <dependencies>
${kept.join("\n")}
  </dependencies>
</project>
`;
  return { artifactId, version: pomVersion, text };
}

function writeChecksums(files) {
  const lines = files
    .map((file) => `${createHash("sha256").update(fs.readFileSync(file)).digest("hex")}  ${path.basename(file)}`)
    .sort((a, b) => a.slice(66).localeCompare(b.slice(66)));
  fs.writeFileSync(path.join(out, "SHA256SUMS"), lines.join("\n") + "\n");
}

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
fs.mkdirSync(stage, { recursive: true });
const files = [];
for (const platform of platforms) {
  if (!wanted("core") && !wanted("vscode")) break;
  const binary = sidecarFor(platform);
  if (wanted("core")) files.push(releaseSidecar(platform, binary));
  if (wanted("vscode")) files.push(releaseVsix(platform, binary));
}
if (wanted("nvim")) files.push(releaseNvim());
if (wanted("jetbrains")) files.push(...releaseJetbrains());
writeChecksums(files);
fs.rmSync(stage, { recursive: true, force: true });
for (const file of [...files, path.join(out, "SHA256SUMS")]) {
  console.log(`${path.relative(root, file).padEnd(58)} ${(fs.statSync(file).size / 1e6).toFixed(1).padStart(7)} MB`);
}
