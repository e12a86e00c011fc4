import type { App } from "./app.js";
import { Lifecycle } from "./lifecycle.js";
import { createLogger, FileAndStderrSink, type LogLevel, type Logger } from "./logging/logger.js";
import { isDiskFull } from "./errors.js";
import { InstanceLayout } from "./storage/instance-layout.js";
import { getDlineHomePath, resolveStorageRoots, type StorageRoots } from "./storage/roots.js";

export interface BootOptions {
  logLevel: LogLevel;
  remoteConfig: string | undefined;
  /** The client stops this process after one command (the CLI's `serve --one-command`). */
  oneCommand?: boolean;
}

/** What is there before any domain module loads: enough to serve SystemService. */
export interface Base {
  roots: StorageRoots;
  logger: Logger;
  logFile: string;
  lifecycle: Lifecycle;
  env: NodeJS.ProcessEnv;
  startedAt: number;
  /** See BootOptions.oneCommand. */
  oneCommand: boolean;
}

export interface Booted {
  app: App;
  logger: Logger;
  lifecycle: Lifecycle;
}

/** `Base` while its roots are still being resolved (see `startBase`). */
export type StartingBase = Omit<Base, "roots"> & { roots: Promise<StorageRoots> };

/**
 * What every way of running the core starts with (`serve`, `acp`): the roots, the log (stderr
 * and the log file), and the lifecycle that flushes and exits; signals stop the lifecycle.
 * It loads none of the domain modules (storage, tasks, checkpoints...): see `appLoader`.
 * The roots may take a child process to find (the system Documents folder, when DLINE_DOCS_DIR
 * is not set), so they come as a promise: the sidecar listens and prints its handshake meanwhile.
 */
export function startBaseResolving(options: BootOptions): StartingBase {
  const startedAt = Date.now();
  const env = { ...process.env };
  if (options.remoteConfig) env.DLINE_REMOTE_CONFIG = options.remoteConfig;
  const roots = resolveStorageRoots(env);
  const logFile = InstanceLayout.coreLogFileIn(getDlineHomePath(env));
  const sink = new FileAndStderrSink(logFile);
  const logger = createLogger(sink, options.logLevel);
  const lifecycle = new Lifecycle(logger, (code) => {
    sink.close();
    process.exit(code);
  });
  guardAgainstDiskFull(logger);
  process.on("SIGTERM", () => void lifecycle.stop("SIGTERM"));
  process.on("SIGINT", () => void lifecycle.stop("SIGINT"));
  process.on("SIGHUP", () => void lifecycle.stop("SIGHUP"));
  return { roots, logger, logFile, lifecycle, env, startedAt, oneCommand: options.oneCommand ?? false };
}

/** `startBaseResolving`, once the roots are known. */
export async function startBase(options: BootOptions): Promise<Base> {
  const starting = startBaseResolving(options);
  return { ...starting, roots: await starting.roots };
}

/**
 * The domain modules and the app that wires them, loaded on first need: the first call of a
 * service other than SystemService, or right away for `acp`. Loading them is most of the
 * sidecar's start-up work and memory, so a sidecar that was only started and initialized has
 * not paid for it. A failed attempt is not remembered: the next call tries again.
 */
export function appLoader(base: Base): () => Promise<App> {
  let loading: Promise<App> | undefined;
  return () => {
    if (!loading) {
      const attempt = import("./app.js").then(({ createApp }) => createApp(base));
      loading = attempt;
      attempt.then(
        () => base.logger.info("domain modules loaded"),
        (err: unknown) => {
          base.logger.error("loading the domain modules failed", { error: (err as Error).message });
          if (loading === attempt) loading = undefined;
        },
      );
    }
    return loading;
  };
}

/** `startBase` and the app at once, for `acp`, which needs the app for its first message. */
export async function bootCore(options: BootOptions): Promise<Booted> {
  const base = await startBase(options);
  const app = await appLoader(base)();
  return { app, logger: base.logger, lifecycle: base.lifecycle };
}

/**
 * The last line of defence of "a full disk never ends the process": a write refused by a full
 * disk that escaped every handler (a timer's, a promise nobody awaited) is logged and the
 * sidecar keeps serving. Any other uncaught error still ends the process, as Node would.
 */
function guardAgainstDiskFull(logger: Logger): void {
  const onError = (kind: string) => (err: unknown) => {
    if (isDiskFull(err)) {
      logger.error(`${kind}: the disk is full`, {
        code: (err as NodeJS.ErrnoException).code,
        error: (err as Error).message,
      });
      return;
    }
    process.stderr.write(`dline-core: ${kind}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  };
  process.on("uncaughtException", onError("uncaught exception"));
  process.on("unhandledRejection", onError("unhandled rejection"));
}
