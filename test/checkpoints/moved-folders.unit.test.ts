import { describe, expect, it } from "vitest";
import { movedCopies } from "../../core/src/checkpoints/moved-folders.js";

describe("movedCopies", () => {
  it("names the topmost copy whose every deleted file came back under a remade folder", () => {
    const written = ["lib/a.js", "lib/sub/b.js", "README.md"];
    expect(movedCopies(["lib2/a.js", "lib2/sub/b.js"], written, ["lib"], [])).toEqual(["lib2"]);
    // One deleted file with no counterpart (the task's own): not a copy, and it stays.
    expect(movedCopies(["lib2/a.js", "lib2/sub/b.js", "lib2/new.js"], written, ["lib"], [])).toEqual([]);
    // A copy of a folder moved with others (`mv lib/sub x/sub`, lib/ remade): matched below lib/.
    expect(movedCopies(["x/sub/b.js"], written, ["lib"], [])).toEqual(["x"]);
  });

  it("never the person's recorded empty folder, a folder holding or held by the original, or without a remade folder", () => {
    expect(movedCopies(["dest/x.js"], ["gen/x.js"], ["gen"], ["dest"])).toEqual([]);
    expect(movedCopies(["lib/old/a.js"], ["lib/a.js"], ["lib"], [])).toEqual([]);
    expect(movedCopies(["lib2/a.js"], ["lib/a.js"], [], [])).toEqual([]);
  });
});
