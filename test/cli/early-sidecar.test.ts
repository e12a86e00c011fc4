// `dline task` and `dline resume` start their sidecar before the CLI loads the rest of its code
// (adapters/cli/src/early-sidecar.ts), so that the two start side by side and a task's scan of
// its workspace for checkpoints begins sooner. The command takes that sidecar only if it would
// have started the very same one: one process a command, with the arguments it always had.
import { execFile, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { EarlySidecar, likelyLaunch } from "../../adapters/cli/src/early-sidecar.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots, repoRoot, sidecarBinary } from "../helpers/sidecar.js";
import { makeWorkspace } from "../runtime/harness.js";
import { cliEnv } from "../helpers/cli-child.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

/** A core executable that notes each start's arguments (one line each), then runs the real one. */
function notingCore(dir: string): { path: string; starts: () => string[] } {
  const log = path.join(dir, "core-starts.log");
  const file = path.join(dir, "noting-core");
  fs.writeFileSync(file, `#!/bin/sh\necho "$*" >> '${log}'\nexec '${sidecarBinary}' "$@"\n`, { mode: 0o755 });
  return {
    path: file,
    starts: () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").filter(Boolean) : []),
  };
}

describe("the sidecar a task's command line starts early", () => {
  it("is the one sidecar of `dline task`, started with the task's folder and --one-command", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base, { "src/app.txt": "hello\n" });
    const core = notingCore(roots.base);
    const server = await spawnModelServer({
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "src/app.txt", content: "bye\n" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    servers.push(server);
    // A relative folder, as a person types it: the early guess resolves it as the command does.
    await run(cli, ["task", "Say bye", "--workspace", path.relative(roots.base, workspace), "--yes"], {
      env: cliEnv(roots, server, { DLINE_CORE: core.path }),
      cwd: roots.base,
    });
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("bye\n");
    expect(core.starts()).toEqual([`serve --one-command --workspace ${workspace}`]);

    // Other commands start theirs when they run, as before: one each.
    await run(cli, ["history"], { env: cliEnv(roots, server, { DLINE_CORE: core.path }), cwd: roots.base });
    expect(core.starts()).toEqual([`serve --one-command --workspace ${workspace}`, "serve --one-command"]);
  }, 60_000);

  it("leaves a malformed command line to the command, which says what is wrong as before", async () => {
    const roots = makeTestRoots();
    const core = notingCore(roots.base);
    const out = await run(cli, ["task", "do it", "--workspace"], {
      env: { ...roots.env, DLINE_CORE: core.path },
    }).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(out?.code).toBe(2);
    expect(out?.stderr).toMatch(/^dline: --workspace needs a value\.\n\nUsage/);
    expect(core.starts()).toEqual([]);
  });

  it("is guessed only for a command that runs a task, and only when the executable is there", () => {
    const env = { DLINE_CORE: sidecarBinary };
    const cliFile = path.join(repoRoot, "dist", "dline");
    expect(likelyLaunch(["task", "do it", "--workspace", "/w"], env, cliFile)).toEqual({
      binary: sidecarBinary,
      args: ["--one-command", "--workspace", "/w"],
    });
    expect(likelyLaunch(["resume", "T1", "--message", "go on"], env, cliFile)?.args).toEqual(["--one-command"]);
    const none = [
      [],
      ["history"],
      ["task"],
      ["task", "  "],
      ["task", "x", "--help"],
      ["--version"],
      ["task", "x", "--workspace"],
    ];
    for (const argv of none) {
      expect(likelyLaunch(argv, env, cliFile), argv.join(" ")).toBeUndefined();
    }
    const roots = makeTestRoots();
    const elsewhere = path.join(roots.base, "bin", "dline");
    expect(likelyLaunch(["task", "x"], { DLINE_CORE: path.join(roots.base, "none") }, elsewhere)).toBeUndefined();
  });

  it("is stopped when the command wants another one, and handed over when it wants the same", async () => {
    const roots = makeTestRoots();
    const launch = { binary: sidecarBinary, args: ["--one-command"] };

    const same = new EarlySidecar(launch, roots.env);
    const started = await same.take(launch)!;
    expect(started.handshake.pid).toBeGreaterThan(0);
    await started.stop();

    const other = new EarlySidecar(launch, roots.env);
    await expect.poll(() => ourSidecars().length, { timeout: 10_000 }).toBe(1);
    // The command wants a sidecar of a folder: the early one goes.
    expect(other.take({ ...launch, args: ["--one-command", "--workspace", roots.base] })).toBeUndefined();
    await expect.poll(() => ourSidecars(), { timeout: 10_000 }).toEqual([]);
    // Taken once: a second ask starts its own.
    expect(other.take(launch)).toBeUndefined();
  });

  it("that refuses its arguments (an older core) is named with the core's own words", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    // The real core, given an option it does not know: as a core from before an option the CLI
    // now passes (--one-command) refuses that one.
    const older = path.join(roots.base, "older-core");
    fs.writeFileSync(older, `#!/bin/sh\nexec '${sidecarBinary}' "$@" --an-option-from-later\n`, { mode: 0o755 });
    for (const args of [["task", "Say bye", "--workspace", workspace, "--yes"], ["history"]]) {
      const failed = await run(cli, args, {
        env: cliEnv(roots, { url: "http://127.0.0.1:9" }, { DLINE_CORE: older }),
      }).then(
        () => undefined,
        (err: { code: number; stderr: string }) => err,
      );
      expect(failed?.code, args[0]).toBe(1);
      expect(failed?.stderr).toBe(
        'dline: The sidecar exited (2) before its handshake: Unknown option --an-option-from-later. Run "dline-core serve --help".\n',
      );
    }
  }, 60_000);
});

/** This process's children running `serve` (pids). */
function ourSidecars(): string[] {
  return execFileSync("ps", ["--ppid", String(process.pid), "-o", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.includes(" serve --one-command"))
    .map((l) => l.trim().split(" ")[0]!);
}
