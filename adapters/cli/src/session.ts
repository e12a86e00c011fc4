import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  createDlineClients,
  parseHandshake,
  type DlineClients,
  type SidecarProcess,
} from "../../../core/src/client/index.js";
import { locateCore } from "./locate-core.js";

/** Global options every command shares. */
export interface CliContext {
  core: string | undefined;
  json: boolean;
  cliVersion: string;
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  interactive: boolean;
}

/**
 * Starts a private sidecar for one command and stops it (closing its stdin) afterwards, so a
 * killed CLI never leaves a sidecar behind. Its logs go to its log file, not to the terminal.
 */
export async function withSidecar<T>(
  ctx: CliContext,
  fn: (clients: DlineClients, core: string) => Promise<T>,
): Promise<T> {
  const core = locateCore(ctx.core, process.env, fileURLToPath(import.meta.url));
  const sidecar = await spawnOwnSidecar(core);
  let exit: number | string | undefined;
  void sidecar.exited.then((code) => (exit = code));
  try {
    const clients = createDlineClients(sidecar.handshake.url, sidecar.handshake.token);
    await clients.system.initialize({
      clientName: "dline-cli",
      clientVersion: ctx.cliVersion,
      workspaceRoots: [process.cwd()],
    });
    return await fn(clients, core);
  } catch (err) {
    // A call cut off because the sidecar died says so, not "aborted": its exit is awaited briefly,
    // since the broken connection is usually seen before the process is reaped.
    await Promise.race([sidecar.exited, new Promise((resolve) => setTimeout(resolve, 500).unref())]);
    if (exit !== undefined) throw new SidecarDiedError(exit);
    throw err;
  } finally {
    await sidecar.stop();
  }
}

/**
 * Starts the command's sidecar in a session (and process group) of its own, not the terminal's:
 * a Ctrl-C at the terminal goes to the CLI alone, which cancels the task (see followTask), instead
 * of stopping the sidecar under it (the task then only "interrupted", its answer not shown as cut
 * off, its last words lost). stdin stays a pipe: the sidecar exits when the CLI goes, however.
 */
function spawnOwnSidecar(binary: string): Promise<SidecarProcess> {
  const child = spawn(binary, ["serve"], {
    cwd: process.cwd(),
    env: process.env,
    stdio: ["pipe", "pipe", "ignore"],
    detached: true,
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? -1));
  });
  return new Promise((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("The sidecar did not print its handshake in time."));
    }, 30_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    child.once("error", fail);
    void exited.then((code) => fail(new Error(`The sidecar exited (${code}) before its handshake.`)));
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", function onData(chunk: string) {
      buffered += chunk;
      const newline = buffered.indexOf("\n");
      if (newline < 0) return;
      child.stdout.off("data", onData);
      // Nothing else is ever printed on stdout; keep draining so the pipe never fills.
      child.stdout.resume();
      clearTimeout(timer);
      try {
        const handshake = parseHandshake(buffered.slice(0, newline));
        resolve({
          handshake,
          child,
          exited,
          stop() {
            child.stdin.end();
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

/** The sidecar process ended while a command was using it. */
export class SidecarDiedError extends Error {
  constructor(readonly exit: number | string) {
    super(
      `the sidecar (dline-core) stopped unexpectedly (${typeof exit === "number" ? `exit code ${exit}` : exit}); ` +
        `its log is dline-core.log in the logs folder "dline doctor" names`,
    );
    this.name = "SidecarDiedError";
  }
}

export function printJson(ctx: CliContext, value: unknown): void {
  ctx.out.write(
    JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v), ctx.json ? undefined : 2) +
      "\n",
  );
}
