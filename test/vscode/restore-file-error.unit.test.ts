import { describe, expect, it } from "vitest";
import { fileErrorNotice } from "../../adapters/vscode/src/checkpoints/restore-options.js";

// From a bug hunt in code-server: when the file part of Restore Files & Task failed, the error
// read "the files could not be restored: Restoring files failed: …" (the same thing twice) and
// did not say that the conversation had been restored all the same.
describe("the error of a restore whose files could not be restored", () => {
  it("says first that the conversation was restored, when it was; the core's reason once", () => {
    const why = "Restoring files failed: Cannot restore sub/x.txt: sub is a file now.";
    expect(fileErrorNotice(why, true)).toBe(
      "Dline: the conversation was restored to the checkpoint, but not the files. Restoring files failed: Cannot restore sub/x.txt: sub is a file now.",
    );
    expect(fileErrorNotice(why, false)).toBe(`Dline: ${why}`);
  });
});
