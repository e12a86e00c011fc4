import { fileURLToPath } from "node:url";
import { createDlineClients, spawnSidecar, type DlineClients } from "../../../core/src/client/index.js";
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
export async function withSidecar<T>(ctx: CliContext, fn: (clients: DlineClients, core: string) => Promise<T>): Promise<T> {
  const core = locateCore(ctx.core, process.env, fileURLToPath(import.meta.url));
  const sidecar = await spawnSidecar({ binary: core, cwd: process.cwd(), env: process.env, stderr: "ignore" });
  try {
    const clients = createDlineClients(sidecar.handshake.url, sidecar.handshake.token);
    await clients.system.initialize({ clientName: "dline-cli", clientVersion: ctx.cliVersion, workspaceRoots: [process.cwd()] });
    return await fn(clients, core);
  } finally {
    await sidecar.stop();
  }
}

export function printJson(ctx: CliContext, value: unknown): void {
  ctx.out.write(
    JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v), ctx.json ? undefined : 2) + "\n",
  );
}
