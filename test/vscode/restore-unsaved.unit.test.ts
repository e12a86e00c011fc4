/**
 * The question before a file restore names the files it writes that have unsaved changes in an
 * editor, and says they are saved first (so Undo brings those changes back): a restore over an
 * unsaved editor left it showing its own older text, which its next Save wrote over the restore.
 */
import { describe, expect, it } from "vitest";
import { restoreConfirmation } from "../../adapters/vscode/src/checkpoints/restore-options.js";

describe("the restore question with unsaved changes", () => {
  it("names the files with unsaved changes and says they are saved first", () => {
    const text = restoreConfirmation(["lib/help.js", "lib/util.js"], 5, ["lib/help.js"]);
    expect(text).toContain("2 files changed since this checkpoint (lib/help.js, lib/util.js)");
    expect(text).toMatch(/Unsaved changes in lib\/help\.js are saved first, so that Undo brings them back too\.$/);
  });

  it("says so too when the changed files could not be read", () => {
    expect(restoreConfirmation(undefined, 5, ["a.txt"])).toContain("Unsaved changes in a.txt are saved first");
  });

  it("shortens a long list and shows control characters", () => {
    const text = restoreConfirmation(["a", "b", "c"], 2, ["a", "b", "c\u001b[2K"]);
    expect(text).toContain("Unsaved changes in a, b and 1 more are saved first");
    expect(restoreConfirmation(["x\u001b[2K"], 5, ["x\u001b[2K"])).toContain("Unsaved changes in x\\e[2K");
  });

  it("says nothing of it when no file the restore writes is unsaved", () => {
    expect(restoreConfirmation(["a.txt"])).not.toContain("Unsaved");
    expect(restoreConfirmation(["a.txt"], 5, [])).not.toContain("Unsaved");
  });
});
