/**
 * VS Code's view of an edit whose texts the core left out (binary, or too large) and sent no
 * diff of: its sizes now and after (and "binary"), and the text it writes when the core sent
 * it, in the approval, the tool row and the diff editor. Rows of earlier versions (no sizes)
 * keep the wording they had.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { FileStatus } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { FileEditSchema } from "../../core/src/gen/dline/v1/task_pb.js";
import { fileEditItems } from "../../adapters/vscode/src/chat/chat-model.js";
import type { ChatFileEdit } from "../../adapters/vscode/src/chat/chat-state.js";
import {
  leftOutNote,
  leftOutSides,
  leftOutSizes,
  lineCount,
  notPreviewed,
  writtenText,
} from "../../adapters/vscode/src/chat/left-out-edit.js";

/** blob.bin, 2,000 binary bytes, rewritten with two lines of text: what the core sends. */
const blob = create(FileEditSchema, {
  path: "blob.bin",
  status: FileStatus.MODIFIED,
  proposedText: "now text\nsecond line\n",
  truncated: true,
  originalSize: 2000n,
  proposedSize: 21n,
  originalBinary: true,
});

const edit = (over: Partial<ChatFileEdit>): ChatFileEdit => ({
  path: "f.bin",
  status: "modified",
  originalText: "",
  proposedText: "",
  truncated: true,
  diff: "",
  originalSize: 0,
  proposedSize: 0,
  originalBinary: false,
  ...over,
});

describe("an edit whose texts are left out", () => {
  it("reaches the webview with its sizes (as numbers: webview messages carry no bigint) and whether the file is binary", () => {
    const [item] = fileEditItems([blob]);
    expect(item).toEqual({
      path: "blob.bin",
      status: "modified",
      originalText: "",
      proposedText: "now text\nsecond line\n",
      truncated: true,
      diff: "",
      originalSize: 2000,
      proposedSize: 21,
      originalBinary: true,
    });
    expect(JSON.parse(JSON.stringify(item))).toEqual(item);
  });

  it("says its sizes as the CLI does: binary or not, added, deleted", () => {
    const [item] = fileEditItems([blob]);
    expect(leftOutSizes(item!)).toBe("binary, 2,000 bytes now, not shown; 21 bytes after");
    expect(leftOutNote(item!)).toBe("(binary, 2,000 bytes now, not shown; 21 bytes after)");
    // Once the edit was made (the tool row of a finished call, its "Changed 1 file" diff).
    expect(leftOutNote(item!, false)).toBe("(binary, 2,000 bytes before, not shown; 21 bytes after)");
    expect(leftOutSizes(edit({ originalSize: 22_020_096, proposedSize: 1 }))).toBe(
      "22,020,096 bytes now, not shown; 1 byte after",
    );
    expect(leftOutSizes(edit({ status: "added", proposedSize: 300_000 }))).toBe("new file; 300,000 bytes after");
    expect(leftOutSizes(edit({ status: "deleted", originalSize: 5, originalBinary: true }))).toBe(
      "binary, 5 bytes now, not shown; deleted",
    );
  });

  it("of an earlier version (no sizes) keeps today's wording", () => {
    const old = edit({});
    expect(leftOutSizes(old)).toBeUndefined();
    expect(leftOutNote(old)).toBe("(too large to preview)");
    expect(writtenText(old)).toBeUndefined();
    expect(notPreviewed(old, true)).toBe(
      [
        "This change to f.bin is too large to preview here (or the file is binary):",
        "Dline does not receive its text for a preview.",
        "Approve or Reject it in the chat; once approved, the file is written in full and can be opened as usual.",
        "",
      ].join("\n"),
    );
    expect(leftOutSides(old, false)).toEqual({
      original: notPreviewed(old, false),
      modified: notPreviewed(old, false),
      modifiedIsText: false,
    });
  });

  it("shows the text it writes: a notice of the binary file beside it in the diff editor", () => {
    const [item] = fileEditItems([blob]);
    expect(writtenText(item!)).toBe("now text\nsecond line\n");
    expect(lineCount("now text\nsecond line\n")).toBe("2 lines");
    expect(lineCount("one")).toBe("1 line");
    expect(leftOutSides(item!, true)).toEqual({
      original: [
        "blob.bin as it is now is binary (2,000 bytes): its content is not shown.",
        "The other side is the whole text the edit writes in its place (21 bytes, 2 lines).",
        "Approve or Reject it in the chat.",
        "",
      ].join("\n"),
      modified: "now text\nsecond line\n",
      modifiedIsText: true,
    });
    const applied = leftOutSides(item!, false);
    expect(applied.original).toContain("blob.bin as it was before the edit is binary (2,000 bytes)");
    expect(applied.original).toContain("the whole text the edit wrote in its place");
    expect(applied.modified).toBe("now text\nsecond line\n");
  });

  it("of a file too large to read: says so with its size, beside the text it writes", () => {
    const big = edit({ path: "big.bin", originalSize: 22_020_096, proposedSize: 10, proposedText: "now small\n" });
    expect(leftOutSides(big, true).original).toContain(
      "big.bin as it is now (22,020,096 bytes) is too large to show here.",
    );
    expect(leftOutSides(big, true).modified).toBe("now small\n");
  });

  it("without the text it writes: a notice with its sizes on both sides", () => {
    const binary = edit({ originalSize: 2000, proposedSize: 4000, originalBinary: true });
    expect(writtenText(binary)).toBeUndefined();
    const sides = leftOutSides(binary, true);
    expect(sides.modifiedIsText).toBe(false);
    expect(sides.original).toBe(sides.modified);
    expect(sides.original).toContain(
      "This change to f.bin is not shown: the file is binary (2,000 bytes now, not shown; 4,000 bytes after).",
    );
    expect(leftOutSides(binary, false).original).toContain(
      "The change to f.bin is not shown: the file is binary (2,000 bytes before, not shown; 4,000 bytes after).",
    );
    const added = edit({ path: "generated/long.js", status: "added", proposedSize: 400_000 });
    expect(leftOutSides(added, true).original).toContain(
      "This change to generated/long.js is too large to preview here (new file; 400,000 bytes after).",
    );
  });

  it("is not one when a diff stands in for its texts, or it deletes the file", () => {
    expect(writtenText(edit({ diff: "--- a/f\n+++ b/f\n", proposedText: "x\n", originalSize: 3 }))).toBeUndefined();
    expect(writtenText(edit({ status: "deleted", proposedText: "x\n", originalSize: 3 }))).toBeUndefined();
    expect(writtenText(edit({ truncated: false, proposedText: "x\n" }))).toBeUndefined();
  });

  it("makes control characters in the path visible in its notice", () => {
    const odd = edit({
      path: "a\u001b[2J.bin",
      originalSize: 2,
      proposedSize: 2,
      proposedText: "x\n",
      originalBinary: true,
    });
    expect(leftOutSides(odd, true).original).toContain("a\\e[2J.bin as it is now is binary");
  });
});
