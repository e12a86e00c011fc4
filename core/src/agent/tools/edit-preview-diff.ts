import { createTwoFilesPatch } from "diff";

/**
 * The changed lines a diff may hold before it is given up (a deleted and an added line are two):
 * bounds the work on a file rewritten from end to end, which no preview could show anyway.
 */
const MAX_EDITED_LINES = 2000;

/**
 * The change from `before` to `after` as a unified diff, git's form (`--- a/path`, `+++ b/path`,
 * hunks with three lines of context): what a person reads to approve an edit whose texts are too
 * large to send whole. Undefined when the diff would be over `maxChars` or over MAX_EDITED_LINES.
 */
export function previewDiff(
  relativePath: string,
  before: string | undefined,
  after: string | undefined,
  maxChars: number,
): string | undefined {
  const patch = createTwoFilesPatch(
    before === undefined ? "/dev/null" : `a/${relativePath}`,
    after === undefined ? "/dev/null" : `b/${relativePath}`,
    before ?? "",
    after ?? "",
    undefined,
    undefined,
    { context: 3, maxEditLength: MAX_EDITED_LINES },
  );
  if (patch === undefined) return undefined;
  // jsdiff starts with a separator line of its own ("===…"); git's form starts at "---".
  const text = patch.replace(/^=+\n/, "");
  return text.length <= maxChars ? text : undefined;
}
