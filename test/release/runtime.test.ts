/**
 * The sidecar runs on the Node pinned in scripts/node-runtime.json (taken from the npm registry
 * and checked against its pinned checksum), not on the Node that runs the build, and its V8
 * code cache is one that Node accepts.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { makeTestRoots, repoRoot, sidecarBinary, startSidecar } from "../helpers/sidecar.js";
import { entry } from "../helpers/items.js";

const run = promisify(execFile);
const pin = JSON.parse(fs.readFileSync(path.join(repoRoot, "scripts", "node-runtime.json"), "utf8")) as {
  version: string;
  platforms: Record<string, { package: string; integrity: string }>;
};
const packageVersion = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")).version as string;

describe("the sidecar's runtime", () => {
  it("names its version, the protocol and the pinned Node it embeds", async () => {
    const { stdout } = await run(sidecarBinary, ["--version"]);
    expect(stdout).toBe(`dline-core ${packageVersion} (protocol 1, node v${pin.version})\n`);
    expect(pin.version.split(".")[0]).not.toBe(process.versions.node.split(".")[0]);
  });

  // An editor's sidecar and the CLI's (`--one-command`, whose cache also holds a task's code and
  // comes compressed) each take their own cache.
  it.each([
    ["an editor's", []],
    ["the CLI's", ["--one-command"]],
  ])("%s starts with its embedded code cache accepted (nothing on stderr about it)", async (_who, args) => {
    const sidecar = await startSidecar({ args });
    try {
      await sidecar.clients.system.health({});
      await sidecar.clients.history.listTasks({});
    } finally {
      await sidecar.stop();
    }
    const stderr = fs.readFileSync(sidecar.stderrFile, "utf8");
    expect(stderr).toContain('"msg":"serving"');
    expect(stderr).not.toContain("code cache");
  });

  it("refuses a better-sqlite3 that does not declare support for a Node that loads it", async () => {
    // The check the build makes: both the embedded Node and the Node running the tests.
    const check = (embedded: string, build: string) =>
      run(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `import { assertSqliteSupports, ensureNodeRuntime } from ${JSON.stringify(path.join(repoRoot, "scripts", "lib", "node-runtime.mjs"))};
           assertSqliteSupports({ ...ensureNodeRuntime(), version: process.argv[1] }, process.argv[2]);`,
          embedded,
          build,
        ],
        { env: process.env },
      ).then(
        () => "accepted",
        (e: { stderr: string }) => e.stderr,
      );
    expect(await check(pin.version, process.versions.node)).toBe("accepted");
    expect(await check(pin.version, "19.9.0")).toContain("not the Node running the build and the tests: v19.9.0");
    expect(await check("18.20.0", process.versions.node)).toContain("not the embedded Node");
  });

  it("compiles better-sqlite3 against the pinned Node even when npm's settings name another Node's headers", async () => {
    // `npm run build` exports the user's npm settings to the build; an npmrc's `nodedir` (this
    // machine's image has nodedir=/usr) made node-gyp compile against the machine's Node.
    const roots = makeTestRoots("dline-runtime-nodedir-");
    const script = path.join(repoRoot, "scripts", "lib", "node-runtime.mjs");
    const { stdout } = await run(process.execPath, [script, "--node-only"], { env: process.env });
    const pinned = JSON.parse(stdout) as { dir: string };
    // A build cache of its own, with the pinned Node already in it: only the addon is built.
    const cache = path.join(roots.base, "cache");
    fs.mkdirSync(path.join(cache, "node"), { recursive: true });
    fs.symlinkSync(pinned.dir, path.join(cache, "node", path.basename(pinned.dir)));
    const machineNode = path.dirname(path.dirname(process.execPath));
    const built = await run(process.execPath, [script], {
      env: { ...process.env, DLINE_BUILD_CACHE: cache, npm_config_nodedir: machineNode },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((e: { stderr: string }) => ({ stdout: "", stderr: e.stderr }));
    expect(built.stderr).not.toContain("cannot load the compiled addon");
    const addon = (JSON.parse(built.stdout) as { sqliteAddon: string }).sqliteAddon;
    expect(addon.startsWith(path.join(cache, "addons"))).toBe(true);
    expect(fs.existsSync(addon)).toBe(true);
  }, 600_000);

  it("refuses a runtime package whose tarball does not match the pinned checksum", async () => {
    const roots = makeTestRoots("dline-runtime-pin-");
    // A copy of the scripts with the pin's checksum changed: the real registry package, a wrong pin.
    const scripts = path.join(roots.base, "repo", "scripts");
    fs.cpSync(path.join(repoRoot, "scripts", "lib"), path.join(scripts, "lib"), { recursive: true });
    const wrong = structuredClone(pin);
    const host = `${process.platform}-${process.arch}`;
    entry(wrong.platforms, host, "platform").integrity = `sha512-${Buffer.alloc(64, 7).toString("base64")}`;
    fs.writeFileSync(path.join(scripts, "node-runtime.json"), JSON.stringify(wrong));
    const cache = path.join(roots.base, "cache");
    const err = await run(process.execPath, [path.join(scripts, "lib", "node-runtime.mjs"), host], {
      env: { ...process.env, DLINE_BUILD_CACHE: cache },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code).not.toBe(0);
    expect((err as { stderr: string }).stderr).toContain("does not match its pinned checksum");
    // Nothing of the refused package is left where a later build would take it from.
    expect(fs.readdirSync(path.join(cache, "node"))).toEqual([]);
  });
});
