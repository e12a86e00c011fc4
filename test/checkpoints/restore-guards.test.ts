import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointManager, CheckpointTask } from "../../core/src/checkpoints/index.js";
import { DlineError } from "../../core/src/errors.js";
import { FileConversation, makeManager, makeSandbox, read, treeDigest, write } from "./helpers.js";
import { nth } from "../helpers/items.js";

// The checks a restore makes before it touches the first file, by both restore rules: with the
// task's recorded edits (only those paths) and without (every snapshotted file, as reset --hard).
// A restore that stops half way has already overwritten some of the user's files.

function setup(options: { sizeLimitBytes?: number } = {}) {
  const sb = makeSandbox();
  const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
  const manager = makeManager(sb, { conversation, ...options });
  const task: CheckpointTask = { id: "t1", workspaceRoots: [sb.workspace] };
  return { sb, manager, task, ws: sb.workspace };
}

async function toolWrite(
  manager: CheckpointManager,
  task: CheckpointTask,
  rel: string,
  content: string | Buffer,
): Promise<void> {
  await manager.beforeEdit?.(task, [rel]);
  write(nth(task.workspaceRoots, 0, "workspace root"), rel, content);
}

async function refusal(p: Promise<unknown>): Promise<DlineError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DlineError);
  return err as DlineError;
}

function blobId(content: string): string {
  return execFileSync("git", ["hash-object", "--stdin"], { input: content }).toString().trim();
}

function dropObject(repoDir: string, id: string): void {
  fs.rmSync(path.join(repoDir, ".git", "objects", id.slice(0, 2), id.slice(2)));
}

/** The workspace without the folders checkpoints never look into. */
function workspaceDigest(ws: string): Record<string, string> {
  return treeDigest(ws);
}

const rules = [
  { name: "with recorded edits", save: (paths: string[]) => ({ editedPaths: paths }) },
  // A scan save with no recorded edit and no command: nothing says what the task changed.
  { name: "without recorded edits (reset)", save: () => ({}) },
] as const;

