import { createTwoFilesPatch } from "diff";
import { FileStatus } from "../../../core/src/gen/dline/v1/checkpoint_pb.js";
import type { Ask, FileEdit } from "../../../core/src/gen/dline/v1/task_pb.js";
import { visible } from "./visible-text.js";

/** A diff longer than this many lines is cut (the rest is summarised in one line). */
const MAX_DIFF_LINES = 400;

/** One edit as a unified diff (a/ and b/ paths as git writes them). */
export function unifiedDiff(edit: FileEdit): string {
  if (edit.truncated) return `${edit.path}: ${FileStatus[edit.status].toLowerCase()} (too large or binary to show)\n`;
  const before = edit.status === FileStatus.ADDED ? "/dev/null" : `a/${edit.path}`;
  const after = edit.status === FileStatus.DELETED ? "/dev/null" : `b/${edit.path}`;
  const patch = createTwoFilesPatch(before, after, edit.originalText, edit.proposedText, undefined, undefined, {
    context: 3,
  });
  // The first line of jsdiff's patch is a separator of its own ("==="): git's form starts at "---".
  const lines = patch.split("\n").filter((l) => !/^=+$/.test(l) && l !== "\\ No newline at end of file");
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  const shown =
    lines.length > MAX_DIFF_LINES
      ? [...lines.slice(0, MAX_DIFF_LINES), `… ${lines.length - MAX_DIFF_LINES} more lines`]
      : lines;
  return shown.map(visible).join("\n") + "\n";
}

/** What an approval is about, as the terminal shows it before the question: the diff, or the exact command and its folder. */
export function approvalDetails(ask: Ask): string {
  if (ask.command) {
    const lines = visible(ask.command.command).split("\n").join("\n    ");
    return `  $ ${lines}\n  (in ${visible(ask.command.workingDirectory)})\n`;
  }
  return ask.edits.map(unifiedDiff).join("");
}
