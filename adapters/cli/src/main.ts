import { Code, ConnectError } from "@connectrpc/connect";
import { checkFlags, checkPositionals, parseArgs, UsageError } from "./args.js";
import { capabilitiesCommand } from "./commands/capabilities.js";
import { checkpointsCommand, compareCommand, restoreCommand } from "./commands/checkpoints.js";
import { formatDoctor, runDoctor } from "./commands/doctor.js";
import { deleteCommand, historyCommand, showCommand } from "./commands/history.js";
import { importClineCommand } from "./commands/import-cline.js";
import { profileCommand } from "./commands/profile.js";
import { settingsCommand } from "./commands/settings.js";
import { followCommand, resumeCommand, taskCommand } from "./commands/task.js";
import { VALUE_FLAGS } from "./flags.js";
import { helpFor, USAGE } from "./help.js";
import type { EarlySidecar } from "./early-sidecar.js";
import { printJson, withSidecar, type CliContext } from "./session.js";

declare const DLINE_VERSION: string | undefined;
const CLI_VERSION = typeof DLINE_VERSION === "string" ? DLINE_VERSION : "0.0.0-dev";

/** The command being run (set by main), for what a closed output means (see the EPIPE handler below). */
let runningCommand: string | undefined;
const RUNS_A_TASK = new Set(["task", "resume"]);

async function main(argv: string[], early: EarlySidecar): Promise<number> {
  const args = parseArgs(argv, VALUE_FLAGS);
  const core = args.flags.get("core");
  const json = args.flags.has("json");
  args.flags.delete("core");
  args.flags.delete("json");
  const ctx: CliContext = {
    core: typeof core === "string" ? core : undefined,
    json,
    cliVersion: CLI_VERSION,
    out: process.stdout,
    err: process.stderr,
    interactive: Boolean(process.stdin.isTTY),
    early,
  };
  if (args.flags.has("version") && args.positionals.length === 0) args.positionals.push("version");
  const wantsHelp = args.flags.has("help");
  if (wantsHelp && args.positionals.length === 0) args.positionals.push("help");
  args.flags.delete("version");
  args.flags.delete("help");
  const [command, ...rest] = args.positionals;
  runningCommand = command;
  // `dline COMMAND --help` prints that command's own help and runs nothing.
  if (wantsHelp && command !== "help") {
    const help = helpFor(command);
    if (help === undefined) throw new UsageError(`unknown command "${command}".`);
    ctx.out.write(help);
    return 0;
  }
  const sub = { positionals: rest, flags: args.flags };
  if (command === "version" || command === "doctor") {
    checkFlags(sub, []);
    checkPositionals(sub, 0);
  }
  switch (command) {
    case "version":
      if (json) printJson(ctx, { version: CLI_VERSION });
      else ctx.out.write(`dline ${CLI_VERSION}\n`);
      return 0;
    case "doctor": {
      const report = await withSidecar(ctx, (clients, corePath) => runDoctor(clients, corePath, CLI_VERSION));
      ctx.out.write(json ? JSON.stringify(report, null, 2) + "\n" : formatDoctor(report));
      return report.missing.length ? 1 : 0;
    }
    case "task":
      return taskCommand(ctx, sub);
    case "resume":
      return resumeCommand(ctx, sub);
    case "follow":
      return followCommand(ctx, sub);
    case "history":
      return historyCommand(ctx, sub);
    case "show":
      return showCommand(ctx, sub);
    case "delete":
      return deleteCommand(ctx, sub);
    case "checkpoints":
      return checkpointsCommand(ctx, sub);
    case "compare":
      return compareCommand(ctx, sub);
    case "restore":
      return restoreCommand(ctx, sub);
    case "settings":
      return settingsCommand(ctx, sub);
    case "profile":
      return profileCommand(ctx, sub);
    case "import-cline":
      return importClineCommand(ctx, sub);
    case "capabilities":
      return capabilitiesCommand(ctx, sub);
    case undefined:
      ctx.out.write(USAGE);
      return 2;
    case "help": {
      // `dline help COMMAND`: that command's help, as `dline COMMAND --help`.
      checkFlags(sub, []);
      checkPositionals(sub, 1);
      const help = helpFor(rest[0]);
      if (help === undefined) throw new UsageError(`unknown command "${rest[0]}".`);
      ctx.out.write(help);
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}".`);
  }
}

/** Runs the command line `argv` and exits with its code; `early` is the sidecar bin.ts started. */
export function runCli(argv: string[], early: EarlySidecar): void {
  // A reader that goes away early (`dline checkpoints ID | head -1`) ends the output, not the
  // command with a stack. A task's run ends with it (its sidecar stops, the task is interrupted):
  // that is no success, so it exits 141 as a process killed by SIGPIPE does (`set -o pipefail`
  // sees it).
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
      if (!RUNS_A_TASK.has(runningCommand ?? "")) process.exit(0);
      if (stream === process.stdout) {
        try {
          process.stderr.write(
            "dline: the output was closed before the task ended; it is interrupted (dline resume continues it)\n",
          );
        } catch {
          // stderr is gone too.
        }
      }
      process.exit(141);
    });
  }
  // With --json, an error is one JSON line on stderr ({"error":{"code","message"}}), so that a
  // script reads it as it reads the answers; stdout stays what the command printed before it.
  const jsonErrors = argv.includes("--json");
  main(argv, early).then(
    (code) => exitWhenWritten(code),
    (err: unknown) => {
      const codeName = (c: Code) => Code[c].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
      const code =
        err instanceof UsageError ? "invalid_argument" : err instanceof ConnectError ? codeName(err.code) : "unknown";
      const message = err instanceof ConnectError ? err.rawMessage : err instanceof Error ? err.message : String(err);
      if (jsonErrors) process.stderr.write(`${JSON.stringify({ error: { code, message } })}\n`);
      else if (err instanceof UsageError) process.stderr.write(`dline: ${message}\n\n${USAGE}`);
      else process.stderr.write(`dline: ${err instanceof ConnectError ? `${code}: ${message}` : message}\n`);
      exitWhenWritten(err instanceof UsageError ? 2 : 1);
    },
  );
}

/**
 * Exits once what was written is out: to a pipe, stdout is written asynchronously, and exiting
 * at once cut a reader that was slow to read (`dline --json checkpoints T | (sleep 1; wc -c)`
 * got 65,536 of 372,192 bytes).
 */
function exitWhenWritten(code: number): void {
  const waiting = [process.stdout, process.stderr].filter((s) => s.writableLength > 0);
  if (!waiting.length) process.exit(code);
  let left = waiting.length;
  for (const stream of waiting) stream.once("drain", () => --left === 0 && process.exit(code));
}
