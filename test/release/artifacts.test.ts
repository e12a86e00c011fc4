/**
 * The release: `scripts/release.mjs` (what `npm run release` runs after the build) writes every
 * artifact into a scratch folder; each one is then unpacked into a clean folder and run the way
 * its users would: the sidecar on its own with a minimal environment, the VSIX installed into a
 * real VS Code (code-server) that starts its bundled sidecar, the Neovim archive in a clean
 * headless Neovim, the Kotlin client's jar and POM from a separate Maven program, and the
 * cross-built linux-arm64 sidecar under qemu-user (Health, a task against the scripted model).
 * Needs what scripts/setup-test.sh installs: code-server and Chromium, nvim, Maven, a JDK, the
 * aarch64 cross compiler and qemu-user.
 * DLINE_RELEASE_DIR=dist/release checks the artifacts already there instead of making them.
 */
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDlineClients, spawnSidecar } from "../../core/src/client/index.js";
import { assertBinaryBuilt, makeTestRoots, repoRoot, type TestRoots } from "../helpers/sidecar.js";
import { spawnModelServer } from "../model-server/spawn.js";
import type { ModelServerScript } from "../model-server/script.js";
import {
  assertToolsInstalled,
  CODE_SERVER,
  NODE24_BIN,
  openWorkbench,
  startCodeServer,
} from "../vscode/code-server.js";
import { firstOf } from "../helpers/items.js";

const run = promisify(execFile);
const version = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")).version as string;
const platform = `${process.platform}-${process.arch}`;
/** Cross-built from x64 (scripts/release.mjs), run here under qemu-user. */
const ARM64 = "linux-arm64";
const OUT = path.join(repoRoot, "test-output", "release");
/** Enough for a person's shell: no repository folders, no DLINE_CORE. */
const MINIMAL_PATH = "/usr/local/bin:/usr/bin:/bin";

/** python3 -c ZIP_ENTRY <zip> <entry> <out>: extracts one entry, prints its Unix mode. */
const ZIP_ENTRY =
  "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\ni = z.getinfo(sys.argv[2])\nopen(sys.argv[3], 'wb').write(z.read(i))\nprint(i.external_attr >> 16)";

/** The model's side of the arm64 smoke task: one edit, then done. */
const TASK_SCRIPT: ModelServerScript = {
  apiKey: "sk-release-arm64-0123456789",
  turns: [
    {
      text: "I will update the greeting.",
      toolCalls: [
        {
          name: "replace_in_file",
          input: { path: "hello.txt", diff: "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
        },
      ],
    },
    { text: "Done.", toolCalls: [{ name: "attempt_completion", input: { result: "hello.txt greets the world." } }] },
  ],
};

let release: string;
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  // DLINE_RELEASE_DIR checks a release made before (or downloaded) instead of making one.
  if (process.env.DLINE_RELEASE_DIR) {
    release = path.resolve(process.env.DLINE_RELEASE_DIR);
    return;
  }
  assertBinaryBuilt();
  release = fs.mkdtempSync(path.join(os.tmpdir(), "dline-release-"));
  // The release script itself, as `npm run release` runs it after the build.
  const made = spawnSync(process.execPath, [path.join(repoRoot, "scripts", "release.mjs"), "--out", release], {
    encoding: "utf8",
  });
  if (made.status !== 0) throw new Error(`scripts/release.mjs failed:\n${made.stdout}${made.stderr}`);
}, 900_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
});

/** A clean folder for one artifact, with the artifact copied in. */
function unpackInto(roots: TestRoots, file: string): string {
  const dir = path.join(roots.base, "unpacked");
  fs.mkdirSync(dir, { recursive: true });
  const copy = path.join(dir, path.basename(file));
  fs.copyFileSync(file, copy);
  return copy;
}

