import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findTool, runTool } from "../../core/src/agent/tools/registry.js";
import { makeContext, makeWorkspace, type TestWorkspace } from "./tool-helpers.js";

let ws: TestWorkspace;
afterEach(() => ws?.cleanup());

const source = [
  "function add(a, b) {",
  "  return a + b;",
  "}",
  "",
  "function sub(a, b) {",
  "    return a - b;",
  "}",
  "",
].join("\n");

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
    expect(ws.read("math.js")).toBe(
      source.replace("a + b;", "a + b; // sum").replace("function sub(", "function subtract("),
    );
    expect(edited).toEqual(["math.js"]);
  });

  it("falls back to a line match that ignores indentation differences", async () => {
    ws = makeWorkspace({ "math.js": source });
    const { result } = await replace(
      "------- SEARCH\nfunction sub(a, b) {\n  return a - b;\n}\n=======\nfunction sub(a, b) {\n  return b - a;\n}\n+++++++ REPLACE",
    );
    expect(result.isError).toBe(false);
    expect(ws.read("math.js")).toBe(source.replace("    return a - b;", "  return b - a;"));
  });

  it("names the block that did not match and leaves the file unchanged", async () => {
    ws = makeWorkspace({ "math.js": source });
    const diff =
      "------- SEARCH\n  return a + b;\n=======\n  return 0;\n+++++++ REPLACE\n------- SEARCH\n  return a * b;\n=======\n  x\n+++++++ REPLACE";
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
    await replace(
      "------- SEARCH\nlast\n=======\nfinal\n+++++++ REPLACE\n------- SEARCH\ndrop me\n=======\n+++++++ REPLACE",
      "a.txt",
    );
    expect(ws.read("a.txt")).toBe("keep\nfinal");
  });

  it("refuses a file over 16 MiB with advice that works: read parts, change lines with an approved command", async () => {
    ws = makeWorkspace();
    for (const name of ["big.log", "my logs/big's.log"]) {
      fs.mkdirSync(path.dirname(path.join(ws.root, name)), { recursive: true });
      // Sparse: 17 MiB on paper.
      const fd = fs.openSync(path.join(ws.root, name), "w");
      fs.ftruncateSync(fd, 17 * 1024 * 1024);
      fs.closeSync(fd);
    }
    const { result } = await replace("------- SEARCH\nfoo\n=======\nbar\n+++++++ REPLACE", "big.log");
    expect(result.isError).toBe(true);
    expect(result.content).toBe(
      'replace_in_file: "big.log" is larger than the 16777216 bytes (16 MiB) the file tools edit, so it cannot be edited with replace_in_file or rewritten with write_to_file. ' +
        "read_file with start_line and end_line shows any part of it. To change a few lines, run a command with execute_command and requires_approval true " +
        "(for example sed -i '120s/old/new/' big.log), which the person approves; or ask the person to change it.",
    );
    expect(result.content).not.toMatch(/use write_to_file/);
    const quoted = await replace("------- SEARCH\nfoo\n=======\nbar\n+++++++ REPLACE", "my logs/big's.log");
    expect(quoted.result.content).toContain(`sed -i '120s/old/new/' 'my logs/big'\\''s.log'`);
  });

  it("rejects malformed diffs and a missing file with a clear message", async () => {
    ws = makeWorkspace({ "math.js": source });
    expect((await replace("just some text")).result.content).toMatch(/holds no block/);
    expect((await replace("------- SEARCH\nfoo\n+++++++ REPLACE")).result.content).toMatch(/no "=======" line/);
    expect((await replace("------- SEARCH\nfoo\n=======\nbar\n")).result.content).toMatch(/not closed/);
    expect((await replace("------- SEARCH\nfoo\n=======\nbar\n+++++++ REPLACE", "missing.js")).result.content).toMatch(
      /does not exist; use write_to_file/,
    );
    expect(ws.read("math.js")).toBe(source);
    expect(fs.existsSync(path.join(ws.root, "missing.js"))).toBe(false);
  });

  it("falls back to the first and last lines as anchors when the lines between differ (Cline's block anchors)", async () => {
    const file = [
      "function area(r) {",
      "  // the area of a circle",
      "  const pi = 3.14159;",
      "  return pi * r * r;",
      "}",
      "",
    ].join("\n");
    ws = makeWorkspace({ "geo.js": file });
    // The model remembered the middle lines wrongly; the first and last lines pin the block.
    const diff =
      "------- SEARCH\nfunction area(r) {\n  // area\n  const pi = 3.14;\n  return pi * r ** 2;\n}\n=======\nfunction area(r) {\n  return Math.PI * r * r;\n}\n+++++++ REPLACE";
    const { result } = await replace(diff, "geo.js");
    expect(result.isError).toBe(false);
    expect(ws.read("geo.js")).toBe("function area(r) {\n  return Math.PI * r * r;\n}\n");
  });

  it("refuses a SEARCH that matches several places, saying where, and changes nothing", async () => {
    const file = ["if (a) {", "  count += 1;", "}", "if (b) {", "  count += 1;", "}", ""].join("\n");
    ws = makeWorkspace({ "dup.js": file });
    const { result, edited } = await replace(
      "------- SEARCH\n  count += 1;\n=======\n  count += 2;\n+++++++ REPLACE",
      "dup.js",
    );
    expect(result.isError).toBe(true);
    expect(result.content).toContain("matches 2 places in dup.js");
    expect(result.content).toContain("at lines 2, 5");
    expect(result.content).toContain("Add lines around the text");
    expect(ws.read("dup.js")).toBe(file);
    expect(edited).toEqual([]);
    // With context it matches one place.
    const ok = await replace(
      "------- SEARCH\nif (b) {\n  count += 1;\n=======\nif (b) {\n  count += 2;\n+++++++ REPLACE",
      "dup.js",
    );
    expect(ok.result.isError).toBe(false);
    expect(ws.read("dup.js")).toBe(file.replace("if (b) {\n  count += 1;", "if (b) {\n  count += 2;"));
  });

  it("refuses block anchors that fit several places", async () => {
    const file = ["{", "  a();", "}", "{", "  b();", "}", ""].join("\n");
    ws = makeWorkspace({ "blocks.js": file });
    const { result } = await replace("------- SEARCH\n{\n  c();\n}\n=======\n{}\n+++++++ REPLACE", "blocks.js");
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/matches 2 places .*by its first and last lines/);
    expect(ws.read("blocks.js")).toBe(file);
  });

  it("creates a new file from a single block with an empty SEARCH", async () => {
    ws = makeWorkspace();
    const { result, edited } = await replace("------- SEARCH\n=======\nfresh\n+++++++ REPLACE", "new/file.txt");
    expect(result.isError).toBe(false);
    expect(ws.read("new/file.txt")).toBe("fresh\n");
    expect(edited).toEqual(["new/file.txt"]);
  });
});
