/**
 * `dline-core acp`: the same core (createApp: storage roots, settings, tasks, checkpoints,
 * runtime, lifecycle) speaking the Agent Client Protocol on stdin/stdout. stdout carries the
 * protocol only: logs go to stderr and the log file. The process exits when stdin closes (the
 * editor went away) or on SIGTERM/SIGINT/SIGHUP, after flushing; a prompt running then leaves
 * its task interrupted, resumable from any client.
 */
import { Readable, Writable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import { bootCore } from "../boot.js";
import type { LogLevel } from "../logging/logger.js";
import { SERVER_VERSION } from "../version.js";
import { dlineAgent } from "./dline-agent.js";

export interface AcpOptions {
  logLevel: LogLevel;
  remoteConfig: string | undefined;
}

export async function runAcp(options: AcpOptions): Promise<void> {
  const { app, logger, lifecycle } = await bootCore(options);

  const stream = ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>,
  );
  const connection = dlineAgent(app).connect(stream);
  void connection.closed.then(() => lifecycle.stop("stdin closed"));
  lifecycle.setCloser(() => connection.close());
  // A write to a closed stdout (the editor died) must end the process, not crash it.
  process.stdout.on("error", () => void lifecycle.stop("stdout closed"));
  logger.info("acp agent ready", { version: SERVER_VERSION, dataRoot: app.roots.dataRoot });
}
