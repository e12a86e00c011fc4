/**
 * The markdown code block a text leaves open: an answer cut off in the middle of one. A client
 * renders an agent message as markdown, so what follows it in that message (the cut-off
 * marker of a replayed session) would otherwise show as code.
 * Fences as CommonMark has them: up to 3 spaces, then 3 or more backticks (no backtick in the
 * info string after them) or tildes; closed by a run of the same character, as long or longer,
 * with nothing but spaces after it.
 */
const OPENING = /^ {0,3}(`{3,}(?=[^`]*$)|~{3,})/;
const CLOSING = /^ {0,3}(`{3,}|~{3,}) *$/;

/** The line that closes the code block `text` leaves open, or "" when it leaves none open. */
export function closingFence(text: string): string {
  let open = "";
  for (const line of text.split("\n")) {
    if (!open) open = OPENING.exec(line)?.[1] ?? "";
    else {
      const run = CLOSING.exec(line)?.[1];
      if (run && run[0] === open[0] && run.length >= open.length) open = "";
    }
  }
  return open;
}
