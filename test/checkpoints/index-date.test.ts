// A folder the person changes in the same second as a scan, after which a save's own index write
// (here write-tree, as the cached trees are written) lands in the next second: git's untracked
// cache keeps folder times in whole seconds and trusted them once the index was dated later, so
// the next scan missed the person's new file. The real shadow repository and git.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ShadowGit } from "../../core/src/checkpoints/git-process.js";
import { makeManager, makeSandbox, write } from "./helpers.js";

/** Resolves just after the next whole second (the race needs two steps in one second). */
async function nextSecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 30));
}

const status = async (git: ShadowGit) =>
  (
    await git.run(["status", "--porcelain=v1", "-z", "--untracked-files=all"], { env: { GIT_OPTIONAL_LOCKS: "1" } })
  ).stdout
    .toString("utf8")
    .split("\0")
    .filter(Boolean);

describe("the shadow index's date after our own index writes", () => {
  it("a file made in a folder changed in the second of a scan is seen by the next scan, though the index was written a second later", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "f1.txt", "one\n");
    write(sb.workspace, "f2.txt", "two\n");
    const manager = makeManager(sb);
    await manager.ensureBaseline({ id: "t1", workspaceRoots: [sb.workspace] });
    const repoDir = sb.layout.checkpointRepoDir(sb.workspace);
    const git = new ShadowGit({
      gitDir: path.join(repoDir, ".git"),
      workTree: sb.workspace,
      emptyHooksDir: path.join(repoDir, "no-hooks"),
      baseEnv: sb.env,
    });
    await nextSecond();
    write(sb.workspace, "f1.txt", "one, changed\n");
    // The folder changes in this second before the scan too (the race needs its time unchanged).
    write(sb.workspace, "notes.txt", "new\n");
    await status(git);
    await git.run(["update-index", "--add", "--remove", "--replace", "-z", "--stdin"], { input: "f1.txt\0" });
    // In the same second: the person replaces f2.txt by a folder of their own.
    fs.rmSync(path.join(sb.workspace, "f2.txt"));
    write(sb.workspace, "f2.txt/mine.txt", "the person's\n");
    await nextSecond();
    await git.run(["write-tree"]);
    expect(await status(git)).toContain("?? f2.txt/mine.txt");
  });
});
