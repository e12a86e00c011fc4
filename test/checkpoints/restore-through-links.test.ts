import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { FileConversation, makeManager, makeSandbox, read, write, type Sandbox } from "./helpers.js";

/**
 * A folder replaced by a link (by the person after the task, or by the task's command). Found
 * in a bug hunt: a restore, and its undo, deleted the file the task made there through the
 * link, outside the workspace, with nothing to bring it back; and a command that made the link
 * stopped the task's checkpoints ("'lib/new.js' is beyond a symbolic link").
 */
function setup() {
  const sb = makeSandbox();
  const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
  const manager = makeManager(sb, { conversation });
  const task = { id: "t1", workspaceRoots: [sb.workspace] };
  return { sb, manager, task, ws: sb.workspace };
}

function shadowGit(sb: Sandbox, args: string[], input?: string): string {
  return execFileSync("git", ["--git-dir", path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git"), ...args], {
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    encoding: "utf8",
    input,
  }).trim();
}

/**
 * Adds to a task's pre-image record one more pre-image of `repoPath` holding `content`, taken at
 * `at`: what an earlier version kept for a restore's undo (edit-captures.ts's record format).
 */
function addPreimage(sb: Sandbox, taskId: string, repoPath: string, content: string, at: number): void {
  const ref = `refs/dline/preimages/${taskId}`;
  type Capture = { path: string; at: number; kind: string; id?: string; mode?: string; permissions?: number };
  let record: { v: 1; task: string; captures: Capture[] } = { v: 1, task: taskId, captures: [] };
  const refs = shadowGit(sb, ["for-each-ref", "--format=%(objectname)", ref]);
  if (refs) {
    const message = shadowGit(sb, ["cat-file", "commit", refs]);
    record = JSON.parse(message.split("\n").find((l) => l.startsWith("{"))!) as typeof record;
  }
  const id = shadowGit(sb, ["hash-object", "-w", "--stdin"], content);
  record.captures.push({ path: repoPath, at, kind: "preimage", id, mode: "100644", permissions: 0o644 });
  const blobs = [...new Set(record.captures.flatMap((c) => (c.id ? [c.id] : [])))];
  const tree = shadowGit(sb, ["mktree"], blobs.map((b) => `100644 blob ${b}\t${b}`).join("\n") + "\n");
  const id2 = ["-c", "user.name=Dline Checkpoint", "-c", "user.email=checkpoint@dline.invalid"];
  const next = shadowGit(sb, [...id2, "commit-tree", tree, "-m", `Dline pre-images\n\n${JSON.stringify(record)}`]);
  shadowGit(sb, ["update-ref", ref, next]);
}

/**
 * A task whose command replaced sub/ by a link to a folder outside the workspace holding a file of
 * the same name (`echo b > a.txt; rm -rf sub && ln -s OUTSIDE sub`), its turn saved.
 */
async function commandMadeSubALink() {
  const { sb, manager, task, ws } = setup();
  write(ws, "sub/s.txt", "the workspace's file\n");
  write(ws, "a.txt", "a\n");
  const base = (await manager.ensureBaseline(task))!;
  const outside = path.join(sb.base, "outside");
  write(outside, "s.txt", "OUTSIDE\n");
  write(ws, "a.txt", "b\n");
  fs.rmSync(path.join(ws, "sub"), { recursive: true });
  fs.symlinkSync(outside, path.join(ws, "sub"));
  await manager.saveTurn(task, { commandRan: true });
  return { sb, manager, ws, base, outside };
}

