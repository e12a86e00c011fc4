import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import { parseHandshake, type Handshake } from "./handshake.js";

export interface SpawnSidecarOptions {
  /** Path of the dline-core executable. */
  binary: string;
  args?: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Where the sidecar's stderr goes: a file path, "inherit", or "ignore" (default "ignore"). */
  stderr?: string;
  /** Give up waiting for the handshake after this long (default 30 s). */
  handshakeTimeoutMs?: number;
  /**
   * Run it in a session (and process group) of its own, not the terminal's: a Ctrl-C typed
   * there then reaches only the parent, which can cancel the task instead of having the sidecar
   * stopped under it. It still exits when the parent goes (its stdin closes).
   */
  ownSession?: boolean;
}

export interface SidecarProcess {
  handshake: Handshake;
  child: ChildProcess;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  exited: Promise<number | string>;
  /** Closes stdin (the editor-died signal) and waits for the process to exit. */
  stop(): Promise<number | string>;
}

/**
 * Starts a sidecar as a child process and reads its handshake line. stdin stays a pipe: the
 * sidecar exits when it closes, so a crashed parent never leaves it behind.
 */
export function spawnSidecar(options: SpawnSidecarOptions): Promise<SidecarProcess> {
  const stderrTarget = options.stderr ?? "ignore";
  // "ignore" reads it until the handshake: a sidecar that exits before it says why there (an
  // older core refusing an option, say), and the error names that.
  const stderrFd =
    stderrTarget === "inherit" ? stderrTarget : stderrTarget === "ignore" ? "pipe" : fs.openSync(stderrTarget, "a");
  const child = spawn(options.binary, ["serve", ...(options.args ?? [])], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ["pipe", "pipe", stderrFd],
    detached: options.ownSession ?? false,
  });
  if (typeof stderrFd === "number") fs.closeSync(stderrFd);
  const early = child.stderr ? earlyStderr(child.stderr) : undefined;
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? -1));
  });
  return new Promise((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("The sidecar did not print its handshake in time."));
    }, options.handshakeTimeoutMs ?? 30_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    child.once("error", fail);
    void exited.then(async (code) => {
      // Its last words may still be in the pipe when the exit is seen.
      if (early) await early.read(250);
      const said = early?.said();
      fail(new Error(`The sidecar exited (${code}) before its handshake${said ? `: ${said}` : "."}`));
    });
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", function onData(chunk: string) {
      buffered += chunk;
      const newline = buffered.indexOf("\n");
      if (newline < 0) return;
      child.stdout!.off("data", onData);
      // Nothing else is ever printed on stdout; keep draining so the pipe never fills.
      child.stdout!.resume();
      early?.stop();
      clearTimeout(timer);
      try {
        const handshake = parseHandshake(buffered.slice(0, newline));
        resolve({
          handshake,
          child,
          exited,
          stop() {
            child.stdin?.end();
            return exited;
          },
        });
      } catch (err) {
        child.kill("SIGKILL");
        reject(err);
      }
    });
  });
}

/** How much of the sidecar's stderr is kept before its handshake. */
const EARLY_STDERR_BYTES = 4096;

/**
 * The sidecar's stderr until its handshake: `said()` is its own sentence about why it stopped
 * (its first line naming it, "dline-core: ..."), without the stack lines that may follow. After
 * `stop()` the pipe is drained and dropped, so the sidecar never blocks writing there.
 */
function earlyStderr(stream: NodeJS.ReadableStream): {
  said(): string | undefined;
  read(waitMs: number): Promise<void>;
  stop(): void;
} {
  let kept = "";
  const onData = (chunk: Buffer | string) => {
    if (kept.length < EARLY_STDERR_BYTES) kept += chunk.toString().slice(0, EARLY_STDERR_BYTES - kept.length);
  };
  stream.on("data", onData);
  const ended = new Promise<void>((resolve) => {
    stream.once("end", resolve);
    stream.once("close", resolve);
  });
  return {
    /** Until the pipe ends (all of it read), or `waitMs` (a process the sidecar started may hold it open). */
    async read(waitMs: number) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([ended, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    },
    said() {
      const line = kept.split("\n").find((l) => l.startsWith("dline-core: "));
      return line?.slice("dline-core: ".length).trim().slice(0, 300) || undefined;
    },
    stop() {
      stream.off("data", onData);
      stream.resume();
    },
  };
}
