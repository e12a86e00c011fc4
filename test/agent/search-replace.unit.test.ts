import { afterEach, describe, expect, it } from "vitest";
import { findTool, runTool } from "../../core/src/agent/tools/registry.js";
import { applySearchReplaceBlocks, parseSearchReplaceBlocks } from "../../core/src/agent/tools/search-replace.js";
import { ToolError } from "../../core/src/agent/tools/types.js";
import { makeContext, makeWorkspace, type TestWorkspace } from "./tool-helpers.js";

// How a model's SEARCH/REPLACE blocks may change a file: only the place the block names, and
// nothing at all when the block is wrong. Each case is a way an edit could cost the user code.

function block(search: string[], replace: string[]): string {
  return ["------- SEARCH", ...search, "=======", ...replace, "+++++++ REPLACE"].join("\n");
}

function apply(content: string, diff: string): string {
  return applySearchReplaceBlocks(content, parseSearchReplaceBlocks(diff), "f.txt");
}

function refusal(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }
  throw new Error("expected a refusal");
}

const program = ["function a() {", "  one();", "}", "", "function b() {", "  two();", "}", ""].join("\n");

describe("a SEARCH/REPLACE edit changes only the place it names", () => {
  it("replaces the exact text in the middle of a file and keeps everything around it", () => {
    expect(apply(program, block(["  one();"], ["  uno();"]))).toBe(program.replace("one()", "uno()"));
  });

  it("a match that ignores indentation in the middle of a file keeps every line after it", () => {
    const updated = apply(program, block(["function a() {", "    one();", "}"], ["function a() {", "  uno();", "}"]));
    expect(updated).toBe(program.replace("one()", "uno()"));
  });

  it("a match that ignores indentation on the last line of a file without a final newline replaces just that line", () => {
    expect(apply("keep\n  last  ", block(["last"], ["final"]))).toBe("keep\nfinal");
    // The exact text at the very end, without the final newline the block has: exact, keeping the indentation.
    expect(apply("keep\n    last", block(["last"], ["final"]))).toBe("keep\n    final");
  });

  it("a match by first and last lines replaces those lines and the ones between, nothing more", () => {
    const content = ["head", "start", "  stale body", "end", "tail", ""].join("\n");
    const updated = apply(
      content,
      block(["start", "  the body the model remembered", "end"], ["start", "  new body", "end"]),
    );
    expect(updated).toBe(["head", "start", "  new body", "end", "tail", ""].join("\n"));
  });

  it("the first-and-last-lines fallback needs the same number of lines between them", () => {
    const content = ["start", "a", "b", "end", ""].join("\n");
    const err = refusal(() => apply(content, block(["start", "x", "end"], ["start", "y", "end"])));
    expect(err.message).toContain("did not match");
  });

  it("the first-and-last-lines fallback is not used for blocks of fewer than three lines", () => {
    const content = ["start", "end", ""].join("\n");
    const err = refusal(() => apply(content, block(["start", "END"], ["x"])));
    expect(err.message).toContain("did not match");
  });

  it("an exact match decides before a match ignoring indentation elsewhere in the file", () => {
    // Exactly: inside line 1. Ignoring indentation: the whole of line 2 ("call(y);" with trailing spaces).
    const content = "x = call(y);\ncall(y);  \n";
    expect(apply(content, block(["call(y);"], ["call(z);"]))).toBe("x = call(z);\ncall(y);  \n");
  });

  it("an exact match keeps the rest of its line (the indentation before it)", () => {
    expect(apply("    run();\n", block(["run();"], ["stop();"]))).toBe("    stop();\n");
  });

  it("applies blocks one after the other, each to the result of the one before", () => {
    const diff = [
      block(["  one();"], ["  two();"]),
      block(["function b() {", "  two();"], ["function b() {", "  three();"]),
    ].join("\n");
    expect(apply(program, diff)).toBe(
      ["function a() {", "  two();", "}", "", "function b() {", "  three();", "}", ""].join("\n"),
    );
  });

  it("deletes the matched lines with an empty REPLACE, nothing around them", () => {
    expect(apply("a\nb\nc\n", block(["b"], []))).toBe("a\nc\n");
  });

  it("ignores the indentation of the SEARCH lines too, for blocks too short for the first-and-last-lines fallback", () => {
    expect(apply("  one();\n}\n", block(["        one();", "}"], ["  uno();", "}"]))).toBe("  uno();\n}\n");
  });

  it("matches first and last lines ignoring their indentation", () => {
    const content = ["  start", "    old", "  end", "tail", ""].join("\n");
    expect(apply(content, block(["start", "remembered", "end"], ["  start", "    new", "  end"]))).toBe(
      ["  start", "    new", "  end", "tail", ""].join("\n"),
    );
  });

  it("a replacement of several lines at the end of a file without a final newline keeps its line breaks", () => {
    expect(apply("a\nlast", block(["last"], ["first new", "second new"]))).toBe("a\nfirst new\nsecond new");
  });

  it("keeps a file without a final newline without one after an edit of its last line", () => {
    expect(apply("a\nlast", block(["last"], ["final"]))).toBe("a\nfinal");
    expect(apply("a\nb\nc", block(["b"], ["B"]))).toBe("a\nB\nc");
  });
});

