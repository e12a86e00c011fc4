/**
 * What the terminal shows before an edit's approval when the texts are left out: the sizes,
 * and the text the edit writes when the core sent it (a binary file made text), never only
 * "too large or binary to show" (the person would approve blind).
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { unifiedDiff } from "../../adapters/cli/src/approval-view.js";
import { FileStatus } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { FileEditSchema } from "../../core/src/gen/dline/v1/task_pb.js";

describe("an edit whose texts are left out, in the terminal", () => {
  it("a binary file rewritten as text: its size now, and every line it writes", () => {
    const edit = create(FileEditSchema, {
      path: "blob.bin",
      status: FileStatus.MODIFIED,
      truncated: true,
      originalSize: 2000n,
      proposedSize: 15n,
      originalBinary: true,
      proposedText: "now text\nline 2\n",
    });
    expect(unifiedDiff(edit)).toBe(
      "blob.bin: modified (binary, 2,000 bytes now, not shown; 15 bytes after); the edit writes:\n+now text\n+line 2\n",
    );
  });

  it("a file too large to show: its sizes before and after", () => {
    const edit = create(FileEditSchema, {
      path: "one-line.min.js",
      status: FileStatus.MODIFIED,
      truncated: true,
      originalSize: 2_000_000n,
      proposedSize: 2_000_001n,
    });
    expect(unifiedDiff(edit)).toBe(
      "one-line.min.js: modified (2,000,000 bytes now, not shown; 2,000,001 bytes after)\n",
    );
  });

  it("a row of an earlier version, which knows no sizes", () => {
    const edit = create(FileEditSchema, { path: "image.png", status: FileStatus.MODIFIED, truncated: true });
    expect(unifiedDiff(edit)).toBe("image.png: modified (too large or binary to show)\n");
  });
});
