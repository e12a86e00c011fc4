import { loadAcp } from "./acp/load.js";
import * as fs from "node:fs";
import * as path from "node:path";
import type { App } from "./app.js";
import { appLoader, startBaseResolving, type Base } from "./boot.js";
import { DlineError } from "./errors.js";
import { writeToStdio } from "./logging/stdio.js";
import type { LogLevel, Logger } from "./logging/logger.js";
import { gitVersionProbe } from "./git-version.js";
import { RPC_READ_MAX_BYTES } from "./rpc/limits.js";
import { SystemCalls } from "./rpc/system-calls.js";
import { systemEarlyAnswers } from "./rpc/system-early.js";
import { bearerAuthorizer } from "./server/bearer.js";
import { DeferredHandler } from "./server/deferred-handler.js";
import { EarlyFront } from "./server/early-front.js";
import { parseListen, type ListenTarget } from "./server/listen.js";
import { generateToken } from "./server/token.js";
import { unauthenticatedBound } from "./server/unauthenticated.js";
import { PROTOCOL_VERSION, SERVER_VERSION, versionLine } from "./version.js";

/**
 * Connections open at once that have not shown the token yet (after a grace to send their first
 * request); past this the oldest is closed (server/unauthenticated.ts).
 */
const MAX_UNAUTHENTICATED_CONNECTIONS = 64;
/** A peer gets this long to send a request's headers (node:http's headersTimeout, and the early front's). */
const HEADERS_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_TIMEOUT_MS = 60_000;
/** node:http's limit on a request's head (its default maxHeaderSize). */
const HEAD_MAX_BYTES = 16 * 1024;
/** Initialize and Health bodies are a few hundred bytes; a larger one is read by node:http and connect. */
const EARLY_BODY_MAX_BYTES = 64 * 1024;

const USAGE = `Usage: dline-core <command> [options]

Commands:
  serve       Start the sidecar: prints one JSON handshake line on stdout, serves Connect RPC.
  acp         Run as an Agent Client Protocol agent on stdin/stdout (Zed, JetBrains, Neovim...).
  --version   Print the version and exit.
  help        Print this help.

Run "dline-core serve --help" for the serve options.
`;

const SERVE_USAGE = `Usage: dline-core serve [--listen 127.0.0.1:0 | --listen unix:PATH] [--log-level LEVEL]
                        [--remote-config FILE] [--workspace DIR] [--one-command]

Starts the Dline core sidecar. It binds loopback only, creates a fresh bearer token, and prints
exactly one line on stdout:
  {"dline":"ready","protocol":${PROTOCOL_VERSION},"version":"...","url":"http://127.0.0.1:PORT","token":"...","pid":N}
Every RPC needs "Authorization: Bearer <token>". The sidecar exits when its stdin closes, on
SIGTERM/SIGINT, or on SystemService.Shutdown, after flushing its state. Logs go to stderr and
to <resource home>/logs/dline-core.log.

Options:
  --listen ADDR         127.0.0.1:PORT, [::1]:PORT or unix:PATH (default 127.0.0.1:0: a free port).
  --log-level LEVEL     debug, info, warn or error (default info).
  --remote-config FILE  Remote configuration (JSON) that wins over every other setting source;
                        also read from DLINE_REMOTE_CONFIG.
  --workspace DIR       The folder the client's first task will run in: the services load and
                        that folder's checkpoints get ready while the client connects, instead
                        of when the task starts (the CLI passes it for \`dline task\`).
  --one-command         The client stops the sidecar after one command, as the CLI does: no
                        work is begun for a later task (an editor's sidecar watches the
                        workspace once a task is complete, for the next task's checkpoint).

Environment: DLINE_DIR, DLINE_HOME_DIR, DLINE_DOCS_DIR override the three storage roots.
`;

interface ServeOptions {
  listen: ListenTarget;
  logLevel: LogLevel;
  remoteConfig: string | undefined;
  /** The folder the client's first task runs in (see SERVE_USAGE). */
  workspace: string | undefined;
  /** The sidecar serves one command and is stopped (see SERVE_USAGE). */
  oneCommand: boolean;
}

