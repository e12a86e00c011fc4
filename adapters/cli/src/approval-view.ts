import { createTwoFilesPatch } from "diff";
import { FileStatus } from "../../../core/src/gen/dline/v1/checkpoint_pb.js";
import type { Ask, FileEdit } from "../../../core/src/gen/dline/v1/task_pb.js";
import { visible } from "../../../core/src/text/visible-text.js";
import { withThousands } from "../../../core/src/text/numbers.js";

/** A diff longer than this many lines is cut (the rest is summarised in one line). */
const MAX_DIFF_LINES = 400;

/**
 * One edit as a unified diff (a/ and b/ paths as git writes them): computed here from the two
 * texts, or the core's diff of an edit too large to send whole. Cut at MAX_DIFF_LINES unless
 * `whole`.
 */
export function unifiedDiff(edit: FileEdit, whole = false): string {
  const lines = diffLines(edit);
  if (lines === undefined) return `${visible(edit.path)}: ${FileStatus[edit.status].toLowerCase()} (${sizes(edit)})\n`;
  const shown =
    !whole && lines.length > MAX_DIFF_LINES
      ? [...lines.slice(0, MAX_DIFF_LINES), `… ${lines.length - MAX_DIFF_LINES} more lines (answer d to read them all)`]
      : lines;
  return shown.map(visible).join("\n") + "\n";
}

/** Each edit's diff lines, computed once (the question, the details and the pager all read them). */
const computed = new WeakMap<FileEdit, string[] | undefined>();

function diffLines(edit: FileEdit): string[] | undefined {
  if (!computed.has(edit)) computed.set(edit, computeDiffLines(edit));
  return computed.get(edit);
}

function computeDiffLines(edit: FileEdit): string[] | undefined {
  let patch: string;
  if (edit.truncated) {
    // The file now is left out (binary, too large to read) but what the edit writes is shown.
    if (!edit.diff && edit.proposedText) {
      const heading = `${edit.path}: ${FileStatus[edit.status].toLowerCase()} (${sizes(edit)}); the edit writes:`;
      const written = edit.proposedText.split("\n");
      if (written.at(-1) === "") written.pop();
      return [heading, ...written.map((l) => `+${l}`)];
    }
    if (!edit.diff) return undefined;
    patch = edit.diff;
  } else {
    const before = edit.status === FileStatus.ADDED ? "/dev/null" : `a/${edit.path}`;
    const after = edit.status === FileStatus.DELETED ? "/dev/null" : `b/${edit.path}`;
    patch = createTwoFilesPatch(before, after, edit.originalText, edit.proposedText, undefined, undefined, {
      context: 3,
    });
  }
  // The first line of jsdiff's patch is a separator of its own ("==="): git's form starts at "---".
  const lines = patch.split("\n").filter((l) => !/^=+$/.test(l) && l !== "\\ No newline at end of file");
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * What an edit whose texts are left out changes, by size: "binary, 2,000 bytes now, 9 bytes
 * after" (rows of earlier versions know no sizes: "too large or binary to show").
 */
function sizes(edit: FileEdit): string {
  if (edit.originalSize === 0n && edit.proposedSize === 0n) return "too large or binary to show";
  const bytes = (n: bigint) => `${withThousands(n)} byte${n === 1n ? "" : "s"}`;
  const now =
    edit.status === FileStatus.ADDED
      ? "new file"
      : `${edit.originalBinary ? "binary, " : ""}${bytes(edit.originalSize)} now, not shown`;
  const after = edit.status === FileStatus.DELETED ? "deleted" : `${bytes(edit.proposedSize)} after`;
  return `${now}; ${after}`;
}

/** Whether the terminal shows part of an approval's diff only (then the whole can be paged). */
export function approvalDiffIsCut(ask: Ask): boolean {
  return !ask.command && ask.edits.some((e) => (diffLines(e)?.length ?? 0) > MAX_DIFF_LINES);
}

/**
 * What an approval is about, as the terminal shows it before the question: the diff, or the
 * exact command and its folder. `whole`: every line of the diff (for the pager).
 */
export function approvalDetails(ask: Ask, whole = false): string {
  if (ask.command) {
    const lines = visible(ask.command.command).split("\n").join("\n    ");
    return `  $ ${lines}\n  (in ${visible(ask.command.workingDirectory)})\n`;
  }
  return ask.edits.map((e) => unifiedDiff(e, whole)).join("");
}
