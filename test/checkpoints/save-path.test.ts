import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointManager, CheckpointTask } from "../../core/src/checkpoints/index.js";
import { FileConversation, makeManager, makeSandbox, read, write, type Sandbox } from "./helpers.js";
import { nth } from "../helpers/items.js";
import { indexWriteStamp } from "../helpers/shadow-index.js";

// The save path: a turn's recorded paths (with or without a git process), the pre-images taken
// before a tool first changes a file, and the paths a save after a command takes from the
// workspace watcher. Each test says what the user would lose if that part went wrong.

function setup(options: { sizeLimitBytes?: number } = {}) {
  const sb = makeSandbox();
  const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
  const manager = makeManager(sb, { conversation, ...options });
  const task: CheckpointTask = { id: "t1", workspaceRoots: [sb.workspace] };
  return { sb, conversation, manager, task, ws: sb.workspace };
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

/** The shadow repository's git, as a user would run it to look at a snapshot. */
function shadowGit(sb: Sandbox, ...args: string[]): string {
  const gitDir = path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git");
  return execFileSync("git", ["--git-dir", gitDir, ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: sb.home, GIT_CONFIG_NOSYSTEM: "1" },
  });
}

function filesOf(sb: Sandbox, commit: string): string[] {
  return shadowGit(sb, "ls-tree", "-r", "--name-only", commit).split("\n").filter(Boolean).sort();
}

