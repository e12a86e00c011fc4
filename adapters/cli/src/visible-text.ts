/**
 * Model-supplied text (replies, tool summaries, commands, tool output) reaches the terminal
 * with its control characters made visible: an escape sequence in a command could otherwise
 * move the cursor and draw another command over the one the person approves. Newlines and
 * tabs stay as they are (a CR LF pair is a newline); every other C0 or C1 control character,
 * DEL, and the Unicode direction overrides that reorder what is shown, become escapes such as
 * `\r`, `\e`, `\x07`, `\u202e`.
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

export function visible(text: string): string {
  return text.replace(CONTROL, (c) => {
    if (c === "\r\n") return "\n";
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** One line (summaries, prompts): newlines too are shown as `\n`. */
export function visibleLine(text: string): string {
  return visible(text).replace(/\n/g, "\\n").replace(/\t/g, "\\t");
}
