import { execFile, execFileSync, spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import * as path from "node:path";
import { promisify } from "node:util";
import { TEST_KEY } from "../runtime/harness.js";
import { repoRoot, sidecarBinary } from "./sidecar.js";

const cli = path.join(repoRoot, "dist", "dline");

/** A `dline` process run without a terminal, its output kept as it comes. */
export interface CliChild {
  readonly child: ChildProcessByStdio<Writable | null, Readable, Readable>;
  /** Resolves with the exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Both streams interleaved in the order they arrived. */
  output(): string;
  /** The CLI's own sidecar (its child `dline-core` process). */
  sidecarPid(): number;
  /** Ends the process if it still runs and waits for it. */
  stop(): Promise<void>;
}

export function startCli(args: string[], env: NodeJS.ProcessEnv, stdin: "ignore" | "pipe" = "ignore"): CliChild {
  const child: CliChild["child"] =
    stdin === "pipe"
      ? spawn(cli, args, { env, stdio: ["pipe", "pipe", "pipe"] })
      : spawn(cli, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  let both = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    both += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
    both += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    output: () => both,
    sidecarPid: () =>
      Number(
        execFileSync("pgrep", ["-P", String(child.pid), "-f", "dline-core"])
          .toString()
          .trim()
          .split("\n")[0],
      ),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** The environment of a `dline` run against the scripted model server: its own roots, the built sidecar. */
export function cliEnv(
  roots: { env: NodeJS.ProcessEnv },
  server: { url: string },
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    ...roots.env,
    DLINE_CORE: sidecarBinary,
    OPENAI_BASE_URL: server.url,
    OPENAI_MODEL: "scripted-model",
    OPENAI_API_KEY: TEST_KEY,
    ...extra,
  };
}

/**
 * Kills the CLI's own sidecar (its child process) hard, as a crash would, and then the commands
 * the sidecar left running (their shells, each the head of its process group). Resolves with the
 * CLI's exit code.
 */
export async function crashSidecar(task: CliChild): Promise<number | null> {
  const sidecarPid = task.sidecarPid();
  const commandShells = execFileSync("pgrep", ["-P", String(sidecarPid)])
    .toString()
    .trim()
    .split("\n")
    .map(Number);
  process.kill(sidecarPid, "SIGKILL");
  const code = await task.exited;
  for (const pid of commandShells) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
  }
  return code;
}

/** Runs `dline ARGS` to its end (rejects on a non-zero exit), its output as strings. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(cli, args, { env });
}

/** A task's checkpoints as `dline --json checkpoints` lists them. */
export async function checkpointsOf(env: NodeJS.ProcessEnv, taskId: string): Promise<{ id: string; kind: string }[]> {
  const { stdout } = await runCli(["--json", "checkpoints", taskId], env);
  return (JSON.parse(stdout) as { checkpoints: { id: string; kind: string }[] }).checkpoints;
}
