/**
 * Text an ACP client shows (the model's answers and thoughts, tool titles, output and reasons)
 * with its control characters made visible, as the CLI and Neovim show it: a client that prints
 * the text in a terminal would otherwise run an escape sequence (recolour, retitle, move the
 * cursor and draw over what the person reads), and a direction override would reorder it.
 * Newlines and tabs stay (a CR LF pair is a newline); every other C0 or C1 control character,
 * DEL and the Unicode direction embeddings, overrides and isolates become `\r`, `\e`, `\x07`,
 * `\u202e`. Diffs (`type: "diff"`) and raw inputs and outputs are data, not text: they stay.
 */
const NAMED: Record<string, string> = {
  "\r": "\\r",
  "\x1b": "\\e",
  "\b": "\\b",
  "\f": "\\f",
  "\v": "\\v",
  "\0": "\\0",
};
const CONTROL = /\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

export function visibleText(text: string): string {
  return text.replace(CONTROL, (c) => {
    if (c === "\r\n") return "\n";
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * The pieces of a streamed message, ready for `visibleText`: a CR that ends a piece waits for
 * the next one, as it may be the first half of a CR LF newline split between two deltas.
 */
export class StreamedText {
  private heldCr = false;

  /** What to send of `piece`: "" when nothing is ready yet. */
  push(piece: string): string {
    const ready = (this.heldCr ? "\r" : "") + piece;
    this.heldCr = ready.endsWith("\r");
    return this.heldCr ? ready.slice(0, -1) : ready;
  }

  /** The message ended: a CR still held was no newline. */
  end(): string {
    const held = this.heldCr;
    this.heldCr = false;
    return held ? "\r" : "";
  }
}
