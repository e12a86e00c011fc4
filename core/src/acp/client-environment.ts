/**
 * The tools' file and terminal I/O routed through an ACP client: read_file and replace_in_file
 * read what the editor shows (unsaved buffers included), write_to_file and replace_in_file
 * write through the editor, execute_command runs in the editor's own terminal. Only what the
 * client advertised in `initialize` is used; the rest stays local.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { methods, type AgentContext, type ClientCapabilities } from "@agentclientprotocol/sdk";
import {
  defaultCommandTimeoutMs,
  type CommandOutcome,
  type ToolContext,
  type ToolEnvironment,
  type ToolResult,
} from "../agent/index.js";
import { mkdirPrivate, PRIVATE_FILE_MODE } from "../storage/index.js";

/** The output a terminal keeps for us; the model gets at most its tail (as with local commands). */
const OUTPUT_BYTE_LIMIT = 256 * 1024;
const MAX_MODEL_OUTPUT_CHARS = 64 * 1024;
const POLL_MS = 250;
/** After a kill, how long the command may take to exit before the call ends without it. */
const KILL_GRACE_MS = 1_000;

export interface ClientEnvironmentOptions {
  client: AgentContext;
  capabilities: ClientCapabilities | undefined;
  sessionId: string;
  /** A command of tool call `toolCallId` runs in terminal `terminalId` (the session shows it in the call). */
  onTerminal(toolCallId: string, terminalId: string): Promise<void> | void;
}

/** Returns undefined when the client offers neither file nor terminal access. */
export function clientEnvironment(o: ClientEnvironmentOptions): ToolEnvironment | undefined {
  const caps = o.capabilities;
  const environment: ToolEnvironment = {};
  if (caps?.fs?.readTextFile) {
    environment.readTextFile = async (absolutePath, signal) =>
      (
        await o.client.request(
          methods.client.fs.readTextFile,
          { sessionId: o.sessionId, path: absolutePath },
          { cancellationSignal: signal, stopWaitingOnCancel: true },
        )
      ).content;
  }
  if (caps?.fs?.writeTextFile) {
    environment.writeTextFile = async (absolutePath, content, signal) => {
      await o.client.request(
        methods.client.fs.writeTextFile,
        { sessionId: o.sessionId, path: absolutePath, content },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      );
    };
  }
  if (caps?.terminal) environment.runCommand = (command, ctx) => runInClientTerminal(o, command, ctx);
  return Object.keys(environment).length > 0 ? environment : undefined;
}

async function runInClientTerminal(
  o: ClientEnvironmentOptions,
  command: string,
  ctx: ToolContext,
): Promise<ToolResult> {
  const shell = ctx.shell ?? process.env.SHELL ?? "/bin/sh";
  const terminal = await o.client.createTerminal({
    sessionId: o.sessionId,
    command: shell,
    args: ["-c", command],
    cwd: ctx.workspaceRoot,
    outputByteLimit: OUTPUT_BYTE_LIMIT,
  });
  let log: fs.WriteStream | undefined;
  if (ctx.commandLogPath) {
    mkdirPrivate(path.dirname(ctx.commandLogPath));
    log = fs.createWriteStream(ctx.commandLogPath, { flags: "a", mode: PRIVATE_FILE_MODE });
    log.on("error", () => {
      log = undefined;
    });
    log.write(`$ ${command}\n`);
  }
  // Output goes to the task's stream (other editors following the task) as it grows.
  let sent = "";
  const forward = (output: string) => {
    if (output.length > sent.length && output.startsWith(sent)) {
      // Stored secrets never reach the task's stream or the log (the result is redacted by runTool).
      const chunk = ctx.guard.redact(output.slice(sent.length));
      ctx.onOutput?.(chunk);
      log?.write(chunk);
    }
    sent = output;
  };
  let timedOut = false;
  let cancelled = false;
  // A terminal whose command does not exit when killed (it ignores the signal, or the client
  // does not kill it) is waited for only a short grace: then the call ends without it.
  let giveUp: () => void = () => {};
  const givenUp = new Promise<undefined>((resolve) => (giveUp = () => resolve(undefined)));
  let graceTimer: NodeJS.Timeout | undefined;
  const kill = () => {
    void terminal.kill().catch(() => {});
    graceTimer ??= setTimeout(giveUp, KILL_GRACE_MS);
  };
  const onAbort = () => {
    cancelled = true;
    kill();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, ctx.commandTimeoutMs ?? defaultCommandTimeoutMs);
  if (ctx.signal.aborted) onAbort();
  else ctx.signal.addEventListener("abort", onAbort, { once: true });
  let polling = true;
  const poller = (async () => {
    while (polling) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      if (!polling) break;
      const out = await terminal.currentOutput().catch(() => undefined);
      if (out) forward(out.output);
    }
  })();
  try {
    // Not awaited: showing the terminal in the tool call must never hold the command up.
    if (ctx.toolCallId) void Promise.resolve(o.onTerminal(ctx.toolCallId, terminal.id)).catch(() => {});
    const exit = await Promise.race([terminal.waitForExit(), givenUp]);
    polling = false;
    if (!exit) {
      // Killed and still running: the output so far (if the client still answers), and no exit status.
      const outcome: CommandOutcome = { exitCode: null, signal: null, timedOut, cancelled };
      return commandResult(sent, false, outcome, ctx.commandTimeoutMs ?? defaultCommandTimeoutMs);
    }
    await poller;
    const final = await terminal.currentOutput();
    forward(final.output);
    const outcome: CommandOutcome = {
      exitCode: exit.exitCode ?? null,
      signal: exit.signal ?? null,
      timedOut,
      cancelled,
    };
    return commandResult(final.output, final.truncated, outcome, ctx.commandTimeoutMs ?? defaultCommandTimeoutMs);
  } finally {
    polling = false;
    clearTimeout(timer);
    clearTimeout(graceTimer);
    ctx.signal.removeEventListener("abort", onAbort);
    // Released in the background: a client that does not answer must not hold the call.
    void Promise.race([terminal.release(), new Promise((r) => setTimeout(r, KILL_GRACE_MS).unref())]).catch(() => {});
    const openLog = log;
    if (openLog) await new Promise<void>((resolve) => openLog.end(resolve));
  }
}

/** The model's view of a finished command, worded as for a local run. */
function commandResult(output: string, truncated: boolean, outcome: CommandOutcome, timeoutMs: number): ToolResult {
  let shown = output.length > MAX_MODEL_OUTPUT_CHARS ? output.slice(output.length - MAX_MODEL_OUTPUT_CHARS) : output;
  if (truncated || shown.length < output.length) shown = `[earlier output omitted]\n${shown}`;
  const status = outcome.cancelled
    ? "The command was cancelled."
    : outcome.timedOut
      ? `The command timed out after ${Math.round(timeoutMs / 1000)} s and was killed.`
      : outcome.exitCode !== null
        ? `Exit code: ${outcome.exitCode}`
        : `The command was killed by ${outcome.signal ?? "a signal"}.`;
  return {
    content: `${shown ? `Output:\n${shown}${shown.endsWith("\n") ? "" : "\n"}` : "No output.\n"}${status}`,
    isError: outcome.cancelled || outcome.timedOut || outcome.exitCode !== 0,
    command: outcome,
  };
}
