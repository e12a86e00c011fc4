import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  emptyFoldersMadeSince,
  foldersToMake,
  makeMissingFolders,
  removeEmptyFolders,
  removeFoldersMadeSince,
} from "../../core/src/checkpoints/empty-folders.js";

describe("making and removing the empty folders a restore brings back", () => {
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

  it("finds and removes only empty folders made since, not recorded ones, nor one with a file, nor past a link", async () => {
    const { ws, outside } = sandbox();
    fs.mkdirSync(path.join(ws, "old/empty"), { recursive: true });
    fs.mkdirSync(path.join(ws, "node_modules/x"), { recursive: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const since = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    fs.mkdirSync(path.join(ws, "a/b/c"), { recursive: true });
    fs.mkdirSync(path.join(ws, "old/made"));
    fs.mkdirSync(path.join(ws, "recorded"));
    fs.mkdirSync(path.join(ws, "filled"));
    fs.mkdirSync(path.join(outside, "far/made"), { recursive: true });
    fs.symlinkSync(path.join(outside, "far"), path.join(ws, "link"));
    const skip = (_: string, name: string) => name === "node_modules";
    const found = await emptyFoldersMadeSince(ws, since, ["recorded"], skip, new Set());
    expect(found.sort()).toEqual(["a/b/c", "filled", "old/made"]);
    fs.writeFileSync(path.join(ws, "filled/file.txt"), "put back by the restore\n");
    expect(removeFoldersMadeSince(ws, [...found, "link/made"], since, ["recorded"]).sort()).toEqual([
      "a",
      "a/b",
      "a/b/c",
      "old/made",
    ]);
    for (const kept of ["old/empty", "recorded", "filled", "node_modules/x"])
      expect(fs.statSync(path.join(ws, kept)).isDirectory()).toBe(true);
    expect(fs.statSync(path.join(outside, "far/made")).isDirectory()).toBe(true);
  });

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

  it("foldersToMake names what makeMissingFolders may make, parents first, and where a link or file stands", () => {
    const { ws, outside } = sandbox();
    fs.mkdirSync(path.join(ws, "a"));
    fs.mkdirSync(path.join(ws, "there"));
    fs.symlinkSync(outside, path.join(ws, "linked"));
    fs.writeFileSync(path.join(ws, "file"), "a file\n");
    const listed = ["a/b/c", "a/b/d", "there", "x", "linked/old", "file/old", "../up", ".git/x"];
    // A restore may delete the link or the file (a command's) before it makes the folders.
    expect(foldersToMake(ws, listed)).toEqual([
      "a/b",
      "a/b/c",
      "a/b/d",
      "file",
      "file/old",
      "linked",
      "linked/old",
      "x",
    ]);
    makeMissingFolders(ws, listed);
    expect(foldersToMake(ws, listed)).toEqual(["file", "file/old", "linked", "linked/old"]);
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it("removeEmptyFolders takes children before parents, and keeps a folder with something in it", () => {
    const { ws } = sandbox();
    fs.mkdirSync(path.join(ws, "a/b/c"), { recursive: true });
    fs.mkdirSync(path.join(ws, "kept/inner"), { recursive: true });
    fs.writeFileSync(path.join(ws, "kept/inner/note.txt"), "put there since\n");
    expect(removeEmptyFolders(ws, ["a", "a/b", "a/b/c", "kept", "kept/inner", "missing"])).toEqual([
      "a/b/c",
      "a/b",
      "a",
    ]);
    expect(fs.existsSync(path.join(ws, "a"))).toBe(false);
    expect(fs.readFileSync(path.join(ws, "kept/inner/note.txt"), "utf8")).toBe("put there since\n");
  });

  it("removeEmptyFolders never goes through a link or out of the workspace", () => {
    const { ws, outside } = sandbox();
    fs.mkdirSync(path.join(outside, "old"));
    fs.mkdirSync(path.join(outside, "up"));
    fs.symlinkSync(outside, path.join(ws, "linked"));
    fs.mkdirSync(path.join(ws, "real"));
    expect(removeEmptyFolders(ws, ["linked/old", "linked", "../outside/up", "real/../../outside/up"])).toEqual([]);
    expect(fs.readdirSync(outside).sort()).toEqual(["old", "up"]);
    expect(fs.lstatSync(path.join(ws, "linked")).isSymbolicLink()).toBe(true);
  });
});
