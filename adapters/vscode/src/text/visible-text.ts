/**
 * How the extension and its chat webview show model-supplied text: control characters made
 * visible (core/src/text/visible-text.ts says why), and the parts a view marks as escapes.
 */
import { CONTROL_CHARACTERS, escapeControl } from "../../../../core/src/text/visible-text.js";

export { escapeControl, visible, visibleLine } from "../../../../core/src/text/visible-text.js";

/** Text split into plain runs and escaped control characters, so a view can mark the escapes. */
export function visibleParts(text: string): { text: string; control: boolean }[] {
  const parts: { text: string; control: boolean }[] = [];
  let last = 0;
  for (const match of text.matchAll(CONTROL_CHARACTERS)) {
    const at = match.index ?? 0;
    if (at > last) parts.push({ text: text.slice(last, at), control: false });
    parts.push(match[0] === "\r\n" ? { text: "\n", control: false } : { text: escapeControl(match[0]), control: true });
    last = at + match[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), control: false });
  return parts;
}