describe("a restore where a folder is a link now", () => {
  it("never deletes through the link: the file there is named kept as is, and stays", async () => {
    const { sb, manager, task, ws } = setup();
    write(ws, "lib/a.js", "a\n");
    const base = (await manager.ensureBaseline(task))!;
    await manager.beforeEdit(task, ["lib/new.js"]);
    write(ws, "lib/new.js", "new\n");
    await manager.saveTurn(task, { editedPaths: ["lib/new.js"] });
    // The person, after the task: lib/ aside, and lib a link to a folder outside the workspace
    // that holds a file of the same name.
    const outside = path.join(sb.base, "outside");
    write(outside, "new.js", "the person's file outside\n");
    fs.renameSync(path.join(ws, "lib"), path.join(ws, "lib.old"));
    fs.symlinkSync(outside, path.join(ws, "lib"));

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual([]);
    expect(outcome.keptPaths).toEqual([{ path: "lib/new.js", reason: "beyond_link" }]);
    expect(read(outside, "new.js")).toBe("the person's file outside\n");
    expect(fs.lstatSync(path.join(ws, "lib")).isSymbolicLink()).toBe(true);
    await manager.stop();
  });

  it("its undo puts back what the restore changed and keeps what lies beyond the link, where it refused everything", async () => {
    // Found on re-checking: the task wrote t.txt and made lib/new.js; the person then replaced
    // lib by a link. The restore deleted t.txt and kept lib/new.js; its undo answered "Cannot
    // restore lib/new.js: lib is a link now" and did not bring t.txt back.
    const { sb, manager, task, ws } = setup();
    write(ws, "lib/a.js", "a\n");
    const base = (await manager.ensureBaseline(task))!;
    await manager.beforeEdit(task, ["t.txt", "lib/new.js"]);
    write(ws, "t.txt", "by the task\n");
    write(ws, "lib/new.js", "new\n");
    await manager.saveTurn(task, { editedPaths: ["t.txt", "lib/new.js"] });
    const outside = path.join(sb.base, "outside");
    write(outside, "new.js", "the person's file outside\n");
    fs.renameSync(path.join(ws, "lib"), path.join(ws, "lib.old"));
    fs.symlinkSync(outside, path.join(ws, "lib"));

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual(["t.txt"]);
    const undone = await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(read(ws, "t.txt")).toBe("by the task\n");
    expect(undone.keptPaths).toEqual([{ path: "lib/new.js", reason: "beyond_link" }]);
    expect(read(outside, "new.js")).toBe("the person's file outside\n");
    await manager.stop();
  });

  it("keeps no pre-image read through the link, so its undo never writes through it outside the workspace", async () => {
    // Found in a bug hunt through the CLI: a command replaced sub/ by a link to a folder outside
    // the workspace holding a file of the same name. The restore to the baseline brought sub/
    // back, keeping for its undo what sub/s.txt was "now", read through the link: the outside
    // file. The person then edited that outside file; undoing the restore made the link again
    // and wrote the kept copy through it, over the person's edit.
    const { manager, ws, base, outside } = await commandMadeSubALink();
    const outcome = await manager.restore("t1", base.id, "files");
    expect(fs.lstatSync(path.join(ws, "sub")).isDirectory()).toBe(true);
    expect(read(ws, "sub/s.txt")).toBe("the workspace's file\n");
    expect(read(outside, "s.txt")).toBe("OUTSIDE\n");
    write(outside, "s.txt", "the person's edit outside\n");

    const undone = await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(fs.lstatSync(path.join(ws, "sub")).isSymbolicLink()).toBe(true);
    expect(read(ws, "a.txt")).toBe("b\n");
    expect(read(outside, "s.txt")).toBe("the person's edit outside\n");
    // Nothing of sub/ was kept to write back: nothing was read through the link.
    expect(undone.restoredPaths).not.toContain("sub/s.txt");
    expect(undone.keptPaths).toEqual([]);
    expect(undone.deletedPaths).toEqual(["sub/s.txt"]);
    await manager.stop();
  });

  it("writes no kept copy through a link its undo made again, whatever an earlier version kept", async () => {
    // An earlier version kept sub/s.txt for the undo, read through the link. Undoing makes the
    // link again first: the kept copy would then be written through it, over the outside file.
    const { sb, manager, ws, base, outside } = await commandMadeSubALink();
    const outcome = await manager.restore("t1", base.id, "files");
    const undo = (await manager.list("t1")).find((c) => c.id === outcome.undoCheckpointId)!;
    addPreimage(sb, "t1", "sub/s.txt", "OUTSIDE\n", undo.createdAt + 1);
    write(outside, "s.txt", "the person's edit outside\n");

    const undone = await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(fs.lstatSync(path.join(ws, "sub")).isSymbolicLink()).toBe(true);
    expect(read(outside, "s.txt")).toBe("the person's edit outside\n");
    expect(read(ws, "a.txt")).toBe("b\n");
    expect(undone.restoredPaths).not.toContain("sub/s.txt");
    expect(undone.keptPaths).toContainEqual(expect.objectContaining({ path: "sub/s.txt" }));
    await manager.stop();
  });
});

describe("a command that replaced a folder by a link", () => {
  it("is saved, and a restore brings the folder back and removes the link and the moved copy", async () => {
    const { manager, task, ws } = setup();
    write(ws, "lib/a.js", "a\n");
    const base = (await manager.ensureBaseline(task))!;
    await manager.beforeEdit(task, ["lib/new.js"]);
    write(ws, "lib/new.js", "new\n");
    await manager.saveTurn(task, { editedPaths: ["lib/new.js"] });
    // `mv lib lib.old && ln -s lib.old lib`
    fs.renameSync(path.join(ws, "lib"), path.join(ws, "lib.old"));
    fs.symlinkSync("lib.old", path.join(ws, "lib"));
    const saved = await manager.saveTurn(task, { commandRan: true });
    // Compare reads nothing through the link: lib/a.js is gone (lib is a link now), not "modified".
    const compared = (await manager.compare("t1", base.id)).files.map((f) => [f.path, f.status]);
    expect(compared).toEqual([
      ["lib", "added"],
      ["lib.old/a.js", "added"],
      ["lib.old/new.js", "added"],
      ["lib/a.js", "deleted"],
    ]);
    expect(saved?.id).toBeTruthy();
    expect((await manager.status({ taskId: "t1" })).state).not.toBe("failed");

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.restoredPaths).toEqual(["lib/a.js"]);
    expect(fs.lstatSync(path.join(ws, "lib")).isDirectory()).toBe(true);
    expect(read(ws, "lib/a.js")).toBe("a\n");
    expect(fs.existsSync(path.join(ws, "lib/new.js"))).toBe(false);
    expect(fs.existsSync(path.join(ws, "lib.old"))).toBe(false);
    await manager.stop();
  });
});