describe("a SEARCH/REPLACE edit that could land in the wrong place changes nothing", () => {
  it("an empty SEARCH on a file with content is refused (it would replace the whole file)", () => {
    const err = refusal(() => apply(program, block([], ["all new"])));
    expect(err.code).toBe("invalid_argument");
    expect(err.message).toContain("is empty");
    expect(err.message).toContain("f.txt is not empty");
  });

  it("an empty SEARCH writes a file that is empty or only blank", () => {
    expect(apply("", block([], ["fresh"]))).toBe("fresh\n");
    expect(apply(" \n\n", block([], ["fresh"]))).toBe("fresh\n");
  });

  it("text that appears twice exactly is refused, naming the lines", () => {
    const err = refusal(() => apply("x\ny\nx\n", block(["x"], ["z"])));
    expect(err.message).toContain("matches 2 places");
    expect(err.message).toContain("exactly; at lines 1, 3)");
  });

  it("lines that match twice ignoring indentation are refused, naming the strategy and lines", () => {
    const err = refusal(() => apply("  x();\n    x();\n", block(["x();  "], ["y();"])));
    expect(err.message).toContain("matches 2 places in f.txt (ignoring indentation; at lines 1, 2)");
  });

  it("text found once in the file and again as its last line without a final newline is refused as ambiguous", () => {
    const err = refusal(() => apply("x\ny\nx", block(["x"], ["z"])));
    expect(err.message).toContain("matches 2 places in f.txt (exactly; at lines 1, 3)");
  });

  it("a block whose first and last lines frame two places is refused", () => {
    const content = ["if (a) {", "  one();", "}", "if (a) {", "  two();", "}", ""].join("\n");
    const err = refusal(() => apply(content, block(["if (a) {", "  three();", "}"], ["if (a) {", "  four();", "}"])));
    expect(err.message).toContain("by its first and last lines; at lines 1, 4)");
  });

  it("names only the first five places of many and says there are more", () => {
    const err = refusal(() => apply("x\n".repeat(7), block(["x"], ["y"])));
    expect(err.message).toContain("matches 7 places");
    expect(err.message).toContain("at lines 1, 2, 3, 4, 5, ...)");
    const five = refusal(() => apply("x\n".repeat(5), block(["x"], ["y"])));
    expect(five.message).toContain("at lines 1, 2, 3, 4, 5)");
  });

  it("a later block that does not match leaves the file as it was, even after earlier blocks matched", () => {
    const diff = [block(["  one();"], ["  uno();"]), block(["  three();"], ["  tres();"])].join("\n");
    const err = refusal(() => apply(program, diff));
    expect(err.message).toContain("SEARCH block 2 of 2 did not match any text in f.txt");
    expect(err.message).toContain('(its first line: "  three();")');
  });

  it("the error about a block that did not match quotes its first non-blank line, at most 120 characters, and says nothing changed", () => {
    const err = refusal(() => apply(program, block(["", "   ", "  nowhere();"], ["x"])));
    expect(err.message).toContain('(its first line: "  nowhere();")');
    expect(err.message).toContain("No change was made to the file. Read the file again");
    const long = `${"y".repeat(150)}();`;
    expect(refusal(() => apply(program, block([long], ["x"]))).message).toContain(
      `(its first line: "${"y".repeat(120)}")`,
    );
  });
});

