/**
 * The pieces of a streamed message, ready for `visible` (core/src/text/visible-text.ts): a CR that ends a piece waits for
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
