import { IMPORT_CLINE_HELP } from "./commands/import-cline.js";

/** `dline help` and `dline --help`: every command on a line or two. */
export const USAGE = `Usage: dline [--core PATH] [--json] <command> [args]

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
Global options: --core PATH (the dline-core binary; default $DLINE_CORE or next to dline), --json
(machine-readable output; an error is then one JSON line on stderr: {"error":{"code","message"}}).
\`dline COMMAND --help\` (or \`dline help COMMAND\`) prints a command's own help and runs nothing.
`;

const GLOBAL = `Global options: --core PATH (the dline-core binary), --json (machine-readable output; errors as a JSON line on stderr).`;

const CHECKPOINT_ID = `CHECKPOINT_ID is a checkpoint's id (dline checkpoints TASK_ID lists them), or its first digits
(as a task prints them) when no other checkpoint of the task starts so.`;

const TASK_HELP = `Usage: dline [--json] task "PROMPT" [--workspace DIR] [--profile ID] [--yes]

Starts a task and follows it on this terminal: the model's answer, its tool calls and checkpoints,
and its questions (approvals, follow-ups), which you answer here.

Arguments:
  PROMPT               what to do (the words after "task" are joined)
Options:
  --workspace DIR      the task's workspace (default: the current folder)
  --profile ID         the model profile (default: the default profile, else the model the
                       environment names: OPENAI_* or ANTHROPIC_*)
  --yes                approve every question (a follow-up takes its first option)
  --json               task events as JSON lines on stdout

Without a terminal (stdin not a TTY) and without --yes the task stops at its first question and
the command exits 1, naming dline resume TASK_ID to go on from a terminal. The task id is
printed on stderr; while checkpoints initialize, their progress is shown on stderr too.

Examples:
  dline task "add a --verbose flag to the CLI"
  dline task "fix the failing test" --workspace ~/src/app --yes
${GLOBAL}
`;

const RESUME_HELP = `Usage: dline [--json] resume TASK_ID [--message TEXT] [--workspace DIR] [--yes]

Continues a task that stopped (completed, cancelled, interrupted, or stopped at a question), in
its own workspace, and follows it as dline task does.

Arguments:
  TASK_ID              the task (dline history lists them)
Options:
  --message TEXT       send this message to the task (default: resume where it stopped); a task
                       running in another window gets it there and answers it after its current
                       step, and this command follows the task until that answer
  --workspace DIR      the workspace, for a task that has none (one imported without a workspace,
                       or whose folder is not on this machine); never the current folder by default
  --yes                approve every question
  --json               task events as JSON lines on stdout

Examples:
  dline resume 1733321234567-9f8e7d6c
  dline resume 1733321234567-9f8e7d6c --message "now add a test for it"
${GLOBAL}
`;

const FOLLOW_HELP = `Usage: dline [--json] follow TASK_ID [--yes]

Watches a task that runs in another window (an editor, another dline) or here, and answers its
questions on this terminal. A question answered in another window is taken back from the
terminal ("(approved in another window)") while the task goes on. Without a terminal, questions
are left to the window that runs the task.

Arguments:
  TASK_ID              the task (dline history lists them)
Options:
  --yes                approve every question
  --json               task events as JSON lines on stdout

Examples:
  dline follow 1733321234567-9f8e7d6c
${GLOBAL}
`;

const HISTORY_HELP = `Usage: dline [--json] history [--workspace DIR] [--query TEXT] [--favorites] [--sort newest|oldest|cost] [--limit N]

Lists tasks: a star for favorites, the id, when it started, its status and its title.

Options:
  --workspace DIR      only the tasks of this workspace
  --query TEXT         only the tasks whose text matches
  --favorites          only favorites
  --sort S             newest (default), oldest or cost
  --limit N            at most N tasks (default 50)
  --json               { "tasks": [...], "nextPageToken": "..." }

Examples:
  dline history --limit 10
  dline history --query "login page" --sort cost
${GLOBAL}
`;