describe("a malformed diff is refused before anything is written", () => {
  it("a block without its SEARCH marker is not taken as a block (its markers would be written into the file)", () => {
    const err = refusal(() =>
      parseSearchReplaceBlocks(["  one();", "=======", "  uno();", "+++++++ REPLACE"].join("\n")),
    );
    expect(err.message).toContain("holds no block");
  });

  it("a block without its divider is refused", () => {
    expect(
      refusal(() => parseSearchReplaceBlocks(["------- SEARCH", "a", "+++++++ REPLACE"].join("\n"))).message,
    ).toContain('SEARCH block 1 has no "=======" line');
    expect(
      refusal(() => parseSearchReplaceBlocks(["------- SEARCH", "a", "------- SEARCH", "b"].join("\n"))).message,
    ).toContain('SEARCH block 1 has no "=======" line');
  });

  it("a block not closed before the next SEARCH is refused, naming it", () => {
    const diff = [
      block(["a"], ["b"]),
      "------- SEARCH",
      "c",
      "=======",
      "d",
      "------- SEARCH",
      "e",
      "=======",
      "f",
      "+++++++ REPLACE",
    ].join("\n");
    expect(refusal(() => parseSearchReplaceBlocks(diff)).message).toContain(
      'block 2 is not closed with "+++++++ REPLACE" before the next SEARCH',
    );
  });

  it("a block cut off at the end is refused, naming it", () => {
    expect(
      refusal(() => parseSearchReplaceBlocks(["------- SEARCH", "a", "=======", "b"].join("\n"))).message,
    ).toContain('block 1 is not closed with "+++++++ REPLACE".');
    expect(refusal(() => parseSearchReplaceBlocks(["------- SEARCH", "a"].join("\n"))).message).toContain(
      "block 1 is not closed",
    );
  });

  it("a diff with no block says how to write one", () => {
    expect(refusal(() => parseSearchReplaceBlocks("")).message).toContain('use "------- SEARCH"');
  });
});

describe("parsing SEARCH/REPLACE blocks", () => {
  it("reads a diff written with CRLF line endings", () => {
    const diff = block(["two"], ["TWO"]).replace(/\n/g, "\r\n");
    expect(parseSearchReplaceBlocks(diff)).toEqual([{ search: "two\n", replace: "TWO\n" }]);
    expect(apply("one\ntwo\nthree\n", diff)).toBe("one\nTWO\nthree\n");
  });

  it("accepts both marker styles, longer markers, spaces around them, and Cline's SEARCH>/REPLACE< variants", () => {
    const diff = [
      "commentary before the block is ignored",
      "  <<<<<<< SEARCH>",
      "a",
      " ======= ",
      "b",
      ">>>>>>>> REPLACE<",
      "commentary between blocks",
      "---------- SEARCH",
      "c",
      "=====",
      "d",
      "++++ REPLACE  ",
    ].join("\n");
    expect(parseSearchReplaceBlocks(diff)).toEqual([
      { search: "a\n", replace: "b\n" },
      { search: "c\n", replace: "d\n" },
    ]);
  });

  it("accepts markers written without a space before SEARCH or REPLACE and with spaces around them", () => {
    const diff = [
      "<<<<<<<SEARCH   ",
      "a",
      "=======",
      "b",
      "  >>>>>>>REPLACE",
      "-------SEARCH",
      "c",
      "=======",
      "d",
      " +++++++REPLACE ",
    ].join("\n");
    expect(parseSearchReplaceBlocks(diff)).toEqual([
      { search: "a\n", replace: "b\n" },
      { search: "c\n", replace: "d\n" },
    ]);
  });

  it("does not take lines that only resemble markers as markers", () => {
    const diff = block(["-- SEARCH", "== x", "++ REPLACE", "SEARCH", "<<< SEARCH here", "=== ==="], ["ok"]);
    expect(parseSearchReplaceBlocks(diff)).toEqual([
      { search: "-- SEARCH\n== x\n++ REPLACE\nSEARCH\n<<< SEARCH here\n=== ===\n", replace: "ok\n" },
    ]);
    expect(
      refusal(() => parseSearchReplaceBlocks("x ------- SEARCH\na\n=======\nb\n+++++++ REPLACE")).message,
    ).toContain("holds no block");
    const replaceLookalikes = block(["a"], ["x +++++++ REPLACE", "+++++++ REPLACE now", "x ======="]);
    expect(parseSearchReplaceBlocks(replaceLookalikes)).toEqual([
      { search: "a\n", replace: "x +++++++ REPLACE\n+++++++ REPLACE now\nx =======\n" },
    ]);
    expect(parseSearchReplaceBlocks(block(["------- SEARCH now", "a", "x ======="], ["b"]))).toEqual([
      { search: "------- SEARCH now\na\nx =======\n", replace: "b\n" },
    ]);
  });

  it("an empty SEARCH part and an empty REPLACE part are empty strings", () => {
    expect(parseSearchReplaceBlocks(block([], []))).toEqual([{ search: "", replace: "" }]);
  });
});