function parseServeArgs(args: string[]): ServeOptions | "help" {
  const options: ServeOptions = {
    listen: parseListen("127.0.0.1:0"),
    logLevel: "info",
    remoteConfig: undefined,
    workspace: undefined,
    oneCommand: false,
  };
  // One iterator for the loop and for value(): a flag that takes a value consumes the next argument.
  const rest = args.values();
  for (const arg of rest) {
    const [flag, inline] = arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    const value = () => {
      const v = inline ?? rest.next().value;
      if (v === undefined) throw new DlineError("invalid_argument", `${flag} needs a value.`);
      return v;
    };
    switch (flag) {
      case "-h":
      case "--help":
        return "help";
      case "--listen":
        options.listen = parseListen(value());
        break;
      case "--log-level": {
        const level = value();
        if (!["debug", "info", "warn", "error"].includes(level)) {
          throw new DlineError("invalid_argument", `--log-level ${level}: expected debug, info, warn or error.`);
        }
        options.logLevel = level as LogLevel;
        break;
      }
      case "--remote-config":
        options.remoteConfig = value();
        break;
      case "--workspace":
        options.workspace = value();
        break;
      case "--one-command":
        if (inline !== undefined) throw new DlineError("invalid_argument", "--one-command takes no value.");
        options.oneCommand = true;
        break;
      default:
        throw new DlineError("invalid_argument", `Unknown option ${arg}. Run "dline-core serve --help".`);
    }
  }
  return options;
}

/**
 * Start-up does the least that lets the editor connect: the log, the token and the listening
 * socket, then the handshake line (the roots are resolved meanwhile). The editor's first calls,
 * Initialize and Health, are answered without connect and protobuf-es (rpc/system-early.ts);
 * those load with the first call that needs them, and the domain modules with the first call
 * that needs them (rpc/services.ts).
 */
async function serve(options: ServeOptions): Promise<void> {
  const starting = startBaseResolving(options);
  const { logger, lifecycle } = starting;
  // Finding the roots cannot fail (the Documents lookup falls back to ~/Documents); if it did,
  // every call would answer unavailable and the log would say why.
  starting.roots.catch((err: unknown) =>
    logger.error("cannot resolve the storage roots", { error: (err as Error).message }),
  );

  const token = generateToken();
  // One SystemService for the early answers and connect's: the same answers, one git probe.
  const system = new SystemCalls({
    roots: starting.roots,
    lifecycle,
    logger: logger.child("system"),
    logFile: starting.logFile,
    startedAt: starting.startedAt,
    gitVersion: gitVersionProbe(starting.env),
  });
  const earlyAnswers = systemEarlyAnswers(system, bearerAuthorizer(token));
  const base = starting.roots.then((roots): Base => ({ ...starting, roots }));
  // The domain modules load with the first call that needs them (boot.ts), or at once for a
  // client that named the folder of its first task.
  const loader = base.then((b) => appLoader(b));
  // Roots that cannot be found are logged above; every call then answers unavailable.
  loader.catch(() => undefined);
  const app = async (): Promise<App> => (await loader)();
  // Connect, protobuf and the services load with the first call that needs them (rpc/rpc-handler.ts).
  const rpc = new DeferredHandler(
    async () => (await import("./rpc/rpc-handler.js")).createRpcHandler(await base, token, system, app),
    (reason) => logger.error("cannot start the RPC services", { error: (reason as Error)?.message }),
    { answers: earlyAnswers, readMaxBytes: RPC_READ_MAX_BYTES },
  );
  // Those without the token are bounded (server/unauthenticated.ts), wherever they are read.
  const bound = unauthenticatedBound({ max: MAX_UNAUTHENTICATED_CONNECTIONS });
  // node:http loads with the first call the front does not answer (server/early-front.ts).
  const front = new EarlyFront({
    answers: earlyAnswers,
    limits: { headBytes: HEAD_MAX_BYTES, bodyBytes: EARLY_BODY_MAX_BYTES },
    headersTimeoutMs: HEADERS_TIMEOUT_MS,
    keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
    onConnection: bound,
    async createHttpServer() {
      // Not `import()`: the bundle keeps a dynamic import of a built-in as one, which the
      // single executable's main script (a vm.Script) cannot run.
      const http = process.getBuiltinModule("node:http");
      const server = http.createServer(
        {
          keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
          noDelay: true,
          headersTimeout: HEADERS_TIMEOUT_MS,
          requestTimeout: 60_000,
        },
        rpc.handle,
      );
      server.on("connection", bound);
      return server;
    },
  });
  const url = await front.listen(options.listen);
  // Streams end with the lifecycle signal; whatever is left is cut after a short grace.
  lifecycle.setCloser(() => front.close(200));

  const handshake = {
    dline: "ready",
    protocol: PROTOCOL_VERSION,
    version: SERVER_VERSION,
    url,
    token,
    pid: process.pid,
  };
  writeToStdio(1, JSON.stringify(handshake) + "\n");
  // A task is about to start in that folder: its first checkpoint's scan of the workspace runs
  // while the client connects, initializes and asks for the task (and while connect and the
  // services load), not after.
  if (options.workspace) readyWorkspace(app, options.workspace, rpc, logger);
  // After the editor's first call if it is already there: creating process.stdin (a socket over
  // the pipe) and the log line take about a millisecond, which its answer does not wait for.
  setImmediate(() => {
    process.stdin.on("end", () => void lifecycle.stop("stdin closed"));
    process.stdin.on("error", () => void lifecycle.stop("stdin error"));
    process.stdin.resume();
    starting.roots.then(
      (roots) =>
        logger.info("serving", {
          url,
          version: SERVER_VERSION,
          dataRoot: roots.dataRoot,
          documentsRoot: roots.documentsRoot,
        }),
      () => {},
    );
  });
}

