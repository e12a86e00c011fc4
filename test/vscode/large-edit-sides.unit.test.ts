/**
 * VS Code's diff of a change too large to send whole: both sides rebuilt from the file and the
 * core's unified diff, before the approval (the file is the original) and after it (the file is
 * the result); nothing rebuilt when the file no longer fits the diff.
 */
import { createTwoFilesPatch } from "diff";
import { describe, expect, it } from "vitest";
import { rebuildSides } from "../../adapters/vscode/src/chat/large-edit-sides.js";

const before = Array.from({ length: 20_000 }, (_, i) => `line ${i}\n`).join("");
const after = before.replace("line 500\n", "line five hundred\n").replace("line 19999\n", "");
const diff = createTwoFilesPatch("a/f.txt", "b/f.txt", before, after, undefined, undefined, { context: 3 }).replace(
  /^=+\n/,
  "",
);

describe("rebuildSides", () => {
  it("a proposal: the file is the original, the diff gives what the edit writes", () => {
    expect(rebuildSides(before, diff, true)).toEqual({ original: before, modified: after });
  });

  it("an applied change: the file is the result, the reversed diff gives what it was", () => {
    expect(rebuildSides(after, diff, false)).toEqual({ original: before, modified: after });
  });

  it("a file changed since (the diff's context is gone): nothing rebuilt", () => {
    expect(rebuildSides(before.replace("line 499\n", "other\n"), diff, true)).toBeUndefined();
    expect(rebuildSides(before, "not a diff at all", true)).toBeUndefined();
  });
});