const SHOW_HELP = `Usage: dline [--json] show TASK_ID

Prints a task's title, id, workspace, status and cost, then its messages.

Arguments:
  TASK_ID              the task (dline history lists them)
Options:
  --json               { "task": {...}, "messages": [...], "lastSeq": "..." }

Examples:
  dline show 1733321234567-9f8e7d6c
${GLOBAL}
`;

const DELETE_HELP = `Usage: dline [--json] delete TASK_ID... | --all | --all-except-favorites

Deletes tasks with their messages and checkpoints.

Arguments:
  TASK_ID...           the tasks to delete (dline history lists them)
Options:
  --all                every task
  --all-except-favorites   every task that is not a favorite
  --json               { "deletedTaskIds": [...] }

Examples:
  dline delete 1733321234567-9f8e7d6c 1733329876543-0a1b2c3d
  dline delete --all-except-favorites
${GLOBAL}
`;

const CHECKPOINTS_HELP = `Usage: dline [--json] checkpoints TASK_ID

Lists a task's checkpoints: id, when it was saved (UTC), its kind, and "(restored)" for the one
the files were restored to when no checkpoint was saved since.

Arguments:
  TASK_ID              the task (dline history lists them)
Options:
  --json               { "checkpoints": [...] }

Examples:
  dline checkpoints 1733321234567-9f8e7d6c
${GLOBAL}
`;

const COMPARE_HELP = `Usage: dline [--json] compare TASK_ID CHECKPOINT_ID

Lists the workspace's changes since a checkpoint: each changed file with its status (added,
modified, deleted). A changed file whose earlier version the checkpoints do not have is marked
"(not tracked by checkpoints: not restored)": a restore leaves it as it is. Then the paths the
checkpoint left out (excluded, ignored or too large) that are not listed above.

Arguments:
  TASK_ID              the task (dline history lists them)
  CHECKPOINT_ID        the checkpoint to compare with
Options:
  --json               { "files": [...], "skipped": [...] } (with each file's text before and after)

${CHECKPOINT_ID}

Examples:
  dline compare 1733321234567-9f8e7d6c 3f2a9c1b7d0e
  dline --json compare 1733321234567-9f8e7d6c 3f2a9c1b7d0e
${GLOBAL}
`;

const RESTORE_HELP = `Usage: dline [--json] restore TASK_ID CHECKPOINT_ID [--mode files-and-task|files|task]

Restores a task to a checkpoint: its files, its conversation (cut back to the checkpoint: the
messages after it are deleted), or both. Names each file restored, deleted or kept as it was,
and prints the command that undoes a files restore.

Arguments:
  TASK_ID              the task (dline history lists them)
  CHECKPOINT_ID        the checkpoint to restore to
Options:
  --mode M             files-and-task (default): the files and the conversation
                       files: the files only; task: the conversation only
  --json               the restore's outcome as JSON (restoredPaths, deletedPaths, keptPaths,
                       undoCheckpointId, conversationRestored, ...)

${CHECKPOINT_ID}

Examples:
  dline restore 1733321234567-9f8e7d6c 3f2a9c1b7d0e
  dline restore 1733321234567-9f8e7d6c 3f2a9c1b7d0e --mode files
${GLOBAL}
`;

const SETTINGS_HELP = `Usage: dline [--json] settings [get [KEY] | set KEY JSON] [--workspace DIR] [--task ID]

Reads or changes settings. "get" alone prints every setting of the scope as JSON; "get KEY" the
value in effect and where it comes from; "set KEY JSON" sets a value (a bare word is a string).

Arguments:
  KEY                  a setting's name, e.g. commandTimeoutSeconds
  JSON                 its new value, as JSON (quote it for the shell)
Options:
  --workspace DIR      the workspace scope (default: global)
  --task ID            the task scope
  --json               machine-readable output

Examples:
  dline settings get commandTimeoutSeconds
  dline settings set autoApprovalSettings '{"enabled": true, "readFiles": true}'
  dline settings set hookTimeoutSeconds 60 --workspace .
${GLOBAL}
`;

