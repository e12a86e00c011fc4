import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointManager, CheckpointTask } from "../../core/src/checkpoints/index.js";
import { FileConversation, makeManager, makeSandbox, read, write, type Sandbox } from "./helpers.js";

// Git trees hold 100644 or 100755 only: the checkpoints record the bits of the files git's would
// open up (file-modes.ts), and a restore that makes such a file again gives it those.

function managerFor(sb: Sandbox, tasks: string[]): CheckpointManager {
  const conversation = new FileConversation(
    path.join(sb.base, "conversations"),
    Object.fromEntries(tasks.map((t) => [t, [sb.workspace]])),
  );
  return makeManager(sb, { conversation });
}

function modeOf(ws: string, rel: string): string {
  return (fs.statSync(path.join(ws, rel)).mode & 0o777).toString(8);
}

function writeWithMode(ws: string, rel: string, content: string, mode: number): void {
  write(ws, rel, content);
  fs.chmodSync(path.join(ws, rel), mode);
}

/** The person's files: a private key, a private script, a plain file. */
/** A sandbox whose workspace holds the person's files: a private key, a private script, a plain file. */
function sandboxWithPersonFiles(): { sb: Sandbox; ws: string } {
  const sb = makeSandbox();
  const ws = sb.workspace;
  writeWithMode(ws, "keys/id.key", "private key\n", 0o600);
  writeWithMode(ws, "tools/run.sh", "#!/bin/sh\necho run\n", 0o700);
  writeWithMode(ws, "plain.txt", "plain\n", 0o644);
  return { sb, ws };
}

/** Task t1 in the person's files' sandbox, with its baseline taken. */
async function taskWithBaseline() {
  const { sb, ws } = sandboxWithPersonFiles();
  const manager = managerFor(sb, ["t1"]);
  const task: CheckpointTask = { id: "t1", workspaceRoots: [ws] };
  const base = (await manager.ensureBaseline(task))!;
  return { sb, ws, manager, task, base };
}

function shadowGit(sb: Sandbox, ...args: string[]): string {
  return execFileSync("git", ["--git-dir", path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git"), ...args], {
    env: {
      PATH: process.env.PATH,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    },
    encoding: "utf8",
  }).trim();
}

const rules = [
  {
    name: "recorded edits and a command (path restore)",
    async change(manager: CheckpointManager, task: CheckpointTask, ws: string, command: () => void) {
      await manager.beforeEdit?.(task, ["plain.txt"]);
      write(ws, "plain.txt", "edited by a tool\n");
      await manager.saveTurn(task, { editedPaths: ["plain.txt"] });
      command();
      await manager.saveTurn(task, { commandRan: true });
    },
  },
  {
    name: "a command alone (reset)",
    async change(manager: CheckpointManager, task: CheckpointTask, _ws: string, command: () => void) {
      command();
      await manager.saveTurn(task, { commandRan: true });
    },
  },
] as const;

