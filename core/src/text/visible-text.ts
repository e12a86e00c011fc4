/**
 * Text from a model or a repository (replies, tool summaries, command lines, file paths,
 * titles) shown with its control characters made visible: an escape sequence could otherwise
 * move a terminal's cursor and draw another command over the one a person approves, and a
 * direction override could reorder what they read. Newlines and tabs stay as they are (a CR LF
 * pair is a newline); every other C0 or C1 control character, DEL, and the Unicode direction
 * embeddings, overrides and isolates become escapes such as `\r`, `\e`, `\x07`, `\u202e`.
 * Pure: the CLI, the ACP face and the VS Code extension (its webview too) show text so.
 */
const NAMED: Record<string, string> = {
  "\r": "\\r",
  "\x1b": "\\e",
  "\b": "\\b",
  "\f": "\\f",
  "\v": "\\v",
  "\0": "\\0",
};

/** C0 but \t and \n, DEL, C1, and the bidi embeddings, overrides and isolates; a CR LF pair as one match. */
export const CONTROL_CHARACTERS = /\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/** The escape shown for one control character. */
export function escapeControl(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

export function visible(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (c) => (c === "\r\n" ? "\n" : escapeControl(c)));
}

/** One line (summaries, prompts, labels): newlines and tabs too are shown as `\n`, `\t`. */
export function visibleLine(text: string): string {
  return visible(text).replace(/\n/g, "\\n").replace(/\t/g, "\\t");
}