describe("a turn's checkpoint of recorded paths", () => {
  it("is one checkpoint holding the edits, and the next turn builds on it", async () => {
    const { sb, manager, task, ws } = setup();
    write(ws, "src/a.ts", "a1\n");
    write(ws, "src/b.ts", "b1\n");
    await manager.ensureBaseline(task);
    await toolWrite(manager, task, "src/a.ts", "a2\n");
    await toolWrite(manager, task, "src/new.ts", "new\n");
    const first = (await manager.saveTurn(task, { editedPaths: ["src/a.ts", "src/new.ts"] }))!;
    expect(first.reused).toBe(false);
    expect((await manager.list("t1")).length).toBe(2);
    await toolWrite(manager, task, "src/b.ts", "b2\n");
    const second = (await manager.saveTurn(task, { editedPaths: ["src/b.ts"] }))!;
    expect((await manager.list("t1")).length).toBe(3);
    expect(filesOf(sb, second.id)).toEqual(["src/a.ts", "src/b.ts", "src/new.ts"]);
    expect(shadowGit(sb, "show", `${second.id}:src/a.ts`)).toBe("a2\n");
    expect(shadowGit(sb, "show", `${second.id}:src/b.ts`)).toBe("b2\n");
  });

  it("is written without any git process in the usual case (trees remembered from the previous save)", async () => {
    const { sb, manager, task, ws } = setup();
    // The real git, behind a script that notes each run.
    const bin = path.join(sb.base, "bin");
    const runs = path.join(sb.base, "git-runs.log");
    fs.mkdirSync(bin);
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    fs.writeFileSync(path.join(bin, "git"), `#!/bin/sh\necho "$*" >> '${runs}'\nexec '${realGit}' "$@"\n`, {
      mode: 0o755,
    });
    sb.env.PATH = `${bin}${path.delimiter}${sb.env.PATH}`;
    write(ws, "src/a.ts", "a1\n");
    await manager.ensureBaseline(task);
    // The baseline's staging is followed by the index's cached trees, written in the background.
    await manager.idle();
    await toolWrite(manager, task, "src/a.ts", "a2\n");
    expect(fs.readFileSync(runs, "utf8")).not.toBe("");
    fs.writeFileSync(runs, "");
    const turn = (await manager.saveTurn(task, { editedPaths: ["src/a.ts"] }))!;
    expect(fs.readFileSync(runs, "utf8")).toBe("");
    expect(shadowGit(sb, "show", `${turn.id}:src/a.ts`)).toBe("a2\n");
  });

  it("leaves out a file the turn made too large, names it, and keeps the ignored files the earlier scan listed", async () => {
    const { sb, manager, task, ws } = setup({ sizeLimitBytes: 1024 });
    write(ws, "src/data.txt", "small\n");
    write(ws, ".gitignore", "private/\n");
    write(ws, "private/notes.txt", "the user's notes\n");
    const base = (await manager.ensureBaseline(task))!;
    const ignored = base.skipped.filter((s) => s.reason === "ignored");
    expect(ignored.map((s) => s.path)).toEqual(["private"]);
    await toolWrite(manager, task, "src/data.txt", Buffer.alloc(4096, 98));
    const turn = (await manager.saveTurn(task, { editedPaths: ["src/data.txt"] }))!;
    expect(filesOf(sb, turn.id)).toEqual([".gitignore"]);
    expect(turn.skipped).toEqual(expect.arrayContaining([...ignored, { path: "src/data.txt", reason: "size" }]));
    expect(turn.skippedTotal).toBe(ignored.length + 1);
  });

  it("names at most 500 paths it left out, and counts them all", async () => {
    const { manager, task, ws } = setup({ sizeLimitBytes: 1024 });
    write(ws, ".gitignore", "*.tmp\n");
    // Ignored files in folders that also hold a tracked file: listed one by one.
    for (let i = 0; i < 520; i++) {
      const dir = `m${String(i).padStart(3, "0")}`;
      write(ws, `${dir}/index.ts`, `${i}\n`);
      write(ws, `${dir}/cache.tmp`, `${i}\n`);
    }
    write(ws, "src/data.txt", "small\n");
    const base = (await manager.ensureBaseline(task))!;
    expect(base.skippedTotal).toBe(520);
    await toolWrite(manager, task, "src/data.txt", Buffer.alloc(4096, 98));
    const turn = (await manager.saveTurn(task, { editedPaths: ["src/data.txt"] }))!;
    expect(turn.skippedTotal).toBe(521);
    expect(turn.skipped).toHaveLength(500);
  });

  it("of an edit that changed nothing reuses the snapshot", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/a.ts", "a1\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "src/a.ts", "a1\n");
    const turn = (await manager.saveTurn(task, { editedPaths: ["src/a.ts"] }))!;
    expect(turn.reused).toBe(true);
    expect(turn.tree).toBe(base.tree);
  });

  it("of a later process starts no git process: its baseline runs one status, edits and turns read git's packs themselves", async () => {
    const { sb, manager, task, ws } = setup();
    for (let i = 0; i < 40; i++) write(ws, `pkg${i % 4}/src/f${i}.ts`, `export const v = ${i};\n`);
    await manager.ensureBaseline(task);
    await manager.saveTurn(task, { editedPaths: [] });
    await manager.stop();
    // What git's own maintenance leaves: every object packed, trees stored as deltas.
    shadowGit(sb, "repack", "-a", "-d", "-f", "-q", "--depth=50");
    shadowGit(sb, "prune-packed");
    const bin = path.join(sb.base, "bin");
    const runs = path.join(sb.base, "git-runs.log");
    fs.mkdirSync(bin);
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    fs.writeFileSync(path.join(bin, "git"), `#!/bin/sh\necho "$*" >> '${runs}'\nexec '${realGit}' "$@"\n`, {
      mode: 0o755,
    });
    sb.env.PATH = `${bin}${path.delimiter}${sb.env.PATH}`;
    // The git commands run since the last look, without their `-c` settings.
    const commands = (): string[] => {
      const lines = fs.existsSync(runs) ? fs.readFileSync(runs, "utf8").split("\n").filter(Boolean) : [];
      fs.writeFileSync(runs, "");
      return lines.map((l) => nth(l.replace(/(-c \S+ )+/, "").split(" "), 0, "word of a git command line"));
    };

    const later = makeManager(sb);
    const next = { id: "t2", workspaceRoots: [ws] };
    await later.ensureBaseline(next);
    expect(commands()).toEqual(["status"]);
    await toolWrite(later, next, "pkg1/src/f1.ts", "edited 1\n");
    await later.saveTurn(next, { editedPaths: ["pkg1/src/f1.ts"] });
    await toolWrite(later, next, "pkg2/src/f2.ts", "edited 2\n");
    await toolWrite(later, next, "pkg3/src/new.ts", "new\n");
    const turn = (await later.saveTurn(next, { editedPaths: ["pkg2/src/f2.ts", "pkg3/src/new.ts"] }))!;
    const completion = (await later.saveCompletion(next))!;
    expect(commands()).toEqual([]);
    expect(completion.tree).toBe(turn.tree);
    expect(shadowGit(sb, "show", `${turn.id}:pkg1/src/f1.ts`)).toBe("edited 1\n");
    expect(shadowGit(sb, "show", `${turn.id}:pkg3/src/new.ts`)).toBe("new\n");
    expect(shadowGit(sb, "show", `${turn.id}:pkg0/src/f0.ts`)).toBe("export const v = 0;\n");
    expect(filesOf(sb, turn.id)).toHaveLength(41);
    shadowGit(sb, "fsck", "--strict", "--no-dangling");
    await later.stop();
  });

  it("is written with the same content when no tree is remembered or loose (another process, objects packed by git)", async () => {
    const { sb, manager, task, ws } = setup();
    write(ws, "src/a.ts", "a1\n");
    write(ws, "src/b.ts", "b1\n");
    await manager.ensureBaseline(task);
    await manager.stop();
    // Everything packed: a new process can read no tree as a loose object.
    shadowGit(sb, "repack", "-a", "-d", "-q");
    shadowGit(sb, "prune-packed");
    const later = makeManager(sb);
    await toolWrite(later, task, "src/a.ts", "a2\n");
    // Not a scan either: the shadow index (which a scan stages into) stays as it was.
    const index = path.join(sb.layout.checkpointRepoDir(ws), ".git", "index");
    const indexBefore = indexWriteStamp(index);
    const turn = (await later.saveTurn(task, { editedPaths: ["src/a.ts"] }))!;
    expect(indexWriteStamp(index)).toBe(indexBefore);
    expect(turn.reused).toBe(false);
    expect(filesOf(sb, turn.id)).toEqual(["src/a.ts", "src/b.ts"]);
    expect(shadowGit(sb, "show", `${turn.id}:src/a.ts`)).toBe("a2\n");
    expect((await later.list("t1")).length).toBe(2);
    // A turn without a change on that path is the same snapshot.
    await later.stop();
    shadowGit(sb, "repack", "-a", "-d", "-q");
    shadowGit(sb, "prune-packed");
    const third = makeManager(sb);
    await toolWrite(third, task, "src/b.ts", "b1\n");
    const same = (await third.saveTurn(task, { editedPaths: ["src/b.ts"] }))!;
    expect(same.reused).toBe(true);
    expect(same.tree).toBe(turn.tree);
    // The restore goes back to the first turn's files.
    await toolWrite(third, task, "src/a.ts", "a3\n");
    await third.saveTurn(task, { editedPaths: ["src/a.ts"] });
    await third.restore("t1", turn.id, "files");
    expect(read(ws, "src/a.ts")).toBe("a2\n");
    await third.stop();
  });
});

