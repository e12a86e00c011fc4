/**
 * `dline-core acp`: the same core (createApp: storage roots, settings, tasks, checkpoints,
 * runtime, lifecycle) speaking the Agent Client Protocol on stdin/stdout. stdout carries the
 * protocol only: logs go to stderr and the log file. The process exits when stdin closes (the
 * editor went away) or on SIGTERM/SIGINT/SIGHUP, after flushing; a prompt running then leaves
 * its task interrupted, resumable from any client.
 */
import { Readable, Writable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import { createApp } from "../app.js";
import { Lifecycle } from "../lifecycle.js";
import { createLogger, FileAndStderrSink, type LogLevel } from "../logging/logger.js";
import { InstanceLayout } from "../storage/instance-layout.js";
import { resolveStorageRoots } from "../storage/roots.js";
import { SERVER_VERSION } from "../version.js";
import { dlineAgent } from "./dline-agent.js";

export interface AcpOptions {
  logLevel: LogLevel;
  remoteConfig: string | undefined;
}

export async function runAcp(options: AcpOptions): Promise<void> {
  const env = { ...process.env };
  if (options.remoteConfig) env.DLINE_REMOTE_CONFIG = options.remoteConfig;
  const roots = await resolveStorageRoots(env);
  const logFile = new InstanceLayout(roots).coreLogFile;
  const sink = new FileAndStderrSink(logFile);
  const logger = createLogger(sink, options.logLevel);
  const lifecycle = new Lifecycle(logger, (code) => {
    sink.close();
    process.exit(code);
  });
  const app = await createApp({ roots, logger, logFile, lifecycle, env });

  const stream = ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>,
  );
  const connection = dlineAgent(app).connect(stream);
  void connection.closed.then(() => lifecycle.stop("stdin closed"));
  lifecycle.setCloser(() => connection.close());
  process.on("SIGTERM", () => void lifecycle.stop("SIGTERM"));
  process.on("SIGINT", () => void lifecycle.stop("SIGINT"));
  process.on("SIGHUP", () => void lifecycle.stop("SIGHUP"));
  // A write to a closed stdout (the editor died) must end the process, not crash it.
  process.stdout.on("error", () => void lifecycle.stop("stdout closed"));
  setImmediate(() => {
    try {
      app.sqlite.warm();
    } catch (err) {
      logger.error("cannot load the SQLite addon", { error: (err as Error).message });
    }
  });
  logger.info("acp agent ready", { version: SERVER_VERSION, dataRoot: roots.dataRoot });
}
