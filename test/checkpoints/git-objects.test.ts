/**
 * The git-less turn save writes git objects itself: its trees must be exactly the trees git
 * writes for the same files, and its objects must be objects git reads and verifies.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readPathChanges } from "../../core/src/checkpoints/fast-commit.js";
import { writePack } from "../../core/src/checkpoints/pack-writer.js";
import { ObjectBatch, TreeEditor, TreeUnavailable } from "../../core/src/checkpoints/tree-editor.js";
import { write } from "./helpers.js";
import { nth } from "../helpers/items.js";

function repo(): { dir: string; git: (...args: string[]) => string } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "dline-objects-")));
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: dir,
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_AUTHOR_NAME: "a",
        GIT_AUTHOR_EMAIL: "a@b",
        GIT_COMMITTER_NAME: "a",
        GIT_COMMITTER_EMAIL: "a@b",
      },
    });
  git("init", "-q");
  return { dir, git };
}

describe("objects written without git", () => {
  it("edits trees exactly as git writes them and packs git verifies: changes, additions, deletions, folders emptied or replaced, modes", async () => {
    const { dir, git } = repo();
    const start: Record<string, string> = {
      "README.md": "readme\n",
      "src/a.ts": "a\n",
      "src/b.ts": "b\n",
      "src/deep/x/y.ts": "y\n",
      "gone/only.txt": "only\n",
      "becomes-file/inner.txt": "inner\n",
      "name with space/ü.txt": "unicode\n",
      "src.ts": "sorts between src/ and src-other\n",
      "src-other/z.ts": "z\n",
    };
    for (const [p, c] of Object.entries(start)) write(dir, p, c);
    git("add", "-A");
    git("commit", "-qm", "start");
    const baseTree = git("rev-parse", "HEAD^{tree}").trim();

    // The edits a turn's tools might make.
    write(dir, "src/a.ts", "a changed\n");
    write(dir, "src/new/deeper/n.ts", "new\n");
    fs.rmSync(path.join(dir, "gone"), { recursive: true });
    fs.rmSync(path.join(dir, "becomes-file"), { recursive: true });
    write(dir, "becomes-file", "now a file\n");
    fs.chmodSync(path.join(dir, "src/b.ts"), 0o755);
    fs.symlinkSync("src/a.ts", path.join(dir, "link-to-a"));
    write(dir, "name with space/ü.txt", "unicode changed\n");
    fs.rmSync(path.join(dir, "src/deep/x/y.ts"));
    const paths = [
      "src/a.ts",
      "src/new/deeper/n.ts",
      "gone/only.txt",
      "becomes-file",
      "src/b.ts",
      "link-to-a",
      "name with space/ü.txt",
      "src/deep/x/y.ts",
    ];

    const editor = new TreeEditor(path.join(dir, ".git", "objects"));
    const batch = new ObjectBatch();
    const tree = editor.apply(baseTree, await readPathChanges(dir, paths), batch);
    await writePack(path.join(dir, ".git", "objects"), batch.objects);

    git("add", "-A");
    expect(tree).toBe(git("write-tree").trim());
    // Every object is in the pack, which git verifies and reads back.
    const pack = fs.readdirSync(path.join(dir, ".git", "objects", "pack")).find((n) => n.endsWith(".idx"))!;
    const listed = git("verify-pack", "-v", path.join(".git", "objects", "pack", pack));
    for (const id of batch.objects.keys()) expect(listed).toContain(id);
    expect(git("fsck", "--full", "--no-dangling").trim()).toBe("");
    expect(git("cat-file", "-p", `${tree}:src/new/deeper/n.ts`)).toBe("new\n");
    expect(git("ls-tree", tree, "link-to-a")).toMatch(/^120000 blob /);
    expect(git("ls-tree", tree, "src/b.ts")).toMatch(/^100755 blob /);
  });

  it("builds the next turn on the trees it wrote, and refuses a tree it cannot read (packed by git)", async () => {
    const { dir, git } = repo();
    for (let i = 0; i < 30; i++) write(dir, `pkg-${i % 3}/f${i}.ts`, `${i}\n`);
    git("add", "-A");
    git("commit", "-qm", "start");
    const objects = path.join(dir, ".git", "objects");
    const editor = new TreeEditor(objects);
    let tree = git("rev-parse", "HEAD^{tree}").trim();
    for (let turn = 0; turn < 3; turn++) {
      write(dir, "pkg-1/f1.ts", `turn ${turn}\n`);
      const batch = new ObjectBatch();
      tree = editor.apply(tree, await readPathChanges(dir, ["pkg-1/f1.ts"]), batch);
      await writePack(objects, batch.objects);
    }
    git("add", "-A");
    expect(tree).toBe(git("write-tree").trim());
    expect(git("fsck", "--full", "--no-dangling").trim()).toBe("");

    // A fresh editor (another process) finds the base packed, not loose: the caller falls back to git.
    git("gc", "-q");
    const base = git("rev-parse", "HEAD^{tree}").trim();
    expect(() =>
      new TreeEditor(objects).apply(base, [{ path: "pkg-0/f0.ts", mode: "delete" }], new ObjectBatch()),
    ).toThrow(TreeUnavailable);
  });

  it("packs large objects too (multi-byte size headers, compressed off the event loop)", async () => {
    const { dir, git } = repo();
    const objects = path.join(dir, ".git", "objects");
    const batch = new ObjectBatch();
    // Sizes around the header's 4- and 7-bit boundaries, and past the synchronous limit (256 KiB).
    const contents = [0, 15, 16, 2047, 70_000, 300_000].map((n, i) =>
      Buffer.from(Array.from({ length: n }, (_, k) => String.fromCharCode(32 + ((k * 7 + i) % 90))).join("")),
    );
    const ids = contents.map((c) => batch.put("blob", c));
    await writePack(objects, batch.objects);
    const pack = fs.readdirSync(path.join(objects, "pack")).find((n) => n.endsWith(".idx"))!;
    git("verify-pack", path.join(".git", "objects", "pack", pack));
    ids.forEach((id, i) => expect(git("cat-file", "-p", id)).toBe(nth(contents, i, "content").toString()));
  });
});

describe("a baseline's trees built in the process", () => {
  it("are the trees git write-tree makes of the same index, odd names, links and modes included, in one pack", async () => {
    const { ShadowGit } = await import("../../core/src/checkpoints/git-process.js");
    const { treeOfIndex } = await import("../../core/src/checkpoints/index-tree.js");
    const { dir, git } = repo();
    for (let i = 0; i < 50; i++) write(dir, `src/m${i % 7}/f${i}.ts`, `export const x = ${i};\n`);
    write(dir, "a b/c#d/e;f.txt", "odd\n");
    write(dir, "tool.sh", "#!/bin/sh\n");
    fs.chmodSync(path.join(dir, "tool.sh"), 0o755);
    fs.symlinkSync("src/m0/f0.ts", path.join(dir, "link"));
    // A name that is not valid UTF-8 (Latin-1 "café"), which git stores byte for byte.
    fs.writeFileSync(
      Buffer.concat([Buffer.from(dir + "/caf"), Buffer.from([0xe9]), Buffer.from(".txt")]),
      "latin-1 name\n",
    );
    git("add", "-A");
    const expected = git("write-tree").trim();
    const shadow = new ShadowGit({
      gitDir: path.join(dir, ".git"),
      workTree: dir,
      emptyHooksDir: path.join(dir, ".git", "empty"),
      baseEnv: { PATH: process.env.PATH },
    });
    const batch = new ObjectBatch();
    const tree = await treeOfIndex(shadow, batch);
    expect(tree).toBe(expected);
    await writePack(path.join(dir, ".git", "objects"), batch.objects);
    git("fsck", "--strict", "--no-dangling");
  });
});
