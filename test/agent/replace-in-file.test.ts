import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findTool, runTool } from "../../core/src/agent/tools/registry.js";
import { makeContext, makeWorkspace, type TestWorkspace } from "./tool-helpers.js";

let ws: TestWorkspace;
afterEach(() => ws?.cleanup());

const source = ["function add(a, b) {", "  return a + b;", "}", "", "function sub(a, b) {", "    return a - b;", "}", ""].join("\n");

async function replace(diff: string, file = "math.js") {
  const ctx = await makeContext(ws.root);
  const result = await runTool(findTool("replace_in_file")!, { path: file, diff }, ctx);
  return { result, edited: ctx.edited };
}

describe("replace_in_file", () => {
  it("applies several exact blocks in both marker styles and records the path", async () => {
    ws = makeWorkspace({ "math.js": source });
    const diff = [
      "------- SEARCH",
      "  return a + b;",
      "=======",
      "  return a + b; // sum",
      "+++++++ REPLACE",
      "",
      "<<<<<<< SEARCH",
      "function sub(a, b) {",
      "=======",
      "function subtract(a, b) {",
      ">>>>>>> REPLACE",
    ].join("\n");
    const { result, edited } = await replace(diff);
    expect(result).toEqual({ content: "Applied 2 blocks to math.js.", isError: false });
    expect(ws.read("math.js")).toBe(source.replace("a + b;", "a + b; // sum").replace("function sub(", "function subtract("));
    expect(edited).toEqual(["math.js"]);
  });

  it("falls back to a line match that ignores indentation differences", async () => {
    ws = makeWorkspace({ "math.js": source });
    const { result } = await replace("------- SEARCH\nfunction sub(a, b) {\n  return a - b;\n}\n=======\nfunction sub(a, b) {\n  return b - a;\n}\n+++++++ REPLACE");
    expect(result.isError).toBe(false);
    expect(ws.read("math.js")).toBe(source.replace("    return a - b;", "  return b - a;"));
  });

  it("names the block that did not match and leaves the file unchanged", async () => {
    ws = makeWorkspace({ "math.js": source });
    const diff = "------- SEARCH\n  return a + b;\n=======\n  return 0;\n+++++++ REPLACE\n------- SEARCH\n  return a * b;\n=======\n  x\n+++++++ REPLACE";
    const { result, edited } = await replace(diff);
    expect(result.isError).toBe(true);
    expect(result.content).toContain("SEARCH block 2 of 2 did not match");
    expect(result.content).toContain('"  return a * b;"');
    expect(result.content).toContain("math.js");
    expect(ws.read("math.js")).toBe(source);
    expect(edited).toEqual([]);
  });

  it("keeps CRLF line endings of the file", async () => {
    ws = makeWorkspace({ "win.txt": "one\r\ntwo\r\nthree\r\n" });
    const { result } = await replace("------- SEARCH\ntwo\n=======\nTWO\nand a half\n+++++++ REPLACE", "win.txt");
    expect(result.isError).toBe(false);
    expect(ws.read("win.txt")).toBe("one\r\nTWO\r\nand a half\r\nthree\r\n");
  });

  it("matches the last line of a file without a final newline, and deletes with an empty REPLACE", async () => {
    ws = makeWorkspace({ "a.txt": "keep\ndrop me\nlast" });
    await replace("------- SEARCH\nlast\n=======\nfinal\n+++++++ REPLACE\n------- SEARCH\ndrop me\n=======\n+++++++ REPLACE", "a.txt");
    expect(ws.read("a.txt")).toBe("keep\nfinal");
  });

  it("rejects malformed diffs and a missing file with a clear message", async () => {
    ws = makeWorkspace({ "math.js": source });
    expect((await replace("just some text")).result.content).toMatch(/holds no block/);
    expect((await replace("------- SEARCH\nfoo\n+++++++ REPLACE")).result.content).toMatch(/no "=======" line/);
    expect((await replace("------- SEARCH\nfoo\n=======\nbar\n")).result.content).toMatch(/not closed/);
    expect((await replace("------- SEARCH\nfoo\n=======\nbar\n+++++++ REPLACE", "missing.js")).result.content).toMatch(/does not exist; use write_to_file/);
    expect(ws.read("math.js")).toBe(source);
    expect(fs.existsSync(path.join(ws.root, "missing.js"))).toBe(false);
  });

  it("creates a new file from a single block with an empty SEARCH", async () => {
    ws = makeWorkspace();
    const { result, edited } = await replace("------- SEARCH\n=======\nfresh\n+++++++ REPLACE", "new/file.txt");
    expect(result.isError).toBe(false);
    expect(ws.read("new/file.txt")).toBe("fresh\n");
    expect(edited).toEqual(["new/file.txt"]);
  });
});
