/**
 * `dline-core acp`: the same core (createApp: storage roots, settings, tasks, checkpoints,
 * runtime, lifecycle) speaking the Agent Client Protocol on stdin/stdout. stdout carries the
 * protocol only: logs go to stderr and the log file. The process exits when stdin closes (the
 * editor went away; the requests it had sent are answered first) or on SIGTERM/SIGINT/SIGHUP,
 * after flushing; a prompt running then leaves its task interrupted, resumable from any client.
 */
import { bootCore } from "../boot.js";
import { routeConsoleToLog } from "../logging/console-to-log.js";
import type { LogLevel } from "../logging/logger.js";
import { SERVER_VERSION } from "../version.js";
import { dlineAgent } from "./dline-agent.js";
import { stdioStream } from "./stdio-stream.js";

export interface AcpOptions {
  logLevel: LogLevel;
  remoteConfig: string | undefined;
}

export async function runAcp(options: AcpOptions): Promise<void> {
  const { app, logger, lifecycle } = await bootCore(options);
  routeConsoleToLog(logger.child("acp"));

  const stream = stdioStream(process.stdin, process.stdout);
  const connection = dlineAgent(app).connect(stream);
  void connection.closed.then(() => lifecycle.stop("stdin closed"));
  lifecycle.setCloser(() => connection.close());
  // A write to a closed stdout (the editor died) must end the process, not crash it.
  process.stdout.on("error", () => void lifecycle.stop("stdout closed"));
  logger.info("acp agent ready", { version: SERVER_VERSION, dataRoot: app.roots.dataRoot });
}
