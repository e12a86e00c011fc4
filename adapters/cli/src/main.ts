import { Code, ConnectError } from "@connectrpc/connect";
import { checkFlags, checkPositionals, parseArgs, UsageError } from "./args.js";
import { capabilitiesCommand } from "./commands/capabilities.js";
import { checkpointsCommand, compareCommand, restoreCommand } from "./commands/checkpoints.js";
import { formatDoctor, runDoctor } from "./commands/doctor.js";
import { deleteCommand, historyCommand, showCommand } from "./commands/history.js";
import { IMPORT_CLINE_HELP, importClineCommand } from "./commands/import-cline.js";
import { profileCommand } from "./commands/profile.js";
import { settingsCommand } from "./commands/settings.js";
import { followCommand, resumeCommand, taskCommand } from "./commands/task.js";
import { printJson, withSidecar, type CliContext } from "./session.js";

declare const DLINE_VERSION: string | undefined;
const CLI_VERSION = typeof DLINE_VERSION === "string" ? DLINE_VERSION : "0.0.0-dev";

const USAGE = `Usage: dline [--core PATH] [--json] <command> [args]

Tasks:
  task "PROMPT" [--workspace DIR] [--profile ID] [--yes]   run a task, approving on the terminal
  resume TASK_ID [--message TEXT] [--workspace DIR] [--yes]   continue a task (--workspace: for one that has none)
  follow TASK_ID [--yes]                                   watch a running task (here or in another window) and answer it
  history [--workspace DIR] [--query TEXT] [--favorites] [--sort newest|oldest|cost] [--limit N]
  show TASK_ID                                             a task's messages
  delete TASK_ID... | --all | --all-except-favorites
  import-cline [--dry-run] [--all | SOURCE_KEY...]         list Cline tasks and sessions, or import them
Checkpoints:
  checkpoints TASK_ID
  compare TASK_ID CHECKPOINT_ID                            changes since the checkpoint
  restore TASK_ID CHECKPOINT_ID [--mode files-and-task|files|task]
      CHECKPOINT_ID: the id, or its first digits when no other checkpoint of the task starts so
Configuration:
  settings [get [KEY] | set KEY JSON] [--workspace DIR] [--task ID]
  profile add ID --provider anthropic|openai --model M [--base-url URL] [--api-key-env VAR] [--default]
      [--context-window N] [--max-output-tokens N] [--input-price P] [--output-price P] [--cache-read-price P]
      [--cache-write-price P] [--zero-cost] [--first-byte-timeout SECONDS] [--reasoning-effort low|medium|high]
      [--thinking-budget TOKENS] [--tool-format native|xml]          prices in US$ per million tokens
  profile list | profile rm ID
  capabilities [--workspace DIR] [--task ID] [--kind K] [--connect]   rules, workflows, skills, subagents, hooks, MCP servers
  capabilities enable|disable|inherit KIND RESOURCE [--scope global|workspace|task] [--workspace DIR] [--task ID]
  capabilities trust|untrust [--workspace DIR]   let the workspace's .agents/hooks and .agents/mcp servers run (or not)
Other:
  doctor      start the sidecar, print its versions and roots, and what is missing
  version

Questions (approvals, the model's questions) are asked on the terminal. Without one (stdin not a
terminal) and without --yes, task and resume stop the task at its first question (exit 1; resume
it on a terminal), and follow leaves questions to the window that runs the task.

Models from the environment (no profile needed): OPENAI_BASE_URL, OPENAI_MODEL, OPENAI_API_KEY
for any OpenAI-compatible endpoint, or ANTHROPIC_API_KEY.
Global options: --core PATH (the dline-core binary; default $DLINE_CORE or next to dline), --json.
`;

/** Help of its own for the commands that have more to say than their USAGE line. */
const COMMAND_HELP: Record<string, string> = { "import-cline": IMPORT_CLINE_HELP };

const VALUE_FLAGS = new Set([
  "core",
  "workspace",
  "profile",
  "query",
  "limit",
  "sort",
  "mode",
  "task",
  "message",
  "provider",
  "base-url",
  "model",
  "context-window",
  "input-price",
  "output-price",
  "api-key-env",
  "name",
  "cache-read-price",
  "cache-write-price",
  "max-output-tokens",
  "first-byte-timeout",
  "reasoning-effort",
  "thinking-budget",
  "tool-format",
  "kind",
  "scope",
]);

export /** The command being run (set by main), for what a closed output means (see the EPIPE handler below). */
let runningCommand: string | undefined;
const RUNS_A_TASK = new Set(["task", "resume"]);

async function main(argv: string[]): Promise<number> {
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
  };
  if (args.flags.has("version") && args.positionals.length === 0) args.positionals.push("version");
  const wantsHelp = args.flags.has("help");
  if (wantsHelp && args.positionals.length === 0) args.positionals.push("help");
  args.flags.delete("version");
  args.flags.delete("help");
  const [command, ...rest] = args.positionals;
  runningCommand = command;
  // `dline COMMAND --help` prints help and runs nothing.
  if (wantsHelp && command !== "help") {
    ctx.out.write(COMMAND_HELP[command ?? ""] ?? USAGE);
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
    case "help":
      ctx.out.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command "${command}".`);
  }
}

// A reader that goes away early (`dline checkpoints ID | head -1`) ends the output, not the command
// with a stack. A task's run ends with it (its sidecar stops, the task is interrupted): that is
// no success, so it exits 141 as a process killed by SIGPIPE does (`set -o pipefail` sees it).
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`dline: ${err.message}\n\n${USAGE}`);
      process.exit(2);
    }
    const codeName = (c: Code) => Code[c].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
    const message =
      err instanceof ConnectError
        ? `${codeName(err.code)}: ${err.rawMessage}`
        : err instanceof Error
          ? err.message
          : String(err);
    process.stderr.write(`dline: ${message}\n`);
    process.exit(1);
  },
);
