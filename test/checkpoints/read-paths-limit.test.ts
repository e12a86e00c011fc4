import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { bundleFixture } from "./driver-process.js";
import { makeSandbox, write } from "./helpers.js";

/**
 * A save that reads many files at once (a restore's undo checkpoint of a command's 5,000 new
 * files) under the process's file limit. Found in a bug hunt: every read was started at once,
 * the reads past the limit failed (EMFILE), and each such file was recorded as deleted; the
 * restores after that left thousands of files behind. Now the reads are bounded, and a read that
 * fails for any reason but the file being gone fails the save instead.
 */
let script = "";
beforeAll(async () => {
  script = await bundleFixture("read-paths");
});

describe("reading a save's files under a low file-descriptor limit", () => {
  it("reads every file (none taken for deleted)", () => {
    const sb = makeSandbox();
    const paths = Array.from({ length: 600 }, (_, i) => `gen/d${i % 10}/f${i}.txt`);
    for (const p of paths) write(sb.workspace, p, `${p}\n`);
    fs.rmSync(path.join(sb.workspace, "gen/d0/f0.txt"));
    const out = execFileSync("prlimit", ["--nofile=64:64", process.execPath, script, sb.workspace, paths.join(",")], {
      encoding: "utf8",
    });
    // The one file really gone, and no other.
    expect(JSON.parse(out)).toEqual({ deleted: 1 });
  });
});
