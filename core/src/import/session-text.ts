/**
 * What a Cline 4 user message shows the user: the content of `<user_input mode="…">`;
 * `<user_command slash="x">…</user_command>` reads as `/x …`; `<mode_notice>` elements are
 * removed; attachments outside the wrapper are left out; text without any wrapper is the typed
 * text; prompts the runtime sends as the user (hook context, task resumption, the plan-to-act
 * continuation) contribute no text.
 *
 * A session that continues a legacy task starts with that task's conversation, converted as
 * Cline's classic extension wrote it: the user's words sit in `<task>`, `<feedback>`,
 * `<answer>` or `<user_message>`, next to `<environment_details>` and tool results the
 * extension added, and Cline 4 appends a notice that the conversation is a legacy one. Those
 * read as the words inside the wrappers; the rest shows nothing.
 */

const USER_INPUT = /<user_input\b[^>]*>([\s\S]*?)<\/user_input>/g;
const USER_COMMAND = /<user_command\b[^>]*?\bslash\s*=\s*"([^"]*)"[^>]*>([\s\S]*?)<\/user_command>/g;
const USER_COMMAND_EMPTY = /<user_command\b[^>]*?\bslash\s*=\s*"([^"]*)"[^>]*\/>/g;
const MODE_NOTICE = /<mode_notice\b[^>]*>[\s\S]*?<\/mode_notice>|<mode_notice\b[^>]*\/>/g;
/** Where the classic extension put the user's own words. */
const CLASSIC_USER_WORDS = /<(task|feedback|answer|user_message)>([\s\S]*?)<\/\1>/g;
const ENVIRONMENT_DETAILS = /<environment_details>[\s\S]*?(?:<\/environment_details>|$)/g;

/** The notice Cline 4 appends, as a user message, to a legacy conversation it resumes. */
const LEGACY_RESUME_WARNING = "Warning: this is a legacy conversation, which means tool names may have changed.";

/** Openings of prompts the runtime sends in the user's name. */
const RUNTIME_PROMPTS = [
  /^<hook_context\b/,
  /^<hook_output\b/,
  /^\[TASK RESUMPTION\]/,
  /^<task_resumption\b/,
  /^\[The user has switched to ACT MODE/i,
  /^<plan_to_act\b/,
  /^<act_mode_continuation\b/,
  // The classic extension's tool results and its reminders, e.g. "[read_file for 'a.ts'] Result:".
  /^\[[\w-]+(?: for [^\]]*)?\] Result:/,
  /^\[ERROR\]/,
];

function readCommands(text: string): string {
  return text
    .replace(USER_COMMAND, (_m, slash: string, rest: string) => `/${slash}${rest.trim() ? ` ${rest.trim()}` : ""}`)
    .replace(USER_COMMAND_EMPTY, (_m, slash: string) => `/${slash}`);
}

export function isRuntimePrompt(text: string): boolean {
  const t = text.trimStart();
  return RUNTIME_PROMPTS.some((p) => p.test(t)) || isLegacyResumeWarning(t);
}

export function isLegacyResumeWarning(text: string): boolean {
  return text.trimStart().startsWith(LEGACY_RESUME_WARNING);
}

/** The text the user saw for a user message ("" when it shows nothing). */
export function visibleUserText(text: string): string {
  const inputs = [...text.matchAll(USER_INPUT)].map((m) => m[1] ?? "");
  if (inputs.length > 0) {
    return inputs
      .map((inner) => readCommands(inner.replace(MODE_NOTICE, "")).trim())
      .filter(Boolean)
      .join("\n\n");
  }
  const classic = [...text.replace(ENVIRONMENT_DETAILS, "").matchAll(CLASSIC_USER_WORDS)]
    .map((m) => (m[2] ?? "").trim())
    .filter(Boolean);
  if (classic.length > 0) return classic.join("\n\n");
  if (isRuntimePrompt(text)) return "";
  const typed = text.replace(ENVIRONMENT_DETAILS, "");
  const commands = [...typed.matchAll(USER_COMMAND)];
  if (commands.length > 0) return readCommands(typed.replace(MODE_NOTICE, "")).trim();
  return typed.replace(MODE_NOTICE, "").trim();
}