describe("a restore's undo point", () => {
  it("is on disk before the first file is touched: a restore refused by its checks still lists it", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/a.ts", "a1\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "src/a.ts", "a2\n");
    await manager.saveTurn(task, { editedPaths: ["src/a.ts"] });
    // The task puts a folder where the file was: the restore is refused before writing anything.
    await manager.beforeEdit?.(task, ["src/a.ts"]);
    fs.rmSync(path.join(ws, "src/a.ts"));
    fs.mkdirSync(path.join(ws, "src/a.ts"));
    const before = await manager.list("t1");
    const err = await manager.restore("t1", base.id, "files").catch((e: unknown) => e);
    expect((err as Error).message).toContain("an empty folder is in its place");
    const after = await manager.list("t1");
    expect(after).toHaveLength(before.length + 1);
    expect(fs.statSync(path.join(ws, "src/a.ts")).isDirectory()).toBe(true);
  });
});

describe("a pre-image", () => {
  it("of an ignored file edited in two turns: each restore brings back its own turn's version", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/main.ts", "main\n");
    write(ws, ".gitignore", "private/\n");
    write(ws, "private/notes.txt", "original\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "private/notes.txt", "turn one\n");
    const first = (await manager.saveTurn(task, { editedPaths: ["private/notes.txt"] }))!;
    await toolWrite(manager, task, "private/notes.txt", "turn two\n");
    await manager.saveTurn(task, { editedPaths: ["private/notes.txt"] });
    await manager.restore("t1", first.id, "files");
    expect(read(ws, "private/notes.txt")).toBe("turn one\n");
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "private/notes.txt")).toBe("original\n");
  });

  it("says a file did not exist: past the skip limit, a restore removes the file the task created in an excluded folder", async () => {
    const { manager, task, ws } = setup();
    for (let i = 0; i < 600; i++) write(ws, `modules/m${String(i).padStart(3, "0")}/.env.example`, `X=${i}\n`);
    write(ws, "src/main.ts", "main\n");
    fs.mkdirSync(path.join(ws, "build"));
    const base = (await manager.ensureBaseline(task))!;
    expect(base.skippedTotal).toBeGreaterThan(500);
    await toolWrite(manager, task, "build/generated.cs", "made by the task\n");
    await manager.saveTurn(task, { editedPaths: ["build/generated.cs"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual(["build/generated.cs"]);
    expect(fs.existsSync(path.join(ws, "build/generated.cs"))).toBe(false);
    expect(fs.existsSync(path.join(ws, "build"))).toBe(true);
  });

  it("record that cannot be read (another version's, damaged) is started again, and the edit is still captured", async () => {
    const { sb, manager, task, ws } = setup();
    write(ws, "src/main.ts", "main\n");
    write(ws, "build/config.cs", "the user's config\n");
    const base = (await manager.ensureBaseline(task))!;
    await manager.stop();
    const emptyTree = shadowGit(sb, "mktree").trim();
    const id = ["-c", "user.name=someone", "-c", "user.email=someone@example.com"];
    const damaged = shadowGit(sb, ...id, "commit-tree", emptyTree, "-m", "Dline pre-images\n\nnot a record").trim();
    shadowGit(sb, "update-ref", "refs/dline/preimages/t1", damaged);
    const later = makeManager(sb, {
      conversation: new FileConversation(path.join(sb.base, "conversations"), { t1: [ws] }),
    });
    await toolWrite(later, task, "build/config.cs", "changed by the task\n");
    await later.saveTurn(task, { editedPaths: ["build/config.cs"] });
    await later.restore("t1", base.id, "files");
    expect(read(ws, "build/config.cs")).toBe("the user's config\n");
    await later.stop();
  });

  it("record is a valid git object: git fsck finds nothing wrong with the shadow repository", async () => {
    const { sb, manager, task, ws } = setup();
    write(ws, "src/main.ts", "main\n");
    // Blob ids 7898... and 6178...: captured in this order, the record's tree must still sort them.
    write(ws, "build/first.cs", "a\n");
    write(ws, "build/second.cs", "b\n");
    await manager.ensureBaseline(task);
    await toolWrite(manager, task, "build/first.cs", "changed\n");
    await toolWrite(manager, task, "build/second.cs", "changed\n");
    await manager.saveTurn(task, { editedPaths: ["build/first.cs", "build/second.cs"] });
    await manager.stop();
    const tree = shadowGit(sb, "ls-tree", "refs/dline/preimages/t1");
    expect(tree).toContain("61780798228d17af2d34fce4cfbdf35556832472");
    expect(tree).toContain("78981922613b2afb6025042ff6bd878ac1994e85");
    shadowGit(sb, "fsck", "--strict", "--no-dangling");
  });

  it("survives git's garbage collection of the shadow repository", async () => {
    const { sb, manager, task, ws } = setup();
    write(ws, "src/main.ts", "main\n");
    write(ws, "build/config.cs", "the user's config\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "build/config.cs", "changed by the task\n");
    await manager.saveTurn(task, { editedPaths: ["build/config.cs"] });
    await manager.stop();
    shadowGit(sb, "-c", "gc.reflogExpire=now", "-c", "gc.reflogExpireUnreachable=now", "gc", "-q", "--prune=now");
    const later = makeManager(sb, {
      conversation: new FileConversation(path.join(sb.base, "conversations"), { t1: [ws] }),
    });
    await later.restore("t1", base.id, "files");
    expect(read(ws, "build/config.cs")).toBe("the user's config\n");
    await later.stop();
  });

  it("is taken of a file exactly at the size limit", async () => {
    const { manager, task, ws } = setup({ sizeLimitBytes: 1024 });
    const original = Buffer.alloc(1024, 99);
    write(ws, "src/main.ts", "main\n");
    write(ws, "build/blob.bin", original);
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "build/blob.bin", "changed\n");
    await manager.saveTurn(task, { editedPaths: ["build/blob.bin"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.keptPaths).toEqual([]);
    expect(fs.readFileSync(path.join(ws, "build/blob.bin"))).toEqual(original);
  });

  it("is not read from a named pipe (the tool is not kept waiting), and a restore leaves the pipe", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/main.ts", "main\n");
    fs.mkdirSync(path.join(ws, "build"));
    execFileSync("mkfifo", [path.join(ws, "build/pipe")]);
    const base = (await manager.ensureBaseline(task))!;
    await manager.beforeEdit?.(task, ["build/pipe"]);
    await manager.saveTurn(task, { editedPaths: ["build/pipe"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual([]);
    expect(outcome.keptPaths).toEqual([{ path: "build/pipe", reason: "too_large" }]);
    expect(fs.lstatSync(path.join(ws, "build/pipe")).isFIFO()).toBe(true);
  });
});

describe("a save after a command", () => {
  it("takes a file it holds that is ignored now, as a scan does", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "src/a.ts", "a1\n");
    write(ws, "notes/todo.md", "todo v1\n");
    const task = { id: "t1", workspaceRoots: [ws] };
    const manager = makeManager(sb);
    await manager.ensureBaseline(task);
    // The first command of the process: the workspace is watched from then on.
    write(ws, "src/a.ts", "a2\n");
    await manager.saveTurn(task, { commandRan: true });
    // A command ignores the folder and changes the file the snapshot holds.
    write(ws, ".gitignore", "notes/\n");
    write(ws, "notes/todo.md", "todo v2\n");
    const cp = (await manager.saveTurn(task, { commandRan: true }))!;
    const other = makeManager(sb);
    const scanned = (await other.saveTurn({ id: "t2", workspaceRoots: [ws] }, { commandRan: true }))!;
    expect(cp.tree).toBe(scanned.tree);
    await manager.stop();
    await other.stop();
  });
});