const PROFILE_HELP = `Usage: dline [--json] profile add ID --provider anthropic|openai --model M [options]
       dline [--json] profile list
       dline profile rm ID

Model profiles. The API key is read from an environment variable, never from the command line.

Arguments:
  ID                   the profile's id
Options of add:
  --provider P         anthropic, or openai for any OpenAI-compatible endpoint
  --model M            the model
  --base-url URL       the endpoint (default: the provider's)
  --api-key-env VAR    the variable holding the key (default ANTHROPIC_API_KEY or OPENAI_API_KEY)
  --default            make it the default profile
  --name NAME          a display name
  --context-window N   --max-output-tokens N
  --input-price P      --output-price P   --cache-read-price P   --cache-write-price P
                       (US$ per million tokens; left out: the price table's, for known models)
  --zero-cost          a model that costs nothing (local)
  --first-byte-timeout SECONDS   --reasoning-effort low|medium|high   --thinking-budget TOKENS
  --tool-format native|xml

Examples:
  dline profile add work --provider anthropic --model claude-sonnet-4-5 --default
  OPENAI_API_KEY=... dline profile add local --provider openai --base-url http://localhost:11434/v1 --model qwen3 --zero-cost
  dline profile list
${GLOBAL}
`;

const CAPABILITIES_HELP = `Usage: dline [--json] capabilities [--workspace DIR] [--task ID] [--kind K] [--connect]
       dline [--json] capabilities enable|disable|inherit KIND RESOURCE [--scope global|workspace|task] [--workspace DIR] [--task ID]
       dline [--json] capabilities trust|untrust [--workspace DIR]

Lists rules, workflows, skills, subagents, hooks and MCP servers with their toggles
(global/workspace/task) and status; turns one on or off at a scope; or trusts a workspace, which
lets its own hooks (.agents/hooks) and MCP servers (.agents/mcp) run.

Arguments:
  KIND                 rules, workflows, skills, subagents, hooks or mcp
  RESOURCE             the capability: a path relative to its folder (a rule's file, a skill's
                       folder) or an MCP server's name ("resource" in --json's list)
Options:
  --workspace DIR      the workspace (default: the current folder)
  --task ID            a task's toggles
  --kind K             list only this kind (as KIND above)
  --connect            connect to the MCP servers to show their state
  --scope S            global, workspace (default) or task
  --json               machine-readable output

Examples:
  dline capabilities
  dline capabilities disable rules no-console.md --scope global
  dline capabilities enable mcp github --scope workspace
  dline capabilities trust --workspace ~/src/app
${GLOBAL}
`;

const DOCTOR_HELP = `Usage: dline [--json] doctor

Starts the sidecar and prints the CLI's and the sidecar's versions, the Node it embeds, its
storage roots and log file, git's version, and what is missing. Exit code 1 when something is.

Examples:
  dline doctor
  DLINE_CORE=./dist/dline-core dline --json doctor
${GLOBAL}
`;

const VERSION_HELP = `Usage: dline [--json] version

Prints the CLI's version (dline --version does too).

Examples:
  dline version
${GLOBAL}
`;

const HELP_HELP = `Usage: dline help [COMMAND]

Prints every command, or one command's own help (as dline COMMAND --help does).

Examples:
  dline help
  dline help restore
`;

/** Each command's own help: usage, arguments, options, examples. */
export const COMMAND_HELP: Readonly<Record<string, string>> = {
  task: TASK_HELP,
  resume: RESUME_HELP,
  follow: FOLLOW_HELP,
  history: HISTORY_HELP,
  show: SHOW_HELP,
  delete: DELETE_HELP,
  "import-cline": IMPORT_CLINE_HELP,
  checkpoints: CHECKPOINTS_HELP,
  compare: COMPARE_HELP,
  restore: RESTORE_HELP,
  settings: SETTINGS_HELP,
  profile: PROFILE_HELP,
  capabilities: CAPABILITIES_HELP,
  doctor: DOCTOR_HELP,
  version: VERSION_HELP,
  help: HELP_HELP,
};

/** The help `dline COMMAND --help` or `dline help COMMAND` prints; the general one for no command. */
export function helpFor(command: string | undefined): string | undefined {
  if (command === undefined) return USAGE;
  return Object.hasOwn(COMMAND_HELP, command) ? COMMAND_HELP[command] : undefined;
}
