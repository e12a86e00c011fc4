import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findTool, runTool } from "../../core/src/agent/tools/registry.js";
import { gitInit, makeContext, makeWorkspace, type TestWorkspace } from "./tool-helpers.js";

let ws: TestWorkspace;
afterEach(() => ws?.cleanup());

async function call(tool: string, input: Record<string, unknown>, ctx?: Awaited<ReturnType<typeof makeContext>>) {
  const context = ctx ?? (await makeContext(ws.root));
  return runTool(findTool(tool)!, input, context);
}

describe("read_file", () => {
  it("returns a file's text", async () => {
    ws = makeWorkspace({ "src/a.ts": "export const a = 1;\n" });
    expect(await call("read_file", { path: "src/a.ts" })).toEqual({ content: "export const a = 1;\n", isError: false });
  });

  it("reads a long file in windows of lines, saying how many lines it has and how to read on", async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`);
    ws = makeWorkspace({ "long.txt": `${lines.join("\n")}\n` });
    const first = (await call("read_file", { path: "long.txt" })).content;
    expect(first.startsWith("line 1\nline 2\n")).toBe(true);
    expect(first).toContain(
      "line 2000\n\n[Showing lines 1-2000 of 5000 of long.txt. To read more, call read_file with start_line 2001.]",
    );
    expect(first).not.toContain("line 2001\n");
    const middle = (await call("read_file", { path: "long.txt", start_line: 4001, end_line: "4003" })).content;
    expect(middle).toBe(
      "line 4001\nline 4002\nline 4003\n\n[Showing lines 4001-4003 of 5000 of long.txt. To read more, call read_file with start_line 4004.]",
    );
    const end = (await call("read_file", { path: "long.txt", start_line: 4999 })).content;
    expect(end).toBe("line 4999\nline 5000\n\n[Showing lines 4999-5000 of 5000 of long.txt.]");
    expect((await call("read_file", { path: "long.txt", start_line: 6000 })).content).toMatch(
      /has 5000 lines; start_line 6000 is past its end/,
    );
    expect((await call("read_file", { path: "long.txt", start_line: 0 })).content).toMatch(/must be a line number/);
  });

  it("reads no more characters than one result may take of the context window", async () => {
    const line = "x".repeat(99);
    ws = makeWorkspace({
      "wide.txt": `${Array.from({ length: 500 }, () => line).join("\n")}\n`,
      "minified.js": "y".repeat(50_000),
    });
    const ctx = { ...(await makeContext(ws.root)), maxResultChars: 5000 };
    const wide = (await call("read_file", { path: "wide.txt" }, ctx)).content;
    expect(wide.length).toBeLessThanOrEqual(5000);
    expect(wide).toMatch(
      /\[Showing lines 1-46 of 500 of wide\.txt\. To read more, call read_file with start_line 47\.\]$/,
    );
    const minified = (await call("read_file", { path: "minified.js" }, ctx)).content;
    expect(minified.length).toBeLessThanOrEqual(5000);
    expect(minified).toContain("Line 1 is 50000 characters long; only its first 4600 are shown.");
  });

  it("reports a missing file and a binary file as errors for the model", async () => {
    ws = makeWorkspace();
    fs.writeFileSync(path.join(ws.root, "bin.dat"), Buffer.from([1, 0, 2, 3]));
    const missing = await call("read_file", { path: "nope.txt" });
    expect(missing.isError).toBe(true);
    expect(missing.content).toMatch(/does not exist/);
    expect((await call("read_file", { path: "bin.dat" })).content).toMatch(/binary/);
    expect((await call("read_file", {})).content).toMatch(/"path" is required/);
  });
});

describe("read_file on a file too big to read whole (over 2 MiB)", () => {
  /** A log of 400,000 numbered lines, about 21 MB. */
  function writeHuge(): number {
    const lines = Array.from({ length: 400_000 }, (_, i) => `log line ${i + 1} ${"x".repeat(40)}`);
    const text = `${lines.join("\n")}\n`;
    ws.write("huge.txt", text);
    return Buffer.byteLength(text);
  }

  it("returns the window asked for, with the file's line count and how to read on", async () => {
    ws = makeWorkspace();
    const size = writeHuge();
    const first = await call("read_file", { path: "huge.txt", start_line: 1, end_line: 20 });
    expect(first.isError).toBe(false);
    const expected = Array.from({ length: 20 }, (_, i) => `log line ${i + 1} ${"x".repeat(40)}`).join("\n");
    expect(first.content).toBe(
      `${expected}\n\n[Showing lines 1-20 of 400000 of huge.txt (${size} bytes). To read more, call read_file with start_line 21.]`,
    );
    const last = await call("read_file", { path: "huge.txt", start_line: 399_999, end_line: 400_005 });
    expect(last.content).toBe(
      `log line 399999 ${"x".repeat(40)}\nlog line 400000 ${"x".repeat(40)}\n\n[Showing lines 399999-400000 of 400000 of huge.txt (${size} bytes).]`,
    );
    expect((await call("read_file", { path: "huge.txt", start_line: 400_001 })).content).toMatch(
      /has 400000 lines; start_line 400001 is past its end/,
    );
  });

  it("without a window, returns its first lines up to the budget and says which start_line reads on", async () => {
    ws = makeWorkspace();
    writeHuge();
    const ctx = { ...(await makeContext(ws.root)), maxResultChars: 20_000 };
    const head = (await call("read_file", { path: "huge.txt" }, ctx)).content;
    expect(head.length).toBeLessThanOrEqual(20_000);
    expect(head.startsWith("log line 1 x")).toBe(true);
    // 19,600 characters of 53-55-character lines.
    const shown =
      /\[Showing lines 1-(\d+) of 400000 of huge\.txt \(\d+ bytes\)\. To read more, call read_file with start_line (\d+)\.\]$/.exec(
        head,
      );
    expect(shown).not.toBeNull();
    expect(Number(shown![2])).toBe(Number(shown![1]) + 1);
    expect(head).toContain(`log line ${shown![1]} x`);
    expect(head).not.toContain(`log line ${shown![2]} x`);
    // The default window of 2,000 lines with the default budget of 100,000 characters.
    expect((await call("read_file", { path: "huge.txt" })).content).toMatch(/\[Showing lines 1-18\d\d of 400000 /);
  });

  it("cuts an enormous line with a note, and reads the lines after it", async () => {
    ws = makeWorkspace();
    const enormous = "y".repeat(40 * 1024 * 1024);
    ws.write("one-line.json", `${enormous}\nsecond line\n`);
    const ctx = { ...(await makeContext(ws.root)), maxResultChars: 5000 };
    const cut = (await call("read_file", { path: "one-line.json" }, ctx)).content;
    expect(cut).toBe(
      `${"y".repeat(4600)}\n\n[Showing lines 1-1 of 2 of one-line.json (${enormous.length + 13} bytes). Line 1 is ${enormous.length} bytes long; only its first 4600 characters are shown. To read more, call read_file with start_line 2.]`,
    );
    expect((await call("read_file", { path: "one-line.json", start_line: 2 }, ctx)).content).toBe(
      `second line\n\n[Showing lines 2-2 of 2 of one-line.json (${enormous.length + 13} bytes).]`,
    );
  });

  it("reads a window of a file too big to count without reading past it, and says the lines were not counted", async () => {
    ws = makeWorkspace();
    // 80 MiB: more than the 64 MiB counted after a window.
    const line = `${"z".repeat(1023)}\n`;
    const fd = fs.openSync(path.join(ws.root, "big.log"), "w");
    const block = Buffer.from(line.repeat(1024));
    for (let i = 0; i < 80; i++) fs.writeSync(fd, block);
    fs.closeSync(fd);
    const read = (await call("read_file", { path: "big.log", start_line: 3, end_line: 4 })).content;
    expect(read).toBe(
      `${"z".repeat(1023)}\n${"z".repeat(1023)}\n\n[Showing lines 3-4 of big.log (${80 * 1024 * 1024} bytes; its lines past line 4 were not counted). To read more, call read_file with start_line 5.]`,
    );
  });

  it("still refuses a big binary file", async () => {
    ws = makeWorkspace();
    const bytes = Buffer.alloc(3 * 1024 * 1024, 65);
    bytes[100] = 0;
    fs.writeFileSync(path.join(ws.root, "image.bin"), bytes);
    const result = await call("read_file", { path: "image.bin", start_line: 1, end_line: 5 });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/"image\.bin" is a binary file/);
  });
});

describe("paths outside the workspace", () => {
  it("refuses .., absolute paths elsewhere and symlinks that escape, for reads and writes", async () => {
    ws = makeWorkspace({ "inside.txt": "ok\n" });
    fs.symlinkSync(ws.outside, path.join(ws.root, "link-dir"));
    fs.symlinkSync(path.join(ws.outside, "secret.txt"), path.join(ws.root, "link-file"));
    fs.symlinkSync(path.join(ws.outside, "not-yet.txt"), path.join(ws.root, "dangling"));
    const attempts: [string, Record<string, unknown>][] = [
      ["read_file", { path: "../outside/secret.txt" }],
      ["read_file", { path: path.join(ws.outside, "secret.txt") }],
      ["read_file", { path: "link-dir/secret.txt" }],
      ["read_file", { path: "link-file" }],
      ["write_to_file", { path: "../outside/new.txt", content: "x" }],
      ["write_to_file", { path: "link-dir/new.txt", content: "x" }],
      ["write_to_file", { path: "link-dir/deeper/new.txt", content: "x" }],
      ["write_to_file", { path: "link-file", content: "overwritten" }],
      ["write_to_file", { path: "dangling", content: "x" }],
      ["replace_in_file", { path: "link-file", diff: "------- SEARCH\ntop secret\n=======\nx\n+++++++ REPLACE" }],
      ["list_files", { path: "link-dir", recursive: false }],
      ["search_files", { path: "..", regex: "secret" }],
    ];
    for (const [tool, input] of attempts) {
      const result = await call(tool, input);
      expect(result.isError, `${tool} ${JSON.stringify(input)}`).toBe(true);
      expect(result.content).toMatch(/outside the workspace/);
    }
    // A search walks over the links but never reads through one that leaves the workspace.
    const search = await call("search_files", { path: ".", regex: "secret" });
    expect(search.content).toBe("Found 0 results.");
    expect(fs.readdirSync(ws.outside)).toEqual(["secret.txt"]);
    expect(fs.readFileSync(path.join(ws.outside, "secret.txt"), "utf8")).toBe("top secret\n");
  });

  it("allows absolute paths and symlinks that stay inside", async () => {
    ws = makeWorkspace({ "real/file.txt": "inside\n" });
    fs.symlinkSync(path.join(ws.root, "real"), path.join(ws.root, "alias"));
    expect((await call("read_file", { path: path.join(ws.root, "real/file.txt") })).content).toBe("inside\n");
    expect((await call("read_file", { path: "alias/file.txt" })).content).toBe("inside\n");
    fs.symlinkSync(path.join(ws.root, "real/file.txt"), path.join(ws.root, "file-link.txt"));
    expect((await call("search_files", { path: ".", regex: "inside" })).content).toBe(
      "Found 2 results.\n\nfile-link.txt:1: inside\nreal/file.txt:1: inside",
    );
    expect((await call("search_files", { path: "real/file.txt", regex: "ins" })).content).toBe(
      "Found 1 result.\n\nreal/file.txt:1: inside",
    );
  });
});

describe(".agentignore", () => {
  it("blocks reads and writes of matching paths and hides them from listings and searches", async () => {
    ws = makeWorkspace({
      ".agentignore": "secrets/\n*.env\n",
      "secrets/key.txt": "needle\n",
      "app.env": "needle\n",
      "src/ok.ts": "needle\n",
    });
    const ctx = await makeContext(ws.root);
    for (const [tool, input] of [
      ["read_file", { path: "secrets/key.txt" }],
      ["read_file", { path: "app.env" }],
      ["write_to_file", { path: "new.env", content: "x" }],
      ["write_to_file", { path: "secrets/other.txt", content: "x" }],
      ["replace_in_file", { path: "app.env", diff: "------- SEARCH\nneedle\n=======\nx\n+++++++ REPLACE" }],
    ] as const) {
      const result = await call(tool, input, ctx);
      expect(result.isError, `${tool} ${JSON.stringify(input)}`).toBe(true);
      expect(result.content).toMatch(/\.agentignore/);
    }
    expect(fs.existsSync(path.join(ws.root, "new.env"))).toBe(false);
    expect(ctx.edited).toEqual([]);
    const listed = await call("list_files", { path: ".", recursive: true }, ctx);
    expect(listed.content.split("\n").sort()).toEqual([".agentignore", "src/ok.ts"]);
    const top = await call("list_files", { path: ".", recursive: false }, ctx);
    expect(top.content.split("\n")).toEqual([".agentignore", "src/"]);
    const found = await call("search_files", { path: ".", regex: "needle" }, ctx);
    expect(found.content).toBe("Found 1 result.\n\nsrc/ok.ts:1: needle");
  });
});

describe("file names with line breaks or control characters", () => {
  it("are listed and found as one quoted name the model can pass back, never as two entries", async () => {
    ws = makeWorkspace({ "plain.txt": "needle\n", "new\nline.txt": "needle\n", "esc\u001b[2Kape.txt": "x\n" });
    const top = await call("list_files", { path: ".", recursive: false });
    expect(top.content.split("\n").sort()).toEqual(['"esc\\u001b[2Kape.txt"', '"new\\nline.txt"', "plain.txt"]);
    const all = await call("list_files", { path: ".", recursive: true });
    expect(all.content.split("\n")).toContain('"new\\nline.txt"');
    const found = await call("search_files", { path: ".", regex: "needle" });
    expect(found.content.split("\n").slice(2).sort()).toEqual(['"new\\nline.txt":1: needle', "plain.txt:1: needle"]);
    // The quoted name, decoded as a tool's JSON input decodes it, reads the file.
    const read = await call("read_file", { path: JSON.parse('"new\\nline.txt"') as string });
    expect(read.content).toBe("needle\n");
  });
});

describe("symlinks inside the workspace", () => {
  it("cannot reach a file .agentignore blocks", async () => {
    ws = makeWorkspace({ ".agentignore": "secrets/\n", "secrets/key.txt": "k\n" });
    fs.symlinkSync(path.join(ws.root, "secrets/key.txt"), path.join(ws.root, "innocent.txt"));
    const result = await call("read_file", { path: "innocent.txt" });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/secrets\/key\.txt" is blocked by the workspace's ignore file \(\.agentignore/);
  });

  it("edits the file a link points at, keeps the link and records the real path", async () => {
    ws = makeWorkspace({ "real/config.json": "{}\n" });
    fs.symlinkSync("real/config.json", path.join(ws.root, "config.json"));
    const ctx = await makeContext(ws.root);
    expect((await call("write_to_file", { path: "config.json", content: '{"a":1}\n' }, ctx)).isError).toBe(false);
    expect(fs.lstatSync(path.join(ws.root, "config.json")).isSymbolicLink()).toBe(true);
    expect(ws.read("real/config.json")).toBe('{"a":1}\n');
    expect(ctx.edited).toEqual(["real/config.json"]);
  });
});

describe("write_to_file", () => {
  it("creates folders, replaces content, keeps the mode and records the edited paths", async () => {
    ws = makeWorkspace({ "run.sh": "echo old\n" });
    fs.chmodSync(path.join(ws.root, "run.sh"), 0o755);
    const ctx = await makeContext(ws.root);
    expect((await call("write_to_file", { path: "a/b/c.txt", content: "héllo\n" }, ctx)).content).toMatch(
      /Created a\/b\/c\.txt/,
    );
    expect((await call("write_to_file", { path: "run.sh", content: "echo new\n" }, ctx)).content).toMatch(
      /Replaced run\.sh/,
    );
    expect(ws.read("a/b/c.txt")).toBe("héllo\n");
    expect(ws.read("run.sh")).toBe("echo new\n");
    expect(fs.statSync(path.join(ws.root, "run.sh")).mode & 0o777).toBe(0o755);
    expect(ctx.edited).toEqual(["a/b/c.txt", "run.sh"]);
    expect(fs.readdirSync(path.join(ws.root, "a/b"))).toEqual(["c.txt"]); // no temp file left
  });
});

describe.each(["walk", "git"] as const)("list_files and search_files honour .gitignore (%s mode)", (mode) => {
  function setup() {
    ws = makeWorkspace({
      ".gitignore": "node_modules/\n*.log\n",
      "src/main.ts": "const answer = 42;\nfunction hello() {}\n",
      "src/util.py": "answer = 42\n",
      "src/nested/.gitignore": "generated.ts\n",
      "src/nested/generated.ts": "const answer = 42;\n",
      "src/nested/kept.ts": "// answer\n",
      "node_modules/lib/index.js": "const answer = 42;\n",
      "debug.log": "answer\n",
      "README.md": "The answer.\n",
    });
    if (mode === "git") gitInit(ws.root);
  }

  it("lists the top level and, recursively, the files git would see", async () => {
    setup();
    const top = await call("list_files", { path: ".", recursive: false });
    expect(top.content.split("\n")).toEqual([".gitignore", "README.md", "debug.log", "node_modules/", "src/"]);
    const all = await call("list_files", { path: ".", recursive: "true" });
    expect(all.content.split("\n")).toEqual([
      ".gitignore",
      "README.md",
      "src/main.ts",
      "src/nested/.gitignore",
      "src/nested/kept.ts",
      "src/util.py",
    ]);
    const sub = await call("list_files", { path: "src/nested", recursive: true });
    expect(sub.content.split("\n")).toEqual([".gitignore", "kept.ts"]);
  });

  it("searches with a regex and a file pattern", async () => {
    setup();
    const all = await call("search_files", { path: ".", regex: "answer\\s*=\\s*\\d+" });
    expect(all.content).toBe("Found 2 results.\n\nsrc/main.ts:1: const answer = 42;\nsrc/util.py:1: answer = 42");
    const ts = await call("search_files", { path: "src", regex: "answer", file_pattern: "*.ts" });
    expect(ts.content).toBe("Found 2 results.\n\nsrc/main.ts:1: const answer = 42;\nsrc/nested/kept.ts:1: // answer");
    expect((await call("search_files", { path: ".", regex: "nothing-like-this" })).content).toBe("Found 0 results.");
    const bad = await call("search_files", { path: ".", regex: "(unclosed" });
    expect(bad.isError).toBe(true);
    expect(bad.content).toMatch(/invalid regular expression/);
  });
});

describe("search_files on big files and what it cannot search", () => {
  it("finds a match in a file over 1 MiB, at its line number", async () => {
    ws = makeWorkspace({ "small.txt": "nothing\n" });
    ws.write("many.txt", `${Array.from({ length: 200_000 }, (_, i) => `row ${i}`).join("\n")}\n`);
    expect(fs.statSync(path.join(ws.root, "many.txt")).size).toBeGreaterThan(1024 * 1024);
    expect((await call("search_files", { path: ".", regex: "199999" })).content).toBe(
      "Found 1 result.\n\nmany.txt:200000: row 199999",
    );
    expect((await call("search_files", { path: "many.txt", regex: "^row 1000[01]$" })).content).toBe(
      "Found 2 results.\n\nmany.txt:10001: row 10000\nmany.txt:10002: row 10001",
    );
  });

  it("in a big file, skips and counts lines longer than 8,192 characters, even one of many megabytes", async () => {
    ws = makeWorkspace();
    ws.write(
      "bundle.js",
      `first needle\r\n${"n".repeat(10_000)}needle\r\n${"m".repeat(5 * 1024 * 1024)} needle\nlast needle`,
    );
    expect((await call("search_files", { path: ".", regex: "needle" })).content).toBe(
      "Found 2 results.\n\nbundle.js:1: first needle\nbundle.js:4: last needle\n\n" +
        "(2 lines longer than 8192 characters, minified or generated code, were not searched.)",
    );
  });

  it("names the files it did not search: binary, past the size limit", async () => {
    ws = makeWorkspace({ "notes.txt": "no match here\n" });
    const binary = Buffer.from("needle\0needle\n");
    fs.writeFileSync(path.join(ws.root, "image.png"), binary);
    fs.writeFileSync(path.join(ws.root, "big.bin"), Buffer.concat([binary, Buffer.alloc(2 * 1024 * 1024, 65)]));
    // Sparse: 300 MiB on paper, nothing on the disk.
    const fd = fs.openSync(path.join(ws.root, "huge.log"), "w");
    fs.ftruncateSync(fd, 300 * 1024 * 1024);
    fs.closeSync(fd);
    // A pipe is not listed, hence not named.
    execFileSync("mkfifo", [path.join(ws.root, "pipe.txt")]);
    expect((await call("search_files", { path: ".", regex: "needle" })).content).toBe(
      "Found 0 results.\n\n(Not searched: 1 file larger than 256 MiB: huge.log; 2 files binary: big.bin, image.png.)",
    );
    // Past five, the rest are counted.
    for (let i = 0; i < 7; i++) fs.writeFileSync(path.join(ws.root, `blob${i}.dat`), "\0");
    expect((await call("search_files", { path: ".", regex: "needle", file_pattern: "*.dat" })).content).toBe(
      "Found 0 results.\n\n(Not searched: 7 files binary: blob0.dat, blob1.dat, blob2.dat, blob3.dat, blob4.dat and 2 more.)",
    );
  });

  it("says when it searched only the first 20,000 files", async () => {
    ws = makeWorkspace();
    for (let i = 0; i < 20_010; i++) {
      const dir = path.join(ws.root, `d${Math.floor(i / 1000)}`);
      if (i % 1000 === 0) fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, `f${i}.txt`), "x\n");
    }
    expect((await call("search_files", { path: ".", regex: "needle" })).content).toBe(
      "Found 0 results.\n\n(Only the first 20000 files under . were searched: a narrower path or a file_pattern searches the rest.)",
    );
  });
});

describe("an edit waiting for the checkpoints", () => {
  // An edit waits for the task's baseline (a first scan of a large workspace takes seconds):
  // a task stopped meanwhile (Ctrl-C) wrote the file once the wait ended, with no checkpoint of
  // what it held before.
  it("writes nothing when the task is stopped while it waits", async () => {
    ws = makeWorkspace({ "precious.txt": "the person's original\n" });
    let release: (() => void) | undefined;
    const ctx = await makeContext(ws.root, {
      beforeEdit: () => new Promise<void>((resolve) => (release = resolve)),
    });
    const result = call("write_to_file", { path: "precious.txt", content: "overwritten\n" }, ctx);
    while (!release) await new Promise((resolve) => setTimeout(resolve, 10));
    ctx.controller.abort(new Error("cancelled"));
    release();
    await result.catch(() => undefined);
    expect(ws.read("precious.txt")).toBe("the person's original\n");
    expect(ctx.edited).toEqual([]);
  });

  it("does not write over a change made while it waited", async () => {
    ws = makeWorkspace({ "notes.txt": "before\n" });
    let release: (() => void) | undefined;
    const ctx = await makeContext(ws.root, {
      beforeEdit: () => new Promise<void>((resolve) => (release = resolve)),
    });
    const result = call("write_to_file", { path: "notes.txt", content: "the tool's\n" }, ctx);
    while (!release) await new Promise((resolve) => setTimeout(resolve, 10));
    ws.write("notes.txt", "the person's edit meanwhile\n");
    release();
    const answer = await result.catch((err: Error) => ({ content: err.message, isError: true }));
    expect(answer.isError).toBe(true);
    expect(ws.read("notes.txt")).toBe("the person's edit meanwhile\n");
  });
});
