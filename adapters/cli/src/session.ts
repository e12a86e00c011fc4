import { fileURLToPath } from "node:url";
import { createDlineClients, type DlineClients } from "../../../core/src/client/index.js";
import { sidecarArgs, spawnCliSidecar, type EarlySidecar } from "./early-sidecar.js";
import { locateCore } from "./locate-core.js";

/** Global options every command shares. */
export interface CliContext {
  core: string | undefined;
  json: boolean;
  cliVersion: string;
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  interactive: boolean;
  /** The sidecar started before the CLI loaded (bin.ts), taken by the command that wants it. */
  early?: EarlySidecar;
}

/**
 * Starts a private sidecar for one command and stops it (closing its stdin) afterwards, so a
 * killed CLI never leaves a sidecar behind. Its logs go to its log file, not to the terminal.
 */
export async function withSidecar<T>(
  ctx: CliContext,
  fn: (clients: DlineClients, core: string) => Promise<T>,
  /** The folder a task will run in at once: the sidecar readies it while it is connected to. */
  options: { taskWorkspace?: string } = {},
): Promise<T> {
  const core = locateCore(ctx.core, process.env, fileURLToPath(import.meta.url));
  const launch = { binary: core, args: sidecarArgs(options.taskWorkspace) };
  const sidecar = await (ctx.early?.take(launch) ?? spawnCliSidecar(launch, process.env));
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
    // since the broken connection is usually seen before the process is reaped. A task's events
    // that ended cleanly mean a sidecar stopping in order (SIGTERM): it exits once it has saved
    // its state, within its own limit of 2 s.
    const ended = err instanceof TaskEventsEnded;
    await Promise.race([sidecar.exited, new Promise((resolve) => setTimeout(resolve, ended ? 2500 : 500).unref())]);
    if (exit !== undefined) throw new SidecarDiedError(exit, ended ? err.taskId : undefined);
    throw err;
  } finally {
    await sidecar.stop();
  }
}

/** The sidecar process ended while a command was using it (`taskId`: the task it followed). */
export class SidecarDiedError extends Error {
  constructor(
    readonly exit: number | string,
    taskId?: string,
  ) {
    super(
      `the sidecar (dline-core) stopped unexpectedly (${typeof exit === "number" ? `exit code ${exit}` : exit}); ` +
        `its log is dline-core.log in the logs folder "dline doctor" names` +
        (taskId ? `. Task ${taskId} is interrupted: dline resume ${taskId} continues it` : ""),
    );
    this.name = "SidecarDiedError";
  }
}

/**
 * A task's events ended before its run did, without an error: the sidecar closed them (it is
 * stopping). Before, the command then ended with exit code 1 and no word of why.
 */
export class TaskEventsEnded extends Error {
  constructor(readonly taskId: string) {
    super(
      `the task's events stopped before its run ended (the sidecar closed them). ` +
        `Task ${taskId} may still be running: dline follow ${taskId} shows it, dline resume ${taskId} continues it once it stopped`,
    );
    this.name = "TaskEventsEnded";
  }
}

/**
 * Writes plain data as JSON. Protocol messages are converted with `toJson` by their schema before
 * (Connect JSON: enum names, int64 as strings); a message given as it is would carry protobuf-es's
 * own `$typeName` keys, which are never output.
 */
export function printJson(ctx: CliContext, value: unknown): void {
  ctx.out.write(
    JSON.stringify(
      value,
      (k, v: unknown) => (k === "$typeName" ? undefined : typeof v === "bigint" ? v.toString() : v),
      ctx.json ? undefined : 2,
    ) + "\n",
  );
}