for (const rule of rules) {
  describe(`a restore ${rule.name}`, () => {
    it("refuses, before writing anything, when a folder stands where a file goes back", async () => {
      const { manager, task, ws } = setup();
      write(ws, "a.txt", "a v1\n");
      write(ws, "z.txt", "z v1\n");
      const base = (await manager.ensureBaseline(task))!;
      await toolWrite(manager, task, "a.txt", "a v2\n");
      await toolWrite(manager, task, "z.txt", "z v2\n");
      await manager.saveTurn(task, rule.save(["a.txt", "z.txt"]));
      // After the checkpoint the user replaced z.txt by a folder of their own files.
      fs.rmSync(path.join(ws, "z.txt"));
      write(ws, "z.txt/mine.txt", "the user's\n");
      const before = workspaceDigest(ws);
      if (rule.name.startsWith("without")) {
        // reset --hard: the undo point scanned the workspace and holds the folder's files, so the
        // folder goes and the file comes back; undoing the restore brings the folder back.
        const outcome = await manager.restore("t1", base.id, "files");
        expect(read(ws, "z.txt")).toBe("z v1\n");
        expect(outcome.deletedPaths).toContain("z.txt/mine.txt");
        await manager.restore("t1", outcome.undoCheckpointId, "files");
        expect(workspaceDigest(ws)).toEqual(before);
        return;
      }
      const err = await refusal(manager.restore("t1", base.id, "files"));
      expect(err.code).toBe("failed_precondition");
      expect(err.message).toBe(
        "Cannot restore z.txt: a folder holding z.txt/mine.txt is in its place, and no checkpoint holds all of it (the restore would lose it). No file was restored. Move that folder elsewhere (or delete it) and restore again.",
      );
      expect(workspaceDigest(ws)).toEqual(before);
      expect(read(ws, "a.txt")).toBe("a v2\n");
    });

    it("refuses, before writing anything, when a file stands where a folder of the checkpoint was", async () => {
      const { manager, task, ws } = setup();
      write(ws, "a.txt", "a v1\n");
      write(ws, "lib/deep/x.txt", "x v1\n");
      const base = (await manager.ensureBaseline(task))!;
      await toolWrite(manager, task, "a.txt", "a v2\n");
      await toolWrite(manager, task, "lib/deep/x.txt", "x v2\n");
      await manager.saveTurn(task, rule.save(["a.txt", "lib/deep/x.txt"]));
      // The user turned the folder lib/ into a file.
      fs.rmSync(path.join(ws, "lib"), { recursive: true });
      write(ws, "lib", "now a file of the user's\n");
      const before = workspaceDigest(ws);
      if (rule.name.startsWith("without")) {
        const outcome = await manager.restore("t1", base.id, "files");
        expect(read(ws, "lib/deep/x.txt")).toBe("x v1\n");
        expect(outcome.deletedPaths).toContain("lib");
        await manager.restore("t1", outcome.undoCheckpointId, "files");
        expect(workspaceDigest(ws)).toEqual(before);
        return;
      }
      const err = await refusal(manager.restore("t1", base.id, "files"));
      expect(err.code).toBe("failed_precondition");
      expect(err.message).toBe("Cannot restore lib/deep/x.txt: lib is a file now.");
      expect(workspaceDigest(ws)).toEqual(before);
    });

    it("refuses when what stands in the way holds files no checkpoint has", async () => {
      const { manager, task, ws } = setup();
      write(ws, ".gitignore", "*.log\n");
      write(ws, "z.txt", "z v1\n");
      const base = (await manager.ensureBaseline(task))!;
      await toolWrite(manager, task, "z.txt", "z v2\n");
      await manager.saveTurn(task, rule.save(["z.txt"]));
      // The folder in the way holds an ignored file: neither the undo point nor any snapshot has it.
      fs.rmSync(path.join(ws, "z.txt"));
      write(ws, "z.txt/debug.log", "only here\n");
      const before = workspaceDigest(ws);
      const err = await refusal(manager.restore("t1", base.id, "files"));
      expect(err.message).toBe(
        "Cannot restore z.txt: a folder holding z.txt/debug.log is in its place, and no checkpoint holds all of it (the restore would lose it). No file was restored. Move that folder elsewhere (or delete it) and restore again.",
      );
      expect(workspaceDigest(ws)).toEqual(before);
    });

    it("fails before writing anything when a file's content is missing from the checkpoint store", async () => {
      const { manager, task, ws, sb } = setup();
      write(ws, "a.txt", "a v1\n");
      write(ws, "b.txt", "b v1\n");
      const base = (await manager.ensureBaseline(task))!;
      await toolWrite(manager, task, "a.txt", "a v2\n");
      await toolWrite(manager, task, "b.txt", "b v2\n");
      await manager.saveTurn(task, rule.save(["a.txt", "b.txt"]));
      dropObject(sb.layout.checkpointRepoDir(ws), blobId("b v1\n"));
      const before = workspaceDigest(ws);
      await expect(manager.restore("t1", base.id, "files")).rejects.toThrow();
      expect(workspaceDigest(ws)).toEqual(before);
      expect(read(ws, "a.txt")).toBe("a v2\n");
    });

    it("brings back modes and symbolic links as they were", async () => {
      const { manager, task, ws } = setup();
      write(ws, "run.sh", "#!/bin/sh\necho v1\n");
      fs.chmodSync(path.join(ws, "run.sh"), 0o755);
      write(ws, "plain.txt", "plain v1\n");
      fs.symlinkSync("plain.txt", path.join(ws, "link"));
      const base = (await manager.ensureBaseline(task))!;
      await toolWrite(manager, task, "run.sh", "#!/bin/sh\necho v2\n");
      fs.chmodSync(path.join(ws, "run.sh"), 0o644);
      await toolWrite(manager, task, "plain.txt", "plain v2\n");
      fs.chmodSync(path.join(ws, "plain.txt"), 0o755);
      await manager.beforeEdit?.(task, ["link"]);
      fs.rmSync(path.join(ws, "link"));
      fs.symlinkSync("run.sh", path.join(ws, "link"));
      await manager.saveTurn(task, rule.save(["run.sh", "plain.txt", "link"]));
      await manager.restore("t1", base.id, "files");
      expect(read(ws, "run.sh")).toBe("#!/bin/sh\necho v1\n");
      expect(fs.statSync(path.join(ws, "run.sh")).mode & 0o777).toBe(0o755);
      expect(fs.statSync(path.join(ws, "plain.txt")).mode & 0o777).toBe(0o644);
      expect(fs.lstatSync(path.join(ws, "link")).isSymbolicLink()).toBe(true);
      expect(fs.readlinkSync(path.join(ws, "link"))).toBe("plain.txt");
      // No temporary file of the restore is left behind.
      expect(fs.readdirSync(ws).filter((n) => n.includes("dline-restore"))).toEqual([]);
    });

    it("a private file stays private: what it is restored over keeps its permissions", async () => {
      const { manager, task, ws } = setup();
      write(ws, "key.txt", "secret v1\n");
      fs.chmodSync(path.join(ws, "key.txt"), 0o600);
      write(ws, "tool.sh", "#!/bin/sh\necho v1\n");
      fs.chmodSync(path.join(ws, "tool.sh"), 0o750);
      const base = (await manager.ensureBaseline(task))!;
      await toolWrite(manager, task, "key.txt", "secret v2\n");
      await toolWrite(manager, task, "tool.sh", "#!/bin/sh\necho v2\n");
      await manager.saveTurn(task, rule.save(["key.txt", "tool.sh"]));
      await manager.restore("t1", base.id, "files");
      expect(read(ws, "key.txt")).toBe("secret v1\n");
      expect(fs.statSync(path.join(ws, "key.txt")).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.join(ws, "tool.sh")).mode & 0o777).toBe(0o750);
    });

    it("removes the files the task created, and the folders it made for them, deepest first", async () => {
      const { manager, task, ws } = setup();
      write(ws, "keep/old.txt", "old\n");
      const base = (await manager.ensureBaseline(task))!;
      await toolWrite(manager, task, "new/a/b/c.txt", "made by the task\n");
      await toolWrite(manager, task, "keep/new.txt", "made by the task\n");
      await manager.saveTurn(task, rule.save(["new/a/b/c.txt", "keep/new.txt"]));
      const outcome = await manager.restore("t1", base.id, "files");
      expect(outcome.deletedPaths.sort()).toEqual(["keep/new.txt", "new/a/b/c.txt"]);
      expect(fs.existsSync(path.join(ws, "new"))).toBe(false);
      expect(read(ws, "keep/old.txt")).toBe("old\n");
      // Undo brings them back.
      await manager.restore("t1", outcome.undoCheckpointId, "files");
      expect(read(ws, "new/a/b/c.txt")).toBe("made by the task\n");
      expect(read(ws, "keep/new.txt")).toBe("made by the task\n");
    });
  });
}