/** Loads the app and readies the checkpoints of `workspace` (errors are the task's to report). */
function readyWorkspace(app: () => Promise<App>, workspace: string, rpc: DeferredHandler, logger: Logger): void {
  setImmediate(() => {
    app().then(
      (loaded) => {
        // A folder that is not there is the task's to refuse (with its own answer).
        const root = path.resolve(workspace);
        if (fs.statSync(root, { throwIfNoEntry: false })?.isDirectory()) loaded.checkpoints.prepareWorkspace(root);
      },
      (err: unknown) => logger.warn("cannot ready the workspace", { error: (err as Error).message }),
    );
    // The services the client calls next load meanwhile.
    rpc.start().catch(() => undefined);
  });
}

/** Inside a SEA, argv[0] and argv[1] are both the executable; from sources argv[1] is the script. */
function userArgs(): string[] {
  return process.argv.slice(2);
}

async function main(args = userArgs()): Promise<void> {
  const [command, ...rest] = args;
  if (command === "--version" || command === "-v" || command === "version") {
    process.stdout.write(`${versionLine()}\n`);
    return;
  }
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(USAGE);
    if (command === undefined) process.exitCode = 2;
    return;
  }
  if (command === "acp") {
    // Same options as serve, minus --listen: stdin/stdout are the protocol channel.
    if (rest.some((a) => a === "--listen" || a.startsWith("--listen="))) {
      throw new DlineError("invalid_argument", "dline-core acp speaks on stdin/stdout: --listen does not apply.");
    }
    if (rest.some((a) => a === "--workspace" || a.startsWith("--workspace="))) {
      throw new DlineError(
        "invalid_argument",
        "dline-core acp learns its folders from session/new: --workspace does not apply.",
      );
    }
    if (rest.some((a) => a === "--one-command" || a.startsWith("--one-command="))) {
      throw new DlineError(
        "invalid_argument",
        "dline-core acp serves its editor for as long as it runs: --one-command does not apply.",
      );
    }
    const options = parseServeArgs(rest);
    if (options === "help") {
      process.stdout.write("Usage: dline-core acp [--log-level LEVEL] [--remote-config FILE]\n");
      return;
    }
    // Loaded only here: the ACP SDK and its schemas stay off `serve`'s start-up path.
    const { runAcp } = await loadAcp();
    await runAcp({ logLevel: options.logLevel, remoteConfig: options.remoteConfig });
    return;
  }
  if (command !== "serve") {
    process.stderr.write(`dline-core: unknown command "${command}".\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const options = parseServeArgs(rest);
  if (options === "help") {
    process.stdout.write(SERVE_USAGE);
    return;
  }
  await serve(options);
}

function run(): void {
  main().catch((err: unknown) => {
    process.stderr.write(`dline-core: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof DlineError && err.code === "invalid_argument" ? 2 : 1);
  });
}

run();
