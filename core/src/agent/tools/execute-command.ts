/**
 * execute_command: runs the command in a shell that leads its own process group (detached),
 * so that a timeout or a Cancel can kill the shell and everything it started (SIGTERM to the
 * group, SIGKILL after a grace period), and so does the sidecar's death (leashed-spawn.ts). Output streams to ctx.onOutput and is appended to
 * ctx.commandLogPath; the model gets the output (its head and tail when long) and the exit code.
 * Whatever the command prints, memory stays bounded: the sidecar keeps the head and the tail,
 * streams at most `maxStreamedChars` to the task's events, and writes the rest only to the
 * command log (itself cut at `ctx.commandLogMaxBytes`, waiting for the disk when it lags).
 * Stored secrets are redacted before the output goes anywhere.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { spawnLeashed } from "./leashed-spawn.js";
import { optionalBoolean, requireNonEmptyString } from "./input.js";
import type { CommandOutcome, ToolContext, ToolDefinition, ToolResult } from "./types.js";

export const defaultCommandTimeoutMs = 10 * 60_000;
const killGraceMs = 2_000;
/** On Cancel the group gets less time: a cancelled task ends within 2 s, whatever its command does. */
const cancelKillGraceMs = 700;
/** After the shell exits, wait this long for its output pipes (a background child may hold them). */
const drainGraceMs = 300;
/** What the model (and the tool's result) gets of a long output: its start and its end. */
const headChars = 16 * 1024;
const tailChars = 48 * 1024;
/** Output streamed live to the task's events (kept in memory for the task's life); the rest is in the log. */
const maxStreamedChars = 256 * 1024;
/** A single command's log stops growing here (the folder's budget is enforced after the command too). */
const defaultLogMaxBytes = 200 * 1024 * 1024;

export const executeCommandTool: ToolDefinition = {
  name: "execute_command",
  description:
    "Run a shell command in the workspace folder and return its output and exit code. Set requires_approval to true for commands with side effects " +
    "(installing, deleting, changing system state, network access), false for safe ones (reading, building, running tests).",
  inputSchema: {
    type: "object",
    properties: {
      command: { type: "string", description: "The command line to run." },
      requires_approval: {
        type: "boolean",
        description: "Whether the command may have side effects and needs the person's approval.",
      },
    },
    required: ["command", "requires_approval"],
  },
  readOnly: false,
  // A missing flag counts as "requires approval": the safe default.
  // The model's requires_approval flag says a command is safe; one that chains, substitutes or
  // redirects (`ls; curl … | sh`, `$(…)`, `> file`) is never taken as safe on its word.
  approvalCategory: (input) =>
    optionalBoolean(input, "requires_approval", "execute_command", true) ||
    !isSingleCommand(typeof input.command === "string" ? input.command : "")
      ? "executeAllCommands"
      : "executeSafeCommands",
  async execute(input, ctx) {
    const command = requireNonEmptyString(input, "command", "execute_command");
    // In the host editor's terminal when it offers one.
    if (ctx.environment?.runCommand) return ctx.environment.runCommand(command, ctx);
    return runCommand(command, ctx);
  },
};

