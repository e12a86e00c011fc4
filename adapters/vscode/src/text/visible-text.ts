/**
 * Model-supplied text (tool summaries, command lines, file paths, titles, replies) is shown
 * with its control characters made visible: an escape sequence or a direction override could
 * otherwise hide or reorder what a person approves. Newlines and tabs stay as they are (a CR
 * LF pair is a newline); every other C0 or C1 control character, DEL, and the Unicode
 * direction embeddings, overrides and isolates become escapes such as `\r`, `\e`, `\x07`,
 * `\u202e`. Pure: used by the extension and by the chat webview.
 */
const NAMED: Record<string, string> = {
  "\r": "\\r",
  "\x1b": "\\e",
  "\b": "\\b",
  "\f": "\\f",
  "\v": "\\v",
  "\0": "\\0",
};
// C0 but \t and \n, DEL, C1, and the bidi embeddings, overrides and isolates.
const CONTROL = /\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/** The escape shown for one control character. */
export function escapeControl(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

export function visible(text: string): string {
  return text.replace(CONTROL, (c) => (c === "\r\n" ? "\n" : escapeControl(c)));
}

/** One line (labels, titles, notifications): newlines and tabs too are shown as `\n`, `\t`. */
export function visibleLine(text: string): string {
  return visible(text).replace(/\n/g, "\\n").replace(/\t/g, "\\t");
}

/** Text split into plain runs and escaped control characters, so a view can mark the escapes. */
export function visibleParts(text: string): { text: string; control: boolean }[] {
  const parts: { text: string; control: boolean }[] = [];
  let last = 0;
  for (const match of text.matchAll(CONTROL)) {
    const at = match.index ?? 0;
    if (at > last) parts.push({ text: text.slice(last, at), control: false });
    parts.push(match[0] === "\r\n" ? { text: "\n", control: false } : { text: escapeControl(match[0]), control: true });
    last = at + match[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), control: false });
  return parts;
}
