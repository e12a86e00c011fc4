/**
 * The scripted server's own token count of a request, standing in for a real tokenizer (about
 * 3.2 characters per token on code and prose, 2.8 on a package-lock.json): a word of up to
 * seven letters or a number of up to three digits (each with one leading space), one or two
 * other symbols, or a run of whitespace is one token. It is deliberately not the client's
 * estimate, so a client that trusts its estimate blindly can still overflow, as with real APIs.
 */
const piece = / ?[A-Za-z]{1,7}| ?\d{1,3}|\s+|[^\sA-Za-z\d]{1,2}/gu;

export function countTextTokens(text: string): number {
  let count = 0;
  piece.lastIndex = 0;
  while (piece.exec(text) !== null) count++;
  return count;
}

/** Tokens of everything a request puts in the context: system prompt, messages and tools. */
export function countRequestTokens(body: any): number {
  let total = 0;
  const walk = (value: unknown): void => {
    if (typeof value === "string") total += countTextTokens(value);
    else if (Array.isArray(value)) for (const v of value) walk(v);
    else if (value && typeof value === "object") {
      for (const [key, v] of Object.entries(value)) {
        if (key === "cache_control") continue;
        walk(v);
      }
    }
  };
  walk(body.system);
  walk(body.messages);
  walk(body.tools);
  // Each message costs a few tokens of framing, as in the real formats.
  return total + 4 * (Array.isArray(body.messages) ? body.messages.length : 0);
}

/** The longest prefix of `text` that has at most `tokens` tokens, and how many it has. */
export function cutAtTokens(text: string, tokens: number): { text: string; tokens: number } {
  let count = 0;
  let end = 0;
  piece.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = piece.exec(text)) !== null) {
    if (count === tokens) return { text: text.slice(0, end), tokens: count };
    count++;
    end = match.index + match[0].length;
  }
  return { text, tokens: count };
}