/** One command and its arguments: no `;`, `&`, `|`, backquote, `$(`, `<`, `>` or line break in it. */
export function isSingleCommand(command: string): boolean {
  return !/[;&|`<>\n\r]|\$\(/.test(command);
}

export async function runCommand(command: string, ctx: ToolContext): Promise<ToolResult> {
  const log = ctx.commandLogPath
    ? new BoundedLog(ctx.commandLogPath, ctx.commandLogMaxBytes ?? defaultLogMaxBytes)
    : undefined;
  log?.write(`$ ${command}\n`);
  const kept = new HeadAndTail(headChars, tailChars);
  const redactor = ctx.guard.redactStream();
  let streamed = 0;
  const pass = (text: string) => {
    if (!text) return;
    kept.push(text);
    log?.write(text);
    if (streamed >= maxStreamedChars) return;
    const room = maxStreamedChars - streamed;
    const part = text.length > room ? text.slice(0, room) : text;
    streamed += part.length;
    ctx.onOutput?.(part);
    if (streamed >= maxStreamedChars) {
      ctx.onOutput?.(
        `\n[Only the first ${maxStreamedChars} characters are shown while the command runs; the whole output goes to the command log.]\n`,
      );
    }
  };
  const emit = (chunk: string) => pass(redactor.push(chunk));

  const outcome = await new Promise<CommandOutcome>((resolve) => {
    const shell = ctx.shell ?? process.env.SHELL ?? "/bin/sh";
    const { child, release } = spawnLeashed(shell, ["-c", command], {
      cwd: ctx.workspaceRoot,
      env: ctx.guard.withoutSecrets(process.env),
      stdin: "ignore",
    });
    const stdout = child.stdout!;
    const stderr = child.stderr!;
    let timedOut = false;
    let cancelled = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (graceMs: number) => {
      signalGroup(child.pid, "SIGTERM");
      killTimer ??= setTimeout(() => signalGroup(child.pid, "SIGKILL"), graceMs);
    };
    const timeout = setTimeout(() => {
      timedOut = true;
      killGroup(killGraceMs);
    }, ctx.commandTimeoutMs ?? defaultCommandTimeoutMs);
    const onAbort = () => {
      cancelled = true;
      killGroup(cancelKillGraceMs);
    };
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener("abort", onAbort, { once: true });

    stdout.setEncoding("utf8");
    stderr.setEncoding("utf8");
    stdout.on("data", emit);
    stderr.on("data", emit);
    // A log that lags behind the command holds the command back instead of filling memory.
    log?.onBackpressure(
      () => {
        stdout.pause();
        stderr.pause();
      },
      () => {
        stdout.resume();
        stderr.resume();
      },
    );

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
      stdout.destroy();
      stderr.destroy();
      resolve({ exitCode, signal, timedOut, cancelled });
    };
    child.on("error", (err) => {
      emit(`${err.message}\n`);
      finish(null, null);
    });
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.on("exit", (code, signal) => {
      exited = { code, signal };
      release();
      setTimeout(() => finish(code, signal), drainGraceMs);
    });
    child.on("close", () => {
      if (exited) finish(exited.code, exited.signal);
    });
  });

  pass(redactor.end());
  await log?.end();
  const output = kept.text();
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

/** Keeps the first `headMax` and the last `tailMax` characters of the output, and how much was left out between them. */
class HeadAndTail {
  private head = "";
  private tail: string[] = [];
  private tailLength = 0;
  private omitted = 0;

  constructor(
    private readonly headMax: number,
    private readonly tailMax: number,
  ) {}

  push(chunk: string): void {
    let text = chunk;
    if (this.head.length < this.headMax) {
      const room = this.headMax - this.head.length;
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    if (!text) return;
    this.tail.push(text);
    this.tailLength += text.length;
    while (this.tailLength > this.tailMax && this.tail.length > 1) {
      const first = this.tail.shift()!;
      this.tailLength -= first.length;
      this.omitted += first.length;
    }
    if (this.tailLength > this.tailMax * 2) {
      // One chunk larger than the tail: keep its end only.
      const joined = this.tail.join("");
      this.omitted += joined.length - this.tailMax;
      this.tail = [joined.slice(joined.length - this.tailMax)];
      this.tailLength = this.tailMax;
    }
  }

  text(): string {
    let tail = this.tail.join("");
    let omitted = this.omitted;
    if (tail.length > this.tailMax) {
      omitted += tail.length - this.tailMax;
      tail = tail.slice(tail.length - this.tailMax);
    }
    return omitted > 0 ? `${this.head}\n[${omitted} characters omitted]\n${tail}` : this.head + tail;
  }
}

/**
 * The command's log file: appended to without holding the output in memory (a write that
 * lags tells the command to pause), cut with a note at `maxBytes`. A log that cannot be
 * written (a full disk) never takes the command, or the sidecar, down.
 */
class BoundedLog {
  private stream: fs.WriteStream | undefined;
  private written = 0;
  private cut = false;
  private pause: (() => void) | undefined;
  private resume: (() => void) | undefined;

  constructor(
    file: string,
    private readonly maxBytes: number,
  ) {
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      this.stream = fs.createWriteStream(file, { flags: "a", mode: 0o600 });
      this.stream.on("error", () => {
        this.stream = undefined;
        this.resume?.();
      });
      this.stream.on("drain", () => this.resume?.());
    } catch {
      this.stream = undefined;
    }
  }

  onBackpressure(pause: () => void, resume: () => void): void {
    this.pause = pause;
    this.resume = resume;
  }

  write(text: string): void {
    if (!this.stream || this.cut) return;
    const bytes = Buffer.byteLength(text);
    if (this.written + bytes > this.maxBytes) {
      this.cut = true;
      this.stream.write(`\n[The log stops here: it reached ${this.maxBytes} bytes.]\n`);
      return;
    }
    this.written += bytes;
    if (!this.stream.write(text)) this.pause?.();
  }

  end(): Promise<void> {
    const stream = this.stream;
    if (!stream) return Promise.resolve();
    return new Promise<void>((resolve) => {
      stream.once("error", () => resolve());
      stream.end(() => resolve());
    });
  }
}
