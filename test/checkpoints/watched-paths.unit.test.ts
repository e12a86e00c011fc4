/**
 * What a save after a command takes from the paths the workspace watcher saw (pathsToStage), on
 * a real folder: files of new folders are listed as a scan would list them, never inside a
 * nested repository, a skipped folder or a folder the exclusions leave out; a path that is gone
 * is taken as gone without asking the exclusions; a new file only when the exclusions let it in.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pathsToStage } from "../../core/src/checkpoints/watched-paths.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function workspace(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "dline-watched-"));
  made.push(root);
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

/** Exclusions that leave out exactly `excluded` (as check-ignore answers for the paths asked), recording each question. */
function exclusions(excluded: string[]) {
  const asked: string[][] = [];
  const excludedNow = async (paths: string[]) => {
    asked.push([...paths]);
    return new Set(paths.filter((p) => excluded.includes(p)));
  };
  return { asked, excludedNow };
}

const skipNodeModules = (_repoPath: string, name: string) => name === "node_modules";

describe("the paths a save after a command takes", () => {
  it("lists the files of a new folder, but not those of a nested repository or a skipped subfolder", async () => {
    const root = workspace({
      "gen/a.txt": "a",
      "gen/deep/b.txt": "b",
      "gen/node_modules/dep/index.js": "dep",
      "gen/vendor/lib/.git/HEAD": "ref: refs/heads/main\n",
      "gen/vendor/lib/c.txt": "c",
      "gen/sub/.git": "gitdir: ../../.git/modules/sub\n",
      "gen/sub/d.txt": "d",
    });
    const { asked, excludedNow } = exclusions([]);
    const taken = await pathsToStage(root, ["gen"], async () => false, excludedNow, skipNodeModules);
    expect(taken.sort()).toEqual(["gen/a.txt", "gen/deep/b.txt"]);
    expect(asked).toEqual([["gen"], expect.arrayContaining(["gen/a.txt", "gen/deep/b.txt"])]);
    expect(asked[1]).toHaveLength(2);
  });

  it("does not walk a new folder the exclusions leave out, nor one the skip rule names", async () => {
    const root = workspace({ "build/out.js": "x", "node_modules/dep/index.js": "y", "src/new.ts": "z" });
    const { asked, excludedNow } = exclusions(["build"]);
    const taken = await pathsToStage(
      root,
      ["build", "node_modules", "src/new.ts"],
      async () => false,
      excludedNow,
      skipNodeModules,
    );
    expect(taken).toEqual(["src/new.ts"]);
    // Only the folders were asked about first, then only the one new file.
    expect(asked).toEqual([["build", "node_modules"], ["src/new.ts"]]);
  });

  it("takes a path that is gone as gone, without asking the exclusions, before the new files", async () => {
    const root = workspace({ "kept.txt": "k", "new.txt": "n", "ignored.log": "l" });
    const { asked, excludedNow } = exclusions(["ignored.log"]);
    const inSnapshot = async (p: string) => p === "kept.txt";
    const taken = await pathsToStage(
      root,
      ["new.txt", "gone.txt", "kept.txt", "ignored.log"],
      inSnapshot,
      excludedNow,
      skipNodeModules,
    );
    // Snapshot paths (present or gone) first, as they are now; then the new files the exclusions let in.
    expect(taken).toEqual(["gone.txt", "kept.txt", "new.txt"]);
    expect(asked).toEqual([[], ["new.txt", "ignored.log"]]);
  });

  it("takes nothing when nothing changed", async () => {
    const root = workspace({ "a.txt": "a" });
    const { asked, excludedNow } = exclusions([]);
    expect(await pathsToStage(root, [], async () => true, excludedNow, skipNodeModules)).toEqual([]);
    expect(asked).toEqual([[], []]);
  });
});