describe("a restore without recorded edits (reset)", () => {
  it("keeps a file the checkpoint left out as too large, though a later snapshot holds it", async () => {
    const { manager, task, ws } = setup({ sizeLimitBytes: 1024 });
    write(ws, "notes/report.txt", Buffer.alloc(4096, 98));
    write(ws, "a.txt", "a v1\n");
    const base = (await manager.ensureBaseline(task))!;
    expect(base.skipped).toContainEqual(expect.objectContaining({ path: "notes/report.txt" }));
    // A command shrinks it: the next snapshot holds it.
    write(ws, "notes/report.txt", "small now\n");
    write(ws, "a.txt", "a v2\n");
    await manager.saveTurn(task, { commandRan: true });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual([]);
    expect(outcome.keptPaths).toEqual([{ path: "notes/report.txt", reason: "not_tracked" }]);
    expect(read(ws, "notes/report.txt")).toBe("small now\n");
    expect(read(ws, "a.txt")).toBe("a v1\n");
  });

  it("a file the checkpoint holds unchanged is not rewritten", async () => {
    const { manager, task, ws } = setup();
    write(ws, "same.txt", "same\n");
    write(ws, "a.txt", "a v1\n");
    const base = (await manager.ensureBaseline(task))!;
    write(ws, "a.txt", "a v2\n");
    await manager.saveTurn(task, { commandRan: true });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.restoredPaths).toEqual(["a.txt"]);
    expect(outcome.deletedPaths).toEqual([]);
  });
});

describe("a restore of recorded edits where a command put a folder in the way", () => {
  it("removes what the undo point holds in full, restores the file and names what went; the undo brings it back", async () => {
    const { manager, task, ws } = setup();
    write(ws, "LICENSE", "MIT\n");
    write(ws, "a.txt", "a v1\n");
    fs.symlinkSync("src", path.join(ws, "lib"));
    write(ws, "src/x.js", "x\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "a.txt", "a v2\n");
    await manager.saveTurn(task, { editedPaths: ["a.txt"] });
    // A later turn's command: `rm LICENSE && mkdir LICENSE && echo x > LICENSE/x`, and the link
    // lib replaced by a folder of its own.
    fs.rmSync(path.join(ws, "LICENSE"));
    write(ws, "LICENSE/x", "x\n");
    fs.rmSync(path.join(ws, "lib"));
    write(ws, "lib/y.js", "y\n");
    await manager.saveTurn(task, { commandRan: true });
    const before = workspaceDigest(ws);
    // Before: "Cannot restore LICENSE: a folder of that name is in the way.", nothing restored
    // (a restore without recorded edits removed the same folders).
    const outcome = await manager.restore("t1", base.id, "files");
    expect(read(ws, "LICENSE")).toBe("MIT\n");
    expect(fs.readlinkSync(path.join(ws, "lib"))).toBe("src");
    expect(read(ws, "a.txt")).toBe("a v1\n");
    expect([...outcome.restoredPaths].sort()).toEqual(["LICENSE", "a.txt", "lib"]);
    expect([...outcome.deletedPaths].sort()).toEqual(["LICENSE/x", "lib/y.js"]);
    await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(workspaceDigest(ws)).toEqual(before);
    // The newest snapshot is what the workspace holds: a turn saved now records no change.
    await manager.restore("t1", base.id, "files");
    const again = (await manager.saveTurn(task, { editedPaths: ["LICENSE"] }))!;
    expect(again.reused).toBe(true);
  });
});
