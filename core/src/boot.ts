import { createApp, type App } from "./app.js";
import { Lifecycle } from "./lifecycle.js";
import { createLogger, FileAndStderrSink, type LogLevel, type Logger } from "./logging/logger.js";
import { InstanceLayout } from "./storage/instance-layout.js";
import { resolveStorageRoots } from "./storage/roots.js";

export interface BootOptions {
  logLevel: LogLevel;
  remoteConfig: string | undefined;
}

export interface Booted {
  app: App;
  logger: Logger;
  lifecycle: Lifecycle;
}

/**
 * What every way of running the core starts with (`serve`, `acp`): the roots, the log (stderr
 * and the log file), the lifecycle that flushes and exits, and the app. Signals stop the
 * lifecycle; the SQLite addon is loaded just after start, off the start-up path.
 */
export async function bootCore(options: BootOptions): Promise<Booted> {
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
  process.on("SIGTERM", () => void lifecycle.stop("SIGTERM"));
  process.on("SIGINT", () => void lifecycle.stop("SIGINT"));
  process.on("SIGHUP", () => void lifecycle.stop("SIGHUP"));
  // Loaded once the editor's first calls (Initialize, Health) have had the process to
  // themselves; a call that needs SQLite before then loads it on the spot.
  setTimeout(() => {
    try {
      app.sqlite.warm();
      logger.info("sqlite addon loaded");
    } catch (err) {
      logger.error("cannot load the SQLite addon", { error: (err as Error).message });
    }
  }, 150).unref();
  return { app, logger, lifecycle };
}