describe("replace_in_file on a file", () => {
  let ws: TestWorkspace;
  afterEach(() => ws?.cleanup());

  it("refuses an empty SEARCH on a file with content and leaves it as it was", async () => {
    ws = makeWorkspace({ "app.js": program });
    const ctx = await makeContext(ws.root);
    const result = await runTool(findTool("replace_in_file")!, { path: "app.js", diff: block([], ["oops"]) }, ctx);
    expect(result.isError).toBe(true);
    expect(ws.read("app.js")).toBe(program);
    expect(ctx.edited).toEqual([]);
  });

  it("applies a CRLF diff to a CRLF file, keeping its line endings and every other line", async () => {
    const crlf = program.replace(/\n/g, "\r\n");
    ws = makeWorkspace({ "app.js": crlf });
    const ctx = await makeContext(ws.root);
    const diff = block(["function b() {", "    two();", "}"], ["function b() {", "  dos();", "}"]).replace(
      /\n/g,
      "\r\n",
    );
    const result = await runTool(findTool("replace_in_file")!, { path: "app.js", diff }, ctx);
    expect(result).toEqual({ content: "Applied 1 block to app.js.", isError: false });
    expect(ws.read("app.js")).toBe(crlf.replace("two()", "dos()"));
  });
});

describe("a Markdown heading's underline in the text is not the divider", () => {
  // express's History.md: setext headings, underlined with as many "=" as the heading is long.
  const history = ["4.21.2 / 2024-11-06", "==================", "", "  * deps: path-to-regexp@0.1.12", ""].join("\n");

  it("an underline in the SEARCH part: the block's own ======= divides it", () => {
    const diff = block(
      ["4.21.2 / 2024-11-06", "==================", "", "  * deps: path-to-regexp@0.1.12"],
      ["4.21.2 / 2024-11-06", "==================", "", "  * deps: path-to-regexp@0.1.12", "  * deps: qs@6.13.0"],
    );
    // Before, the underline divided it: the heading line alone was replaced by the rest of the block.
    expect(apply(history, diff)).toBe(history.replace("0.1.12\n", "0.1.12\n  * deps: qs@6.13.0\n"));
  });

  it("an underline of exactly seven: the reading that matches the file decides", () => {
    const short = ["4.21.2", "=======", "", "  * fix", ""].join("\n");
    const diff = block(["4.21.2", "=======", "", "  * fix"], ["4.21.3", "=======", "", "  * fix"]);
    expect(apply(short, diff)).toBe(short.replace("4.21.2", "4.21.3"));
  });

  it("no reading matches: nothing changes, and the error names the block's first reading", () => {
    const diff = block(["Not here", "=========="], ["x"]);
    expect(refusal(() => apply(history, diff)).message).toContain('its first line: "Not here"');
  });
});