for (const rule of rules) {
  describe(`a restore after ${rule.name}`, () => {
    it("makes a deleted 0600 key and 0700 script again with those bits; a plain file is 0644", async () => {
      const { sb, ws, manager, task, base } = await taskWithBaseline();
      await rule.change(manager, task, ws, () => {
        for (const f of ["keys/id.key", "tools/run.sh", "plain.txt"]) fs.rmSync(path.join(ws, f));
      });
      const outcome = await manager.restore("t1", base.id, "files");
      expect([...outcome.restoredPaths].sort()).toEqual(["keys/id.key", "plain.txt", "tools/run.sh"]);
      expect(read(ws, "keys/id.key")).toBe("private key\n");
      expect([modeOf(ws, "keys/id.key"), modeOf(ws, "tools/run.sh"), modeOf(ws, "plain.txt")]).toEqual([
        "600",
        "700",
        "644",
      ]);
      // The newest snapshot (the target, or the one after a path restore) carries the record to
      // the next process; the plain file is not in it.
      const head = shadowGit(sb, "log", "-1", "--format=%B", "refs/heads/dline-snapshots");
      expect(head).toContain('"modes":{"keys/id.key":"600","tools/run.sh":"700"}');
      // Undoing the restore deletes them again; restoring once more gives the same bits.
      await manager.restore("t1", outcome.undoCheckpointId, "files");
      expect(fs.existsSync(path.join(ws, "keys/id.key"))).toBe(false);
      await manager.restore("t1", base.id, "files");
      expect([modeOf(ws, "keys/id.key"), modeOf(ws, "tools/run.sh")]).toEqual(["600", "700"]);
    });

    it("a file a command only opened up (a chmod, the same content) is as private as it was after the restore", async () => {
      const { ws, manager, task, base } = await taskWithBaseline();
      await rule.change(manager, task, ws, () => {
        fs.chmodSync(path.join(ws, "keys/id.key"), 0o644);
        fs.chmodSync(path.join(ws, "tools/run.sh"), 0o755);
      });
      const outcome = await manager.restore("t1", base.id, "files");
      expect([modeOf(ws, "keys/id.key"), modeOf(ws, "tools/run.sh"), modeOf(ws, "plain.txt")]).toEqual([
        "600",
        "700",
        "644",
      ]);
      expect(read(ws, "keys/id.key")).toBe("private key\n");
      // Named among the restored files: the person sees that the restore changed them.
      expect(outcome.restoredPaths).toEqual(expect.arrayContaining(["keys/id.key", "tools/run.sh"]));
    });

    it("a file a command rewrote and opened up comes back as private as it was; one the person narrowed since is not opened", async () => {
      const { ws, manager, task, base } = await taskWithBaseline();
      await rule.change(manager, task, ws, () => {
        writeWithMode(ws, "keys/id.key", "leaked key\n", 0o644);
        writeWithMode(ws, "plain.txt", "now private\n", 0o600);
      });
      await manager.restore("t1", base.id, "files");
      expect(read(ws, "keys/id.key")).toBe("private key\n");
      expect(modeOf(ws, "keys/id.key")).toBe("600");
      expect(read(ws, "plain.txt")).toBe("plain\n");
      expect(modeOf(ws, "plain.txt")).toBe("600");
    });
  });
}

describe("a file made after the baseline", () => {
  it("a new private key that a Compare's scan staged is still recorded by the next save: a command deletes it, a restore to that save makes it 0600", async () => {
    const { ws, manager, task, base } = await taskWithBaseline();
    writeWithMode(ws, "keys/new.key", "new key\n", 0o600);
    await manager.compare("t1", base.id);
    const withKey = (await manager.saveTurn(task, { commandRan: true }))!;
    fs.rmSync(path.join(ws, "keys/new.key"));
    await manager.saveTurn(task, { commandRan: true });
    await manager.restore("t1", withKey.id, "files");
    expect(read(ws, "keys/new.key")).toBe("new key\n");
    expect(modeOf(ws, "keys/new.key")).toBe("600");
  });
});

describe("the bits recorded carry from one process to the next", () => {
  it("a later task's baseline (only what changed is scanned) still records the key: its restore makes it 0600", async () => {
    const { sb, ws } = sandboxWithPersonFiles();
    const first = managerFor(sb, ["t1"]);
    await first.ensureBaseline({ id: "t1", workspaceRoots: [ws] });
    await first.stop?.();

    const later = managerFor(sb, ["t2"]);
    const task: CheckpointTask = { id: "t2", workspaceRoots: [ws] };
    const base = (await later.ensureBaseline(task))!;
    fs.rmSync(path.join(ws, "keys/id.key"));
    await later.saveTurn(task, { commandRan: true });
    await later.restore("t2", base.id, "files");
    expect(modeOf(ws, "keys/id.key")).toBe("600");
  });

  it("a workspace whose newest snapshot records no bits (an earlier version's) looks at its files once", async () => {
    const { sb, ws } = sandboxWithPersonFiles();
    const first = managerFor(sb, ["t1"]);
    await first.ensureBaseline({ id: "t1", workspaceRoots: [ws] });
    await first.stop?.();
    // The newest snapshot as an earlier version wrote it: no record of the files' bits.
    const tree = shadowGit(sb, "rev-parse", "refs/heads/dline-snapshots^{tree}");
    const old = shadowGit(sb, "commit-tree", tree, "-m", "Dline checkpoint: baseline");
    shadowGit(sb, "update-ref", "refs/heads/dline-snapshots", old);

    const later = managerFor(sb, ["t2"]);
    const task: CheckpointTask = { id: "t2", workspaceRoots: [ws] };
    const base = (await later.ensureBaseline(task))!;
    expect(base.id).not.toBe(old);
    fs.rmSync(path.join(ws, "keys/id.key"));
    fs.rmSync(path.join(ws, "tools/run.sh"));
    await later.saveTurn(task, { commandRan: true });
    await later.restore("t2", base.id, "files");
    expect([modeOf(ws, "keys/id.key"), modeOf(ws, "tools/run.sh")]).toEqual(["600", "700"]);
  });
});

