/**
 * What a Cline 4 user message shows the user (specs/cline-import.md, "Message text"): the
 * content of `<user_input mode="…">`; `<user_command slash="x">…</user_command>` reads as
 * `/x …`; `<mode_notice>` elements are removed; attachments outside the wrapper are left out;
 * text without any wrapper is the typed text; prompts the runtime sends as the user (hook
 * context, task resumption, the plan-to-act continuation) contribute no text.
 */

const USER_INPUT = /<user_input\b[^>]*>([\s\S]*?)<\/user_input>/g;
const USER_COMMAND = /<user_command\b[^>]*?\bslash\s*=\s*"([^"]*)"[^>]*>([\s\S]*?)<\/user_command>/g;
const USER_COMMAND_EMPTY = /<user_command\b[^>]*?\bslash\s*=\s*"([^"]*)"[^>]*\/>/g;
const MODE_NOTICE = /<mode_notice\b[^>]*>[\s\S]*?<\/mode_notice>|<mode_notice\b[^>]*\/>/g;

/** Openings of prompts the runtime sends in the user's name. */
const RUNTIME_PROMPTS = [
  /^<hook_context\b/,
  /^<hook_output\b/,
  /^\[TASK RESUMPTION\]/,
  /^<task_resumption\b/,
  /^\[The user has switched to ACT MODE/i,
  /^<plan_to_act\b/,
  /^<act_mode_continuation\b/,
];

function readCommands(text: string): string {
  return text
    .replace(USER_COMMAND, (_m, slash: string, rest: string) => `/${slash}${rest.trim() ? ` ${rest.trim()}` : ""}`)
    .replace(USER_COMMAND_EMPTY, (_m, slash: string) => `/${slash}`);
}

export function isRuntimePrompt(text: string): boolean {
  const t = text.trimStart();
  return RUNTIME_PROMPTS.some((p) => p.test(t));
}

/** The text the user saw for a user message ("" when it shows nothing). */
export function visibleUserText(text: string): string {
  const inputs = [...text.matchAll(USER_INPUT)].map((m) => m[1]);
  if (inputs.length > 0) {
    return inputs
      .map((inner) => readCommands(inner.replace(MODE_NOTICE, "")).trim())
      .filter(Boolean)
      .join("\n\n");
  }
  if (isRuntimePrompt(text)) return "";
  const commands = [...text.matchAll(USER_COMMAND)];
  if (commands.length > 0) return readCommands(text.replace(MODE_NOTICE, "")).trim();
  return text.replace(MODE_NOTICE, "").trim();
}
