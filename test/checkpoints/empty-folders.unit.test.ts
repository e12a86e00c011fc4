import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeMissingFolders } from "../../core/src/checkpoints/empty-folders.js";

describe("makeMissingFolders", () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  function sandbox(): { ws: string; outside: string } {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-empty-folders-"));
    made.push(base);
    const ws = path.join(base, "ws");
    const outside = path.join(base, "outside");
    fs.mkdirSync(ws);
    fs.mkdirSync(outside);
    return { ws, outside };
  }

  it("makes the folders that are gone, their parents too, and answers them", () => {
    const { ws } = sandbox();
    fs.mkdirSync(path.join(ws, "there"));
    expect(makeMissingFolders(ws, ["a/b/c", "there", "x"])).toEqual(["a/b/c", "x"]);
    expect(fs.statSync(path.join(ws, "a/b/c")).isDirectory()).toBe(true);
    expect(fs.statSync(path.join(ws, "x")).isDirectory()).toBe(true);
  });

  it("never goes through a link, past a file, or out of the workspace", () => {
    const { ws, outside } = sandbox();
    fs.symlinkSync(outside, path.join(ws, "linked"));
    fs.writeFileSync(path.join(ws, "file"), "a file\n");
    expect(
      makeMissingFolders(ws, ["linked/old", "file/old", "../outside/up", "a/../../outside/up2", ".git/x"]),
    ).toEqual([]);
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.readFileSync(path.join(ws, "file"), "utf8")).toBe("a file\n");
    expect(fs.existsSync(path.join(ws, ".git"))).toBe(false);
  });
});
