/**
 * Packs removed without writing anything (on a full disk, git's gc cannot write its new pack):
 * only a pack none of whose objects a ref, HEAD or the index reaches goes; a pack with one
 * reachable object, one only the index names, and one git was told to keep all stay. Real git.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ShadowGit } from "../../core/src/checkpoints/git-process.js";
import { removeUnreachablePacks } from "../../core/src/checkpoints/unreachable-packs.js";

function repo() {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "dline-unreachable-packs-")));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, encoding: "utf8" });
  git("init", "-q");
  const shadow = new ShadowGit({
    gitDir: path.join(dir, ".git"),
    workTree: dir,
    emptyHooksDir: path.join(dir, ".git", "empty"),
    baseEnv: { PATH: process.env.PATH },
  });
  /** One commit of `file` on `ref`, packed on its own: the pack's base name. */
  const packedCommit = (ref: string, file: string, content: string): string => {
    fs.writeFileSync(path.join(dir, file), content);
    const blob = git("hash-object", "-w", file).trim();
    const tree = execFileSync("git", ["mktree"], {
      cwd: dir,
      input: `100644 blob ${blob}\t${file}\n`,
      encoding: "utf8",
    }).trim();
    const commit = git("commit-tree", tree, "-m", ref).trim();
    git("update-ref", ref, commit);
    return packOf([blob, tree, commit]);
  };
  const packOf = (ids: string[]): string => {
    const base = path.join(dir, ".git", "objects", "pack", "pack");
    const name = execFileSync("git", ["pack-objects", "-q", base], { cwd: dir, input: ids.join("\n") + "\n" })
      .toString()
      .trim();
    git("prune-packed");
    return `pack-${name}`;
  };
  const packs = () =>
    fs
      .readdirSync(path.join(dir, ".git", "objects", "pack"))
      .filter((n) => n.endsWith(".pack"))
      .map((n) => n.slice(0, -".pack".length))
      .sort();
  return { dir, git, shadow, packedCommit, packOf, packs };
}

describe("packs nothing reaches", () => {
  it("goes without a new pack written; a pack with any reachable object, or kept, stays", async () => {
    const { dir, git, shadow, packedCommit, packOf, packs } = repo();
    const kept = packedCommit("refs/dline/tasks/kept/1", "a.txt", "kept task\n");
    const deleted = packedCommit("refs/dline/tasks/deleted/1", "b.txt", "deleted task\n");
    const marked = packedCommit("refs/dline/tasks/marked/1", "c.txt", "kept by a .keep\n");
    fs.writeFileSync(path.join(dir, ".git", "objects", "pack", `${marked}.keep`), "");
    // A blob only the index names (staged, in no commit).
    fs.writeFileSync(path.join(dir, "staged.txt"), "staged only\n");
    const staged = git("hash-object", "-w", "staged.txt").trim();
    const stagedPack = packOf([staged]);
    git("update-index", "--add", "--cacheinfo", `100644,${staged},staged.txt`);
    // The deleted task's ref goes (as a task deletion removes it), and the kept one's moves on.
    git("update-ref", "-d", "refs/dline/tasks/deleted/1");
    git("update-ref", "-d", "refs/dline/tasks/marked/1");
    const before = packs();
    expect(before).toEqual([kept, deleted, marked, stagedPack].sort());

    const freed = await removeUnreachablePacks(shadow, path.join(dir, ".git", "objects"));
    expect(freed).toBeGreaterThan(0);
    expect(packs()).toEqual([kept, marked, stagedPack].sort());
    expect(fs.existsSync(path.join(dir, ".git", "objects", "pack", `${deleted}.idx`))).toBe(false);
    git("fsck", "--strict", "--no-dangling", "--connectivity-only");
    expect(git("cat-file", "-p", `refs/dline/tasks/kept/1:a.txt`)).toBe("kept task\n");
    expect(git("cat-file", "-p", staged)).toBe("staged only\n");
  });

  it("leaves every pack to git when a multi-pack index names them", async () => {
    const { git, shadow, packedCommit, packs, dir } = repo();
    packedCommit("refs/dline/tasks/kept/1", "a.txt", "kept\n");
    packedCommit("refs/dline/tasks/deleted/1", "b.txt", "deleted\n");
    git("multi-pack-index", "write");
    git("update-ref", "-d", "refs/dline/tasks/deleted/1");
    const before = packs();
    expect(await removeUnreachablePacks(shadow, path.join(dir, ".git", "objects"))).toBe(0);
    expect(packs()).toEqual(before);
  });
});
