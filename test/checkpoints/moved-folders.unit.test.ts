import { describe, expect, it } from "vitest";
import { movedCopies } from "../../core/src/checkpoints/moved-folders.js";

describe("movedCopies", () => {
  it("names the topmost copy whose deleted files came back under a remade folder, the task's own aside", () => {
    const written = ["lib/a.js", "lib/sub/b.js", "README.md"];
    expect(movedCopies(["lib2/a.js", "lib2/sub/b.js"], written, ["lib"], [])).toEqual(["lib2"]);
    // A file the task made there (no counterpart) beside the moved ones: still the copy.
    expect(movedCopies(["lib2/a.js", "lib2/sub/b.js", "lib2/new.js"], written, ["lib"], [])).toEqual(["lib2"]);
    // Mostly the task's own files, one name in common by chance: not a copy.
    expect(movedCopies(["docs/a.js", "docs/x.md", "docs/y.md"], written, ["lib"], [])).toEqual([]);
    // A copy of a folder moved with others (`mv lib/sub x/sub`, lib/ remade): matched below lib/.
    expect(movedCopies(["x/sub/b.js"], written, ["lib"], [])).toEqual(["x"]);
  });

  it("never the person's recorded empty folder, a folder holding or held by the original, or without a remade folder", () => {
    expect(movedCopies(["dest/x.js"], ["gen/x.js"], ["gen"], ["dest"])).toEqual([]);
    expect(movedCopies(["lib/old/a.js"], ["lib/a.js"], ["lib"], [])).toEqual([]);
    expect(movedCopies(["lib2/a.js"], ["lib/a.js"], [], [])).toEqual([]);
  });
});
