/**
 * execute_command: runs the command in a shell that leads its own process group (detached),
 * so that a timeout or a Cancel can kill the shell and everything it started (SIGTERM to the
 * group, SIGKILL after a grace period). Output streams to ctx.onOutput and is appended to
 * ctx.commandLogPath; the model gets the output (its tail when long) and the exit code.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { optionalBoolean, requireNonEmptyString } from "./input.js";
import type { CommandOutcome, ToolContext, ToolDefinition, ToolResult } from "./types.js";

export const defaultCommandTimeoutMs = 10 * 60_000;
const killGraceMs = 2_000;
/** After the shell exits, wait this long for its output pipes (a background child may hold them). */
const drainGraceMs = 300;
const maxModelOutputChars = 64 * 1024;

export const executeCommandTool: ToolDefinition = {
  name: "execute_command",
  description:
    "Run a shell command in the workspace folder and return its output and exit code. Set requires_approval to true for commands with side effects " +
    "(installing, deleting, changing system state, network access), false for safe ones (reading, building, running tests).",
  inputSchema: {
    type: "object",
    properties: {
      command: { type: "string", description: "The command line to run." },
      requires_approval: { type: "boolean", description: "Whether the command may have side effects and needs the person's approval." },
    },
    required: ["command", "requires_approval"],
  },
  readOnly: false,
  // A missing flag counts as "requires approval": the safe default.
  approvalCategory: (input) => (optionalBoolean(input, "requires_approval", "execute_command", true) ? "executeAllCommands" : "executeSafeCommands"),
  async execute(input, ctx) {
    const command = requireNonEmptyString(input, "command", "execute_command");
    // In the host editor's terminal when it offers one.
    if (ctx.environment?.runCommand) return ctx.environment.runCommand(command, ctx);
    return runCommand(command, ctx);
  },
};

export async function runCommand(command: string, ctx: ToolContext): Promise<ToolResult> {
  let log: fs.WriteStream | undefined;
  if (ctx.commandLogPath) {
    fs.mkdirSync(path.dirname(ctx.commandLogPath), { recursive: true });
    log = fs.createWriteStream(ctx.commandLogPath, { flags: "a" });
    // A log that cannot be written must not take the command (or the sidecar) down.
    log.on("error", () => {
      log = undefined;
    });
    log.write(`$ ${command}\n`);
  }
  const tail = new OutputTail(maxModelOutputChars);
  const emit = (chunk: string) => {
    tail.push(chunk);
    log?.write(chunk);
    ctx.onOutput?.(chunk);
  };

  const outcome = await new Promise<CommandOutcome>((resolve) => {
    const shell = ctx.shell ?? process.env.SHELL ?? "/bin/sh";
    const child = spawn(shell, ["-c", command], { cwd: ctx.workspaceRoot, detached: true, stdio: ["ignore", "pipe", "pipe"], env: process.env });
    let timedOut = false;
    let cancelled = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = () => {
      signalGroup(child.pid, "SIGTERM");
      killTimer ??= setTimeout(() => signalGroup(child.pid, "SIGKILL"), killGraceMs);
    };
    const timeout = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, ctx.commandTimeoutMs ?? defaultCommandTimeoutMs);
    const onAbort = () => {
      cancelled = true;
      killGroup();
    };
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener("abort", onAbort, { once: true });

    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", emit);
    child.stderr.on("data", emit);

    const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      ctx.signal.removeEventListener("abort", onAbort);
      // If we killed the group, make sure nothing of it survives the TERM grace period.
      if (timedOut || cancelled) {
        if (killTimer) clearTimeout(killTimer);
        signalGroup(child.pid, "SIGKILL");
      }
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ exitCode, signal, timedOut, cancelled });
    };
    child.on("error", (err) => {
      emit(`${err.message}\n`);
      finish(null, null);
    });
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.on("exit", (code, signal) => {
      exited = { code, signal };
      setTimeout(() => finish(code, signal), drainGraceMs);
    });
    child.on("close", () => {
      if (exited) finish(exited.code, exited.signal);
    });
  });

  const openLog = log as fs.WriteStream | undefined;
  if (openLog) await new Promise<void>((resolve) => openLog.end(resolve));
  const output = tail.text();
  const status = outcome.cancelled
    ? "The command was cancelled."
    : outcome.timedOut
      ? `The command timed out after ${Math.round((ctx.commandTimeoutMs ?? defaultCommandTimeoutMs) / 1000)} s and was killed.`
      : outcome.exitCode !== null
        ? `Exit code: ${outcome.exitCode}`
        : `The command was killed by ${outcome.signal ?? "a signal"}.`;
  return {
    content: `${output ? `Output:\n${output}${output.endsWith("\n") ? "" : "\n"}` : "No output.\n"}${status}`,
    isError: outcome.cancelled || outcome.timedOut || outcome.exitCode !== 0,
    command: outcome,
  };
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

/** Keeps the last `max` characters of the output, remembering how much was dropped. */
class OutputTail {
  private chunks: string[] = [];
  private length = 0;
  private dropped = 0;

  constructor(private readonly max: number) {}

  push(chunk: string): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
    while (this.length > this.max && this.chunks.length > 1) {
      const first = this.chunks.shift()!;
      this.length -= first.length;
      this.dropped += first.length;
    }
  }

  text(): string {
    let text = this.chunks.join("");
    if (text.length > this.max) {
      this.dropped += text.length - this.max;
      text = text.slice(text.length - this.max);
    }
    return this.dropped > 0 ? `[${this.dropped} earlier characters omitted]\n${text}` : text;
  }
}
