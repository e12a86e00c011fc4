/**
 * An edit whose texts the core left out (binary, or too large) and sent no diff of: what it
 * changes by size, and the text it writes when the core sent that (only the file as it is was
 * left out). Pure: used by the extension (the diff editor's sides) and by the chat webview
 * (the approval panel and the tool row).
 */
import { visibleLine } from "../text/visible-text.js";
import type { ChatFileEdit } from "./chat-state.js";

type Edit = Pick<
  ChatFileEdit,
  "path" | "status" | "truncated" | "diff" | "proposedText" | "originalSize" | "proposedSize" | "originalBinary"
>;

/** The texts are left out and no diff stands in for them. */
export function isLeftOut(edit: Edit): boolean {
  return edit.truncated && !edit.diff;
}

/** The text a left-out edit writes, when the core sent it (undefined otherwise). */
export function writtenText(edit: Edit): string | undefined {
  return isLeftOut(edit) && edit.status !== "deleted" && edit.proposedText ? edit.proposedText : undefined;
}

/** Whether the core said how large a left-out edit is (rows of earlier versions know no sizes). */
export function hasSizes(edit: Edit): boolean {
  return edit.originalSize > 0 || edit.proposedSize > 0;
}

/** "2,000 bytes", "1 byte". */
export function bytes(n: number): string {
  return `${n.toLocaleString("en")} byte${n === 1 ? "" : "s"}`;
}

/**
 * What a left-out edit changes, by size, as the CLI says it: "binary, 2,000 bytes now, not
 * shown; 21 bytes after", "new file; 300,000 bytes after", "2,000 bytes now, not shown;
 * deleted" ("before" in place of "now" once the edit was made: `proposal` false). Undefined
 * for a row of an earlier version (no sizes).
 */
export function leftOutSizes(edit: Edit, proposal = true): string | undefined {
  if (!hasSizes(edit)) return undefined;
  const now =
    edit.status === "added"
      ? "new file"
      : `${edit.originalBinary ? "binary, " : ""}${bytes(edit.originalSize)} ${proposal ? "now" : "before"}, not shown`;
  const after = edit.status === "deleted" ? "deleted" : `${bytes(edit.proposedSize)} after`;
  return `${now}; ${after}`;
}

/** The note beside a left-out edit's name in the chat: its sizes, else "too large to preview". */
export function leftOutNote(edit: Edit, proposal = true): string {
  return `(${leftOutSizes(edit, proposal) ?? "too large to preview"})`;
}

/** "2 lines" of a text (a last line break ends the last line, it does not start another). */
export function lineCount(text: string): string {
  const n = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  return `${n.toLocaleString("en")} line${n === 1 ? "" : "s"}`;
}

/**
 * The two sides the diff editor shows of a left-out edit. With the text it writes: a notice of
 * the file as it is (binary or too large, its size) beside that text, which is the file's whole
 * text after the edit (`modifiedIsText`). Without: the same notice on both sides, with the sizes
 * when the core sent them (else the wording of earlier versions).
 */
export function leftOutSides(
  edit: Edit,
  proposal: boolean,
): { original: string; modified: string; modifiedIsText: boolean } {
  const name = visibleLine(edit.path);
  const written = writtenText(edit);
  if (written !== undefined) {
    const what =
      edit.status === "added"
        ? "does not exist yet."
        : edit.originalBinary
          ? `is binary (${bytes(edit.originalSize)}): its content is not shown.`
          : `(${bytes(edit.originalSize)}) is too large to show here.`;
    const lines = [
      `${name} ${proposal ? "as it is now" : "as it was before the edit"} ${what}`,
      `The other side is the whole text the edit ${proposal ? "writes" : "wrote"} in its place (${bytes(edit.proposedSize)}, ${lineCount(written)}).`,
    ];
    if (proposal) lines.push("Approve or Reject it in the chat.");
    return { original: `${lines.join("\n")}\n`, modified: written, modifiedIsText: true };
  }
  const notice = notPreviewed(edit, proposal);
  return { original: notice, modified: notice, modifiedIsText: false };
}

/** What a diff shows of a file whose texts the core left out, without the text it writes. */
export function notPreviewed(edit: Edit, proposal: boolean): string {
  const what = proposal ? "This change" : "The change";
  const name = visibleLine(edit.path);
  const sizes = leftOutSizes(edit, proposal);
  const first =
    sizes === undefined
      ? `${what} to ${name} is too large to preview here (or the file is binary):`
      : edit.originalBinary
        ? `${what} to ${name} is not shown: the file is binary (${sizes.replace(/^binary, /, "")}).`
        : `${what} to ${name} is too large to preview here (${sizes}).`;
  return [
    first,
    "Dline does not receive its text for a preview.",
    proposal
      ? "Approve or Reject it in the chat; once approved, the file is written in full and can be opened as usual."
      : "Open the file itself to see what it holds now.",
    "",
  ].join("\n");
}