function sha256(file: string): string {
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

describe("npm run release", () => {
  it("writes every artifact and a SHA256SUMS that matches them", () => {
    const expected = [
      `dline-core-${version}-${platform}`,
      `dline-vscode-${version}-${platform}.vsix`,
      `dline-core-${version}-${ARM64}`,
      `dline-vscode-${version}-${ARM64}.vsix`,
      `dline-nvim-${version}.tar.gz`,
      `dline-jetbrains-client-${version}.jar`,
      `dline-jetbrains-client-${version}.pom`,
    ];
    const files = fs.readdirSync(release).sort();
    expect(files).toEqual([...expected, "SHA256SUMS"].sort());
    const sums = fs
      .readFileSync(path.join(release, "SHA256SUMS"), "utf8")
      .trim()
      .split("\n")
      .map((line) => firstOf(line.split(/\s+/), 2, "column of SHA256SUMS"));
    expect(sums.map(([, name]) => name).sort()).toEqual([...expected].sort());
    for (const [hash, name] of sums) expect(hash, name).toBe(sha256(path.join(release, name)));
    // sha256sum itself agrees (the format users check with).
    const check = spawnSync("sha256sum", ["--check", "--strict", "SHA256SUMS"], { cwd: release, encoding: "utf8" });
    expect(check.status, check.stdout + check.stderr).toBe(0);
  });

  it("the sidecar runs from a clean folder with a minimal environment and answers Health", async () => {
    const roots = makeTestRoots("dline-release-core-");
    const binary = unpackInto(roots, path.join(release, `dline-core-${version}-${platform}`));
    expect(fs.statSync(binary).mode & 0o111).not.toBe(0);
    const env = { ...roots.env, PATH: MINIMAL_PATH };
    const { stdout } = await run(binary, ["--version"], { env, cwd: roots.base });
    expect(stdout).toMatch(
      new RegExp(`^dline-core ${version.replace(/\./g, "\\.")} \\(protocol 1, node v24\\.\\d+\\.\\d+\\)\\n$`),
    );
    const sidecar = await spawnSidecar({ binary, env, cwd: roots.base });
    try {
      const health = await createDlineClients(sidecar.handshake.url, sidecar.handshake.token).system.health({});
      expect(health.status).toBe("ok");
      expect(health.serverVersion).toBe(version);
    } finally {
      await sidecar.stop();
    }
  });

  describe("the linux-arm64 sidecar, under qemu-user", () => {
    /** A `dline-core` that runs the arm64 binary under qemu-user, as binfmt_misc would. */
    function qemuWrapper(roots: TestRoots, binary: string): string {
      const wrapper = path.join(roots.base, "bin", "dline-core");
      fs.mkdirSync(path.dirname(wrapper), { recursive: true });
      fs.writeFileSync(
        wrapper,
        `#!/bin/sh\nexec qemu-aarch64 -L /usr/aarch64-linux-gnu ${JSON.stringify(binary)} "$@"\n`,
        { mode: 0o755 },
      );
      return wrapper;
    }

    it("answers Health and runs a task against the scripted model", { timeout: 300_000 }, async () => {
      const roots = makeTestRoots("dline-release-arm64-");
      const binary = unpackInto(roots, path.join(release, `dline-core-${version}-${ARM64}`));
      expect(fs.readFileSync(binary).subarray(0, 20).readUInt16LE(18), "ELF machine").toBe(183); // EM_AARCH64
      const core = qemuWrapper(roots, binary);
      const env = { ...roots.env, PATH: MINIMAL_PATH };
      const { stdout, stderr } = await run(core, ["--version"], { env, cwd: roots.base });
      expect(stdout).toMatch(
        new RegExp(`^dline-core ${version.replace(/\./g, "\\.")} \\(protocol 1, node v24\\.\\d+\\.\\d+\\)\\n$`),
      );
      expect(stderr, "the code cache made under qemu at build time is accepted").not.toContain("code cache");
      const sidecar = await spawnSidecar({ binary: core, env, cwd: roots.base, handshakeTimeoutMs: 120_000 });
      try {
        const health = await createDlineClients(sidecar.handshake.url, sidecar.handshake.token).system.health({});
        expect(health.status).toBe("ok");
      } finally {
        await sidecar.stop();
      }

      const model = await spawnModelServer(TASK_SCRIPT);
      cleanups.push(() => model.stop());
      const workspace = path.join(roots.base, "project");
      fs.mkdirSync(workspace);
      fs.writeFileSync(path.join(workspace, "hello.txt"), "hello\n");
      const task = await run(
        process.execPath,
        [
          path.join(repoRoot, "dist", "dline"),
          "--core",
          core,
          "--json",
          "task",
          "--yes",
          "--workspace",
          workspace,
          "Greet the world",
        ],
        {
          env: {
            ...env,
            PATH: process.env.PATH,
            OPENAI_BASE_URL: model.url,
            OPENAI_MODEL: "scripted",
            OPENAI_API_KEY: TASK_SCRIPT.apiKey,
          },
          timeout: 240_000,
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      expect(fs.readFileSync(path.join(workspace, "hello.txt"), "utf8")).toBe("hello, world\n");
      // The CLI exits 0 only for a completed task; its last event says so.
      const last = task.stdout.trim().split("\n").at(-1)!;
      expect(last, last).toMatch(/"statusChanged".*COMPLETED/i);
    });

    it("its VSIX carries that sidecar at extension/bin/dline-core, executable", async () => {
      const roots = makeTestRoots("dline-release-arm64-vsix-");
      const vsix = unpackInto(roots, path.join(release, `dline-vscode-${version}-${ARM64}.vsix`));
      const listing = await run("python3", [
        "-c",
        ZIP_ENTRY,
        vsix,
        "extension/bin/dline-core",
        path.join(roots.base, "dline-core"),
      ]);
      expect(Number(listing.stdout.trim()) & 0o111, "executable bits in the VSIX").not.toBe(0);
      expect(sha256(path.join(roots.base, "dline-core"))).toBe(
        sha256(path.join(release, `dline-core-${version}-${ARM64}`)),
      );
      const manifest = await run("python3", [
        "-c",
        ZIP_ENTRY,
        vsix,
        "extension.vsixmanifest",
        path.join(roots.base, "manifest.xml"),
      ]);
      expect(manifest.stdout.trim()).not.toBe("");
      expect(fs.readFileSync(path.join(roots.base, "manifest.xml"), "utf8")).toContain('TargetPlatform="linux-arm64"');
    });
  });

  describe("the Neovim archive in a clean headless Neovim", () => {
    /** Unpacks the archive into a clean folder; returns the plugin folder. */
    function unpackPlugin(roots: TestRoots): string {
      const archive = unpackInto(roots, path.join(release, `dline-nvim-${version}.tar.gz`));
      const dir = path.dirname(archive);
      const untar = spawnSync("tar", ["-xzf", archive, "-C", dir], { encoding: "utf8" });
      expect(untar.status, untar.stderr).toBe(0);
      return path.join(dir, `dline-nvim-${version}`);
    }

    async function checkInNeovim(roots: TestRoots, plugin: string, extraEnv: NodeJS.ProcessEnv) {
      const out = path.join(roots.base, `nvim-check-${Date.now()}.json`);
      await run(
        "nvim",
        [
          "--headless",
          "--clean",
          "--cmd",
          `set rtp^=${plugin}`,
          "-c",
          `luafile ${path.join(repoRoot, "test", "release", "fixtures", "nvim-check.lua")}`,
        ],
        {
          cwd: roots.base,
          env: {
            ...roots.env,
            PATH: MINIMAL_PATH,
            XDG_CONFIG_HOME: path.join(roots.base, "xdg-config"),
            XDG_DATA_HOME: path.join(roots.base, "xdg-data"),
            XDG_STATE_HOME: path.join(roots.base, "xdg-state"),
            XDG_CACHE_HOME: path.join(roots.base, "xdg-cache"),
            CHECK_OUT: out,
            ...extraEnv,
          },
          timeout: 180_000,
        },
      );
      return JSON.parse(fs.readFileSync(out, "utf8")) as {
        has_command: boolean;
        help_ok: boolean;
        help_error?: string;
        help_file?: string;
        help_line?: string;
        health?: { status: string; serverVersion: string };
        health_error?: string;
        core_path?: string;
        last_error?: string;
      };
    }

    it("installs with the README's commands as written, ships doc/tags made by :helptags, and :help dline opens its help", async () => {
      const roots = makeTestRoots("dline-release-nvim-");
      // The README's "Install from a release" block for Neovim, run as a person pastes it, in
      // the folder holding the release files, with a home of its own.
      const readme = fs.readFileSync(path.join(repoRoot, "README.md"), "utf8");
      const commands = /```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf("- **Neovim**")))?.[1];
      expect(commands).toContain("tar -xzf");
      const downloads = path.dirname(unpackInto(roots, path.join(release, `dline-nvim-${version}.tar.gz`)));
      fs.copyFileSync(
        path.join(release, `dline-core-${version}-${platform}`),
        path.join(downloads, `dline-core-${version}-${platform}`),
      );
      const home = path.join(roots.base, "person");
      fs.mkdirSync(home);
      const install = spawnSync("sh", ["-e", "-c", commands!], {
        cwd: downloads,
        env: { PATH: MINIMAL_PATH, HOME: home },
        encoding: "utf8",
      });
      expect(install.status, install.stderr).toBe(0);
      const plugin = path.join(home, ".local/share/nvim/site/pack/dline/start", `dline-nvim-${version}`);
      expect(fs.readFileSync(path.join(plugin, "doc", "tags"), "utf8")).toMatch(/^dline\tdline\.txt\t/m);
      const seen = await checkInNeovim(roots, plugin, {});
      expect(seen.has_command).toBe(true);
      expect(seen.help_error).toBeUndefined();
      expect(seen.help_file).toBe(path.join(plugin, "doc", "dline.txt"));
      expect(seen.help_line).toContain("*dline*");
      // Found next to the plugin: no DLINE_CORE, nothing on PATH, no checkout around it.
      expect(seen.health_error ?? seen.last_error).toBeUndefined();
      expect(seen.health?.status).toBe("ok");
      expect(seen.core_path).toBe(path.join(plugin, "bin", "dline-core"));
    });

    it("finds the sidecar on PATH", async () => {
      const roots = makeTestRoots("dline-release-nvim-");
      const plugin = unpackPlugin(roots);
      const bin = path.join(roots.base, "bin");
      fs.mkdirSync(bin);
      fs.copyFileSync(path.join(release, `dline-core-${version}-${platform}`), path.join(bin, "dline-core"));
      fs.chmodSync(path.join(bin, "dline-core"), 0o755);
      const seen = await checkInNeovim(roots, plugin, { PATH: `${bin}:${MINIMAL_PATH}` });
      expect(seen.health_error ?? seen.last_error).toBeUndefined();
      expect(seen.health?.status).toBe("ok");
      expect(seen.core_path).toBe(path.join(bin, "dline-core"));
    });

    it("runs the sidecar named by setup{ core_path }", async () => {
      const roots = makeTestRoots("dline-release-nvim-");
      const plugin = unpackPlugin(roots);
      const elsewhere = path.join(roots.base, "tools", "my-dline-core");
      fs.mkdirSync(path.dirname(elsewhere), { recursive: true });
      fs.copyFileSync(path.join(release, `dline-core-${version}-${platform}`), elsewhere);
      fs.chmodSync(elsewhere, 0o755);
      const seen = await checkInNeovim(roots, plugin, { CHECK_CORE_PATH: elsewhere });
      expect(seen.health_error ?? seen.last_error).toBeUndefined();
      expect(seen.health?.status).toBe("ok");
      expect(seen.core_path).toBe(elsewhere);
    });
  });

  it(
    "the Kotlin client's jar and POM serve a separate Maven program that starts the sidecar",
    { timeout: 900_000 },
    async () => {
      const roots = makeTestRoots("dline-release-jvm-");
      const jar = unpackInto(roots, path.join(release, `dline-jetbrains-client-${version}.jar`));
      const pom = unpackInto(roots, path.join(release, `dline-jetbrains-client-${version}.pom`));
      const maven = {
        cwd: roots.base,
        env: { ...process.env, HOME: process.env.HOME },
        timeout: 600_000,
        maxBuffer: 32 * 1024 * 1024,
      };
      // As a user without access to our repository would: the released files into the local
      // repository, under a version of this run's own (the POM's version changed, nothing else),
      // so that test runs in other checkouts at the same time never read each other's jar.
      const checkVersion = `${version}-releasecheck-${process.pid}`;
      const pomText = fs.readFileSync(pom, "utf8");
      const ownPom = path.join(roots.base, "check.pom");
      fs.writeFileSync(ownPom, pomText.replace(`<version>${version}</version>`, `<version>${checkVersion}</version>`));
      const installed = path.join(
        process.env.HOME ?? "",
        ".m2",
        "repository",
        "dev",
        "dline",
        "dline-jetbrains-client",
        checkVersion,
      );
      cleanups.push(() => fs.rmSync(installed, { recursive: true, force: true }));
      await run("mvn", ["-B", "-q", "install:install-file", `-Dfile=${jar}`, `-DpomFile=${ownPom}`], maven);
      const consumer = path.join(roots.base, "consumer");
      fs.cpSync(path.join(repoRoot, "test", "release", "fixtures", "jetbrains-consumer"), consumer, {
        recursive: true,
      });
      const classpathFile = path.join(consumer, "classpath.txt");
      await run(
        "mvn",
        [
          "-B",
          "-q",
          `-Ddline.version=${checkVersion}`,
          "compile",
          "dependency:build-classpath",
          `-Dmdep.outputFile=${classpathFile}`,
        ],
        { ...maven, cwd: consumer },
      );
      const classpath = [path.join(consumer, "target", "classes"), fs.readFileSync(classpathFile, "utf8").trim()].join(
        path.delimiter,
      );
      expect(classpath).toContain(path.join(installed, `dline-jetbrains-client-${checkVersion}.jar`));
      const sidecar = unpackInto(roots, path.join(release, `dline-core-${version}-${platform}`));
      const { stdout } = await run("java", ["-cp", classpath, "MainKt", sidecar], {
        cwd: roots.base,
        env: { ...roots.env, PATH: process.env.PATH },
        timeout: 120_000,
      });
      expect(stdout).toMatch(new RegExp(`^health ok version ${version.replace(/\./g, "\\.")} pid \\d+$`, "m"));
    },
  );

  it(
    "the VSIX installs into VS Code (code-server), which starts the sidecar it carries",
    { timeout: 600_000 },
    async () => {
      assertToolsInstalled();
      const roots = makeTestRoots("dline-release-vscode-");
      const vsix = unpackInto(roots, path.join(release, `dline-vscode-${version}-${platform}.vsix`));
      const extensions = path.join(roots.base, "vscode-extensions");
      const csEnv = { ...roots.env, PATH: `${NODE24_BIN}:${MINIMAL_PATH}` };
      const installed = await run(
        path.join(NODE24_BIN, "node"),
        [
          CODE_SERVER,
          "--extensions-dir",
          extensions,
          "--user-data-dir",
          path.join(roots.base, "vscode-user-data"),
          "--install-extension",
          vsix,
        ],
        {
          env: csEnv,
          cwd: roots.base,
          timeout: 120_000,
        },
      );
      expect(installed.stdout).toContain("was successfully installed");
      const bundled = path.join(extensions, `dline.dline-vscode-${version}`, "bin", "dline-core");
      expect(fs.statSync(bundled).mode & 0o111).not.toBe(0);

      const workspace = path.join(roots.base, "project");
      fs.mkdirSync(workspace);
      fs.writeFileSync(path.join(workspace, "hello.txt"), "hello\n");
      // Not the extension under development: the installed one, with no DLINE_CORE and a PATH
      // without the repository, so only the sidecar inside the VSIX can answer.
      const server = await startCodeServer({ base: roots.base, workspace, env: { ...roots.env, PATH: MINIMAL_PATH } });
      cleanups.push(async () => {
        await server.stop();
        fs.copyFileSync(server.logFile, path.join(OUT, "code-server.log"));
      });
      const bench = await openWorkbench(
        `${server.url}/?folder=${encodeURIComponent(workspace)}`,
        path.join(OUT, "browser-console.log"),
      );
      cleanups.push(() => bench.browser.close());
      // Opening the Dline view activates the extension, which starts its sidecar.
      await bench.page.locator('.activitybar [aria-label^="Dline"]').first().click({ timeout: 120_000 });

      const log = path.join(roots.homeDir, "logs", "dline-core.log");
      const deadline = Date.now() + 120_000;
      let initialized: { pid: number } | undefined;
      while (!initialized && Date.now() < deadline) {
        const lines = fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
        initialized = lines
          .map((l) => JSON.parse(l))
          .find((e) => e.msg === "client initialized" && e.client === "vscode");
        if (!initialized) await new Promise((r) => setTimeout(r, 250));
      }
      expect(initialized, `no "client initialized" from vscode in ${log}`).toBeDefined();
      // The process that answered is the binary inside the installed extension.
      expect(fs.readlinkSync(`/proc/${initialized!.pid}/exe`)).toBe(bundled);
      await bench.page.screenshot({ path: path.join(OUT, "vscode-installed-vsix.png") });
    },
  );
});