describe("Compare and View Changes name permission changes", () => {
  /** Each changed file with its permissions then and now ("" when they did not change). */
  const modes = (files: { path: string; status: string; modeBefore?: string; modeAfter?: string }[]) =>
    files.map((f) => [f.path, f.status, f.modeBefore ?? "", f.modeAfter ?? ""]).sort();

  it("a command that opened a private key to 0644 and made a file executable: both listed, and a files restore narrows them back", async () => {
    const { ws, manager, task, base } = await taskWithBaseline();
    fs.chmodSync(path.join(ws, "keys/id.key"), 0o644);
    fs.chmodSync(path.join(ws, "plain.txt"), 0o755);
    await manager.saveTurn(task, { commandRan: true });

    const compared = await manager.compare("t1", base.id);
    expect(modes(compared.files)).toEqual([
      ["keys/id.key", "modified", "600", "644"],
      ["plain.txt", "modified", "644", "755"],
    ]);
    // Only its permissions changed: the same text on both sides.
    expect(compared.files.find((f) => f.path === "keys/id.key")).toMatchObject({
      before: "private key\n",
      after: "private key\n",
    });
    expect(compared.restorePaths.sort()).toEqual(["keys/id.key", "plain.txt"]);

    await manager.restore("t1", base.id, "files");
    expect([modeOf(ws, "keys/id.key"), modeOf(ws, "plain.txt")]).toEqual(["600", "644"]);
    expect((await manager.compare("t1", base.id)).files).toEqual([]);
  });

  it("View Changes lists the key a command opened up, and the script it made executable", async () => {
    const { ws, manager, task } = await taskWithBaseline();
    fs.chmodSync(path.join(ws, "keys/id.key"), 0o644);
    fs.chmodSync(path.join(ws, "plain.txt"), 0o755);
    await manager.saveTurn(task, { commandRan: true });
    await manager.saveCompletion(task, { editedPaths: [] });
    expect(modes((await manager.viewChanges("t1")).files)).toEqual([
      ["keys/id.key", "modified", "600", "644"],
      ["plain.txt", "modified", "644", "755"],
    ]);
  });

  it("a private file narrowed further is listed, but not among what a restore changes (it never opens a file up); an edit that keeps the bits names none", async () => {
    const { ws, manager, task, base } = await taskWithBaseline();
    fs.chmodSync(path.join(ws, "keys/id.key"), 0o400);
    write(ws, "tools/run.sh", "#!/bin/sh\necho changed\n");
    await manager.saveTurn(task, { commandRan: true });

    const compared = await manager.compare("t1", base.id);
    expect(modes(compared.files)).toEqual([
      ["keys/id.key", "modified", "600", "400"],
      ["tools/run.sh", "modified", "", ""],
    ]);
    expect(compared.restorePaths).toEqual(["tools/run.sh"]);
    await manager.restore("t1", base.id, "files");
    expect([modeOf(ws, "keys/id.key"), modeOf(ws, "tools/run.sh")]).toEqual(["400", "700"]);
  });

  it("files whose bits the checkpoints do not record (any that include 644's) are compared by their executable bit only", async () => {
    const { ws, manager, task, base } = await taskWithBaseline();
    // 0644 to 0664: more open than git's 644 says, but nothing a restore changes or records.
    fs.chmodSync(path.join(ws, "plain.txt"), 0o664);
    write(ws, "plain.txt", "plain, edited\n");
    await manager.saveTurn(task, { commandRan: true });
    expect(modes((await manager.compare("t1", base.id)).files)).toEqual([["plain.txt", "modified", "", ""]]);
  });
});
