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
import { ObjectReader } from "../../core/src/checkpoints/loose-objects.js";
import { PackReader } from "../../core/src/checkpoints/pack-reader.js";
import { ObjectBatch, TreeEditor, TreeUnavailable } from "../../core/src/checkpoints/tree-editor.js";
import { changedPaths } from "../../core/src/checkpoints/tree-diff.js";
import { write } from "./helpers.js";
import { nth, firstOf } from "../helpers/items.js";

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

    const editor = new TreeEditor(new ObjectReader(path.join(dir, ".git", "objects")));
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

  it("builds the next turn on the trees it wrote, then on trees git packed (deltas), and refuses a tree it cannot read", async () => {
    const { dir, git } = repo();
    for (let i = 0; i < 30; i++) write(dir, `pkg-${i % 3}/f${i}.ts`, `${i}\n`);
    git("add", "-A");
    git("commit", "-qm", "start");
    const objects = path.join(dir, ".git", "objects");
    const editor = new TreeEditor(new ObjectReader(objects));
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

    // A fresh editor (another process) finds the base packed by git, its trees stored as deltas.
    git("commit", "-qm", "turns");
    git("gc", "-q", "--aggressive");
    expect(fs.readdirSync(path.join(objects))).toEqual(expect.not.arrayContaining(["17"]));
    const base = git("rev-parse", "HEAD^{tree}").trim();
    const next = new TreeEditor(new ObjectReader(objects));
    expect(next.treeOfCommit(git("rev-parse", "HEAD").trim())).toBe(base);
    const batch = new ObjectBatch();
    const edited = next.apply(base, [{ path: "pkg-0/f0.ts", mode: "delete" }], batch);
    await writePack(objects, batch.objects);
    git("rm", "-q", "--cached", "pkg-0/f0.ts");
    expect(edited).toBe(git("write-tree").trim());

    // A tree that is nowhere (a damaged repository): the caller falls back to git.
    expect(() =>
      next.apply("0123456789012345678901234567890123456789", [{ path: "x", mode: "delete" }], new ObjectBatch()),
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
    ids.forEach((id, i) => expect(git("cat-file", "-p", id)).toBe(nth(contents, i, "written content").toString()));
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

describe("objects read from packs without git", () => {
  /** Every object of the repository, as git prints it (one `cat-file --batch` run). */
  function everyObject(dir: string): { id: string; type: string; body: Buffer }[] {
    const out = execFileSync("git", ["cat-file", "--batch-all-objects", "--batch"], {
      cwd: dir,
      maxBuffer: 256 * 1024 * 1024,
    });
    const objects: { id: string; type: string; body: Buffer }[] = [];
    let pos = 0;
    while (pos < out.length) {
      const eol = out.indexOf(10, pos);
      const [id, type, size] = firstOf(out.toString("latin1", pos, eol).split(" "), 3, "field of a cat-file header");
      const body = out.subarray(eol + 1, eol + 1 + Number(size));
      objects.push({ id: id, type: type, body });
      pos = eol + 1 + Number(size) + 1;
    }
    return objects;
  }

  it("reads every object git packed, exactly: deltas on offsets (chains of them) and on ids, all three kinds", () => {
    const { dir, git } = repo();
    // Many versions of the same trees and files: git stores most of them as deltas.
    for (let rev = 0; rev < 30; rev++) {
      for (let i = 0; i < 12; i++)
        write(dir, `src/m${i % 4}/f${i}.ts`, `export const x = ${i};\n`.repeat(20) + `// revision ${rev % (i + 2)}\n`);
      write(dir, `src/m${rev % 4}/added-${rev}.ts`, `rev ${rev}\n`.repeat(rev));
      write(dir, "big.txt", "0123456789abcdef".repeat(5000) + `${rev}\n`);
      git("add", "-A");
      git("commit", "-qm", `revision ${rev}`);
    }
    const objects = path.join(dir, ".git", "objects");
    const runs: [string, string[]][] = [
      ["deltas on offsets", ["repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50"]],
      ["deltas on ids", ["-c", "repack.useDeltaBaseOffset=false", "repack", "-a", "-d", "-f", "-q", "--depth=50"]],
    ];
    for (const [label, args] of runs) {
      git(...args);
      const idx = fs.readdirSync(path.join(objects, "pack")).filter((n) => n.endsWith(".idx"));
      expect(idx, label).toHaveLength(1);
      // verify-pack -v lists a delta with its chain depth and base: some are deltas of deltas.
      const depths = git("verify-pack", "-v", path.join(objects, "pack", nth(idx, 0, "pack index")))
        .split("\n")
        .map((l) => /^[0-9a-f]{40} \w+ +\d+ \d+ \d+ (\d+) [0-9a-f]{40}$/.exec(l)?.[1])
        .filter((d): d is string => d !== undefined)
        .map(Number);
      expect(Math.max(...depths), label).toBeGreaterThan(2);
      const reader = new PackReader(objects);
      const all = everyObject(dir);
      expect(new Set(all.map((o) => o.type))).toEqual(new Set(["blob", "tree", "commit"]));
      for (const { id, type, body } of all) {
        const read = reader.read(id);
        expect(read?.type, `${label}: ${id}`).toBe(type);
        expect(read?.body.equals(body), `${label}: ${id}`).toBe(true);
      }
      // An id no pack holds.
      expect(reader.read("0123456789012345678901234567890123456789")).toBeUndefined();
    }
  });

  it("reads from a baseline-sized pack without holding its whole index: only the ids its look-ups need", async () => {
    const { dir } = repo();
    const objects = path.join(dir, ".git", "objects");
    // A baseline's pack at 27,000 files: about 40,000 objects, an index of 1.1 MB.
    const batch = new ObjectBatch();
    const ids = Array.from({ length: 40_000 }, (_, i) => batch.put("blob", Buffer.from(`file ${i}\n`)));
    await writePack(objects, batch.objects);
    // A second, small pack: a look-up searches both.
    const later = new ObjectBatch();
    const laterId = later.put("blob", Buffer.from("written by a turn\n"));
    await writePack(objects, later.objects);

    const reader = new PackReader(objects);
    const before = process.memoryUsage().arrayBuffers;
    const sample = [0, 1, 9_999, 20_000, 39_999].map((i) => nth(ids, i, "blob id"));
    for (const id of sample) expect(reader.read(id)?.body.toString()).toBe(`file ${ids.indexOf(id)}\n`);
    expect(reader.read(laterId)?.body.toString()).toBe("written by a turn\n");
    expect(reader.read("0123456789012345678901234567890123456789")).toBeUndefined();
    // The whole index read at once (28 bytes an object) was 1.1 MB outside the heap from the
    // first read on; the ids sharing a first byte with those looked up are a few KB.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(256 * 1024);
  });

  it("finds packs written after its first read, and answers nothing (not a wrong object) for a damaged pack", async () => {
    const { dir, git } = repo();
    write(dir, "a.txt", "a\n");
    git("add", "-A");
    git("commit", "-qm", "one");
    git("repack", "-a", "-d", "-q");
    const objects = path.join(dir, ".git", "objects");
    const reader = new PackReader(objects);
    const first = git("rev-parse", "HEAD").trim();
    expect(reader.read(first)?.type).toBe("commit");
    const batch = new ObjectBatch();
    const id = batch.put("blob", Buffer.from("written later\n"));
    await writePack(objects, batch.objects);
    expect(reader.read(id)?.body.toString()).toBe("written later\n");

    // Flip bytes inside every pack's data (after the 12-byte header): the content no longer matches its id.
    const fresh = new PackReader(objects);
    for (const name of fs.readdirSync(path.join(objects, "pack")).filter((n) => n.endsWith(".pack"))) {
      const file = path.join(objects, "pack", name);
      fs.chmodSync(file, 0o600);
      const data = fs.readFileSync(file);
      for (let i = 14; i < data.length - 20; i += 7) data.writeUInt8(data.readUInt8(i) ^ 0xff, i);
      fs.writeFileSync(file, data);
    }
    expect(fresh.read(first)).toBeUndefined();
    expect(fresh.read(id)).toBeUndefined();
  });
});

describe("what changed between two snapshots, read without git", () => {
  it("names the paths git diff-tree names: edits, modes, links, files become folders and folders files, deep folders added and removed", () => {
    const { dir, git } = repo();
    write(dir, "same/deep/keep.txt", "kept\n");
    write(dir, "edit.txt", "one\n");
    write(dir, "mode.sh", "echo\n");
    write(dir, "becomes-folder", "a file\n");
    write(dir, "becomes-file/inside/x.txt", "x\n");
    write(dir, "becomes-file/y.txt", "y\n");
    write(dir, "gone/deep/z.txt", "z\n");
    write(dir, "caf\u00e9.txt", "accent\n");
    fs.symlinkSync("edit.txt", path.join(dir, "link"));
    git("add", "-A");
    git("commit", "-qm", "before");
    write(dir, "edit.txt", "two\n");
    fs.chmodSync(path.join(dir, "mode.sh"), 0o755);
    fs.rmSync(path.join(dir, "becomes-folder"));
    write(dir, "becomes-folder/now.txt", "now\n");
    fs.rmSync(path.join(dir, "becomes-file"), { recursive: true });
    write(dir, "becomes-file", "a file now\n");
    fs.rmSync(path.join(dir, "gone"), { recursive: true });
    write(dir, "new/a/b/c.txt", "c\n");
    write(dir, "caf\u00e9.txt", "accent changed\n");
    fs.rmSync(path.join(dir, "link"));
    fs.symlinkSync("mode.sh", path.join(dir, "link"));
    git("add", "-A");
    git("commit", "-qm", "after");
    const before = git("rev-parse", "HEAD~1^{tree}").trim();
    const after = git("rev-parse", "HEAD^{tree}").trim();
    const editor = new TreeEditor(new ObjectReader(path.join(dir, ".git", "objects")));
    const byGit = git("-c", "core.quotePath=false", "diff-tree", "-r", "--name-only", "--no-renames", before, after)
      .split("\n")
      .filter(Boolean);
    expect(byGit).toHaveLength(11);
    const mine = changedPaths((id) => editor.readTree(id), before, after);
    expect([...mine].sort()).toEqual([...byGit].sort());
    expect(changedPaths((id) => editor.readTree(id), after, after)).toEqual([]);
    expect([...changedPaths((id) => editor.readTree(id), after, before)].sort()).toEqual([...byGit].sort());
  });
});
