/**
 * Starts a program in a process group of its own that cannot outlive the sidecar while it runs.
 *
 * A sidecar killed with SIGKILL (or by the OOM killer) runs no code, so it cannot stop what it
 * started: a `sleep 600`, a dev server or a test watcher the person approved would run on with
 * nobody to see or cancel it. So a small /bin/sh wrapper first forks a watcher into the group,
 * then execs the program. The watcher blocks reading a pipe whose other end only the sidecar
 * holds. If the sidecar dies, the read sees end-of-file and the watcher kills the whole group.
 * When the program ends normally, `release()` writes a line: the watcher exits quietly, and
 * whatever the program left running in the background on purpose stays.
 *
 * The program never sees the pipe (fd 3 is closed before the exec), and the watcher holds
 * none of the program's output pipes, so it does not delay the end of the output.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Writable } from "node:stream";

const LEASH_FD = 3;
const WRAPPER =
  `{ read -r line <&${LEASH_FD} || kill -KILL 0; } </dev/null >/dev/null 2>&1 & ` + `exec "$@" ${LEASH_FD}<&-`;

export interface LeashedSpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The program's stdin: its own pipe, or nothing. */
  stdin: "pipe" | "ignore";
}

export interface LeashedChild {
  /** The program's process (its pid leads the group); stdin, stdout and stderr are its own. */
  child: ChildProcess;
  /** The program ended: let whatever it left in the background live on. */
  release: () => void;
}

export function spawnLeashed(file: string, args: string[], options: LeashedSpawnOptions): LeashedChild {
  if (process.platform === "win32") {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: [options.stdin, "pipe", "pipe"] });
    return { child, release: () => {} };
  }
  const child = spawn("/bin/sh", ["-c", WRAPPER, "dline-leash", file, ...args], {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: [options.stdin, "pipe", "pipe", "pipe"],
  });
  const leash = child.stdio[LEASH_FD] as Writable | null;
  leash?.on("error", () => {}); // the watcher is gone already (the group was killed)
  let released = false;
  return {
    child,
    release: () => {
      if (released || !leash) return;
      released = true;
      leash.end("\n");
    },
  };
}
