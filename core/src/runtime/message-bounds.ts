/**
 * How much of a model's reply a chat message keeps. A reply can be as long as the model likes
 * (a runaway model streamed 100 MB); a stored message larger than an answer may carry would
 * make GetTask and Subscribe fail for that task forever, and every delta is kept in memory
 * for the task's life. So a reply's text stops at MAX_REPLY_CHARS, with a note saying so.
 */
export const MAX_REPLY_CHARS = 512 * 1024;

export const REPLY_CUT_NOTE = `\n\n[The reply was cut here: it was longer than ${MAX_REPLY_CHARS} characters.]`;

/** The part of `delta` a reply of `currentLength` characters still takes ("" once it is full; the note when it fills up). */
export function boundedDelta(currentLength: number, delta: string): string {
  if (currentLength >= MAX_REPLY_CHARS) return "";
  const room = MAX_REPLY_CHARS - currentLength;
  return delta.length <= room ? delta : `${delta.slice(0, room)}${REPLY_CUT_NOTE}`;
}
