import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointManager, CheckpointTask } from "../../core/src/checkpoints/index.js";
import { FileConversation, git, makeManager, makeSandbox, read, write } from "./helpers.js";
import { nth } from "../helpers/items.js";

/**
 * A restore never loses a file that existed before the task: the shapes seen on real
 * repositories (a tracked file under an excluded `build/` or `bin/` folder, an `.env` past the
 * 500 recorded skips, `* text eol=lf` with CRLF files, a user's empty folder, a file over the
 * size limit).
 */
function setup(options: { sizeLimitBytes?: number } = {}) {
  const sb = makeSandbox();
  const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
  const manager = makeManager(sb, { conversation, ...options });
  const task: CheckpointTask = { id: "t1", workspaceRoots: [sb.workspace] };
  return { sb, manager, task, ws: sb.workspace };
}

/** What an editing tool does: tells the checkpoints first (as the runtime's tools do), then writes. */
async function toolWrite(
  manager: CheckpointManager,
  task: CheckpointTask,
  rel: string,
  content: string | Buffer,
): Promise<void> {
  await manager.beforeEdit?.(task, [rel]);
  write(nth(task.workspaceRoots, 0, "workspace root"), rel, content);
}

function bytes(root: string, rel: string): Buffer | undefined {
  try {
    return fs.readFileSync(path.join(root, rel));
  } catch {
    return undefined;
  }
}

describe("a restore never deletes a file that existed before the task", () => {
  it("a tracked file under an excluded build/ folder is edited: Compare says modified, restore brings it back", async () => {
    const { manager, task, ws } = setup();
    write(ws, "build/GenerateDevPackages.cs", "class Generate {}\n");
    write(ws, "src/main.cs", "class Main {}\n");
    git(ws, "init", "-q");
    git(ws, "add", "-A");
    git(ws, "commit", "-qm", "user's commit");
    const base = (await manager.ensureBaseline(task))!;
    expect(base.skipped).toContainEqual({ path: "build", reason: "excluded_type" });

    await toolWrite(manager, task, "build/GenerateDevPackages.cs", "class Generate {}\n// appended by the task\n");
    await manager.saveTurn(task, { editedPaths: ["build/GenerateDevPackages.cs"] });

    const { files } = await manager.compare("t1", base.id);
    expect(files.map((f) => [f.path, f.status, f.before])).toEqual([
      ["build/GenerateDevPackages.cs", "modified", "class Generate {}\n"],
    ]);

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual([]);
    expect(outcome.restoredPaths).toEqual(["build/GenerateDevPackages.cs"]);
    expect(read(ws, "build/GenerateDevPackages.cs")).toBe("class Generate {}\n");
    expect(git(ws, "status", "--porcelain")).toBe("");
  });

  it("an executable file under bin/ keeps its mode and its folder", async () => {
    const { manager, task, ws } = setup();
    write(ws, "packages/babel-cli/bin/babel.js", "#!/usr/bin/env node\nimport '../lib/babel/index.js';\n");
    fs.chmodSync(path.join(ws, "packages/babel-cli/bin/babel.js"), 0o755);
    write(ws, "packages/babel-cli/package.json", "{}\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "packages/babel-cli/bin/babel.js", "#!/usr/bin/env node\n// edited by the task\n");
    await manager.saveTurn(task, { editedPaths: ["packages/babel-cli/bin/babel.js"] });

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual([]);
    expect(read(ws, "packages/babel-cli/bin/babel.js")).toBe("#!/usr/bin/env node\nimport '../lib/babel/index.js';\n");
    expect(fs.statSync(path.join(ws, "packages/babel-cli/bin/babel.js")).mode & 0o777).toBe(0o755);
  });

  it("an untracked .env past the 500 recorded skips comes back with its original content; Undo brings the task's version", async () => {
    const { manager, task, ws } = setup();
    for (let i = 0; i < 600; i++) write(ws, `modules/m${String(i).padStart(3, "0")}/.env.example`, `X=${i}\n`);
    write(ws, "sources/engine/.env", "API_KEY=original-key\n");
    write(ws, "sources/engine/main.cs", "class Engine {}\n");
    const base = (await manager.ensureBaseline(task))!;
    expect(base.skippedTotal).toBeGreaterThan(500);
    expect(base.skipped.map((s) => s.path)).not.toContain("sources/engine/.env");

    await toolWrite(manager, task, "sources/engine/.env", "API_KEY=task-key\n");
    await manager.saveTurn(task, { editedPaths: ["sources/engine/.env"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual([]);
    expect(read(ws, "sources/engine/.env")).toBe("API_KEY=original-key\n");

    await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(read(ws, "sources/engine/.env")).toBe("API_KEY=task-key\n");
  });

  it("without a pre-image (an edit the checkpoints were not told of), an excluded file past the skip limit is kept, not deleted", async () => {
    const { manager, task, ws } = setup();
    for (let i = 0; i < 600; i++) write(ws, `modules/m${String(i).padStart(3, "0")}/.env.example`, `X=${i}\n`);
    write(ws, "sources/engine/.env", "API_KEY=original-key\n");
    const base = (await manager.ensureBaseline(task))!;
    write(ws, "sources/engine/.env", "API_KEY=task-key\n");
    await manager.saveTurn(task, { editedPaths: ["sources/engine/.env"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual([]);
    expect(outcome.keptPaths).toEqual([{ path: "sources/engine/.env", reason: "not_tracked" }]);
    expect(read(ws, "sources/engine/.env")).toBe("API_KEY=task-key\n");
  });

  it("a file over the size limit a tool overwrote comes back from its pre-image (kept up to 4 times that limit)", async () => {
    const { manager, task, ws } = setup({ sizeLimitBytes: 1024 });
    write(ws, "assets/big.txt", Buffer.alloc(3000, 97));
    const base = (await manager.ensureBaseline(task))!;
    expect(base.skipped).toContainEqual({ path: "assets/big.txt", reason: "size" });
    await toolWrite(manager, task, "assets/big.txt", "now small\n");
    await manager.saveTurn(task, { editedPaths: ["assets/big.txt"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.restoredPaths).toEqual(["assets/big.txt"]);
    expect(outcome.keptPaths).toEqual([]);
    expect(bytes(ws, "assets/big.txt")).toEqual(Buffer.alloc(3000, 97));
  });

  it("a file over 4 times the size limit is left as it is and reported, never deleted", async () => {
    const { manager, task, ws } = setup({ sizeLimitBytes: 1024 });
    write(ws, "assets/big.txt", Buffer.alloc(5000, 97));
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "assets/big.txt", "now small\n");
    await manager.saveTurn(task, { editedPaths: ["assets/big.txt"] });
    // Compare, before: changed, but not among the files a restore would change.
    expect(await manager.compare("t1", base.id)).toMatchObject({ restorePaths: [] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual([]);
    expect(outcome.keptPaths).toEqual([{ path: "assets/big.txt", reason: "too_large" }]);
    expect(read(ws, "assets/big.txt")).toBe("now small\n");
    const { files, restorePaths } = await manager.compare("t1", base.id);
    expect(files.map((f) => [f.path, f.status, f.tooLarge])).toEqual([["assets/big.txt", "modified", true]]);
    expect(restorePaths).toEqual([]);
  });
});

/** Waits until file times written next are past a checkpoint's stamp (the kernel's file clock is coarse). */
function afterStampOf(createdAt: number): void {
  while (Date.now() <= createdAt + 20) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
}

describe("a pre-image stands for the checkpoint before it only if nothing changed the file in between", () => {
  it("a restore's own pre-image of a file a command changed does not stand for an earlier turn: Compare and the restore say not tracked", async () => {
    const { manager, task, ws } = setup();
    write(ws, "a.txt", "A\n");
    write(ws, "nested/f.js", "nested orig\n");
    git(path.join(ws, "nested"), "init", "-q");
    git(path.join(ws, "nested"), "add", "-A");
    git(path.join(ws, "nested"), "commit", "-qm", "nested");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "nested/f.js", "nested tool\n");
    const turn = (await manager.saveTurn(task, { editedPaths: ["nested/f.js"] }))!;
    afterStampOf(turn.createdAt);
    write(ws, "nested/f.js", "nested tool\ncmd\n");
    await manager.saveTurn(task, { commandRan: true });
    await manager.saveCompletion(task);
    const notTracked = async () =>
      (await manager.compare("t1", turn.id)).files
        .filter((f) => f.path === "nested/f.js")
        .map((f) => [f.status, f.notTracked]);
    expect(await notTracked()).toEqual([["modified", true]]);

    // To the baseline and back: the restore keeps what it wrote over, for its undo.
    const restored = await manager.restore("t1", base.id, "files");
    expect(restored.restoredPaths).toEqual(["nested/f.js"]);
    expect(read(ws, "nested/f.js")).toBe("nested orig\n");
    await manager.restore("t1", restored.undoCheckpointId, "files");
    expect(read(ws, "nested/f.js")).toBe("nested tool\ncmd\n");

    // That copy holds the command's line, which the turn never had: still not tracked, and named
    // (modified: the file was there at the turn, though the restores wrote it anew since).
    expect(await notTracked()).toEqual([["modified", true]]);
    const toTurn = await manager.restore("t1", turn.id, "files");
    expect(toTurn.keptPaths).toContainEqual({ path: "nested/f.js", reason: "not_tracked" });
    expect(toTurn.restoredPaths).not.toContain("nested/f.js");
    expect(read(ws, "nested/f.js")).toBe("nested tool\ncmd\n");
    // The tool's own pre-image still stands for the baseline.
    const again = await manager.restore("t1", base.id, "files");
    expect(again.restoredPaths).toContain("nested/f.js");
    expect(read(ws, "nested/f.js")).toBe("nested orig\n");
  });
});

describe("a file a restore makes again", () => {
  it("from its pre-image is as private as it was: an .env a command deleted does not come back readable by all", async () => {
    const { manager, task, ws } = setup();
    write(ws, ".gitignore", ".env\n");
    write(ws, ".env", "API_KEY=original-key\n");
    fs.chmodSync(path.join(ws, ".env"), 0o600);
    git(ws, "init", "-q");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, ".env", "API_KEY=task-key\n");
    fs.chmodSync(path.join(ws, ".env"), 0o600);
    await manager.saveTurn(task, { editedPaths: [".env"] });
    fs.rmSync(path.join(ws, ".env"));
    await manager.saveTurn(task, { commandRan: true });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.restoredPaths).toContain(".env");
    expect(read(ws, ".env")).toBe("API_KEY=original-key\n");
    expect(fs.statSync(path.join(ws, ".env")).mode & 0o777).toBe(0o600);
  });
});

describe("Compare of a file grown past the size limit", () => {
  it("says modified and too large, not deleted: the scan leaves it out, the workspace still has it", async () => {
    const { manager, task, ws } = setup({ sizeLimitBytes: 1024 });
    write(ws, "grow.txt", "small\n");
    write(ws, "normal.txt", "n\n");
    const base = (await manager.ensureBaseline(task))!;
    write(ws, "grow.txt", Buffer.alloc(4096, 103));
    write(ws, "normal.txt", "n\nn2\n");
    await manager.saveTurn(task, { commandRan: true });
    const { files } = await manager.compare("t1", base.id);
    expect(files.map((f) => [f.path, f.status, f.tooLarge, f.before])).toEqual([
      ["grow.txt", "modified", true, "small\n"],
      ["normal.txt", "modified", false, "n\n"],
    ]);
  });
});

describe("what a path restore keeps", () => {
  it("without a pre-image, a file the checkpoint left out as too large, made small since, is kept, not deleted", async () => {
    const { manager, task, ws } = setup({ sizeLimitBytes: 1024 });
    write(ws, "assets/big.txt", Buffer.alloc(2048, 97));
    const base = (await manager.ensureBaseline(task))!;
    expect(base.skipped).toContainEqual({ path: "assets/big.txt", reason: "size" });
    // Changed without telling the checkpoints first: no pre-image; the turn's save now holds it.
    write(ws, "assets/big.txt", "now small\n");
    await manager.saveTurn(task, { editedPaths: ["assets/big.txt"] });
    expect(await manager.compare("t1", base.id)).toMatchObject({ restorePaths: [] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual([]);
    expect(outcome.keptPaths).toEqual([{ path: "assets/big.txt", reason: "not_tracked" }]);
    expect(read(ws, "assets/big.txt")).toBe("now small\n");
  });

  it("a file the task created that the undo checkpoint cannot hold (too large) goes, kept as a pre-image: the undo brings it back", async () => {
    const { manager, task, ws } = setup({ sizeLimitBytes: 1024 });
    write(ws, "src/app.ts", "v1\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "out/data.bin", Buffer.alloc(4096, 98));
    await toolWrite(manager, task, "src/made.ts", "made by the task\n");
    await manager.saveTurn(task, { editedPaths: ["out/data.bin", "src/made.ts"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual(["out/data.bin", "src/made.ts"]);
    expect(bytes(ws, "out/data.bin")).toBeUndefined();
    await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(bytes(ws, "out/data.bin")).toEqual(Buffer.alloc(4096, 98));
  });

  it("a file the task created too large even for a pre-image stays, and the restore says so: deleting it could not be undone", async () => {
    const { manager, task, ws } = setup({ sizeLimitBytes: 1024 });
    write(ws, "src/app.ts", "v1\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "data/dump.txt", Buffer.alloc(5000, 98));
    await toolWrite(manager, task, "src/made.ts", "made by the task\n");
    await manager.saveTurn(task, { editedPaths: ["data/dump.txt", "src/made.ts"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual(["src/made.ts"]);
    expect(outcome.keptPaths).toEqual([{ path: "data/dump.txt", reason: "too_large" }]);
    expect(bytes(ws, "data/dump.txt")).toEqual(Buffer.alloc(5000, 98));
  });

  it("the next turn's checkpoint builds on the restored files, not on the task's versions", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/app.ts", "v1\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "src/app.ts", "v2 by the task\n");
    await toolWrite(manager, task, "src/made.ts", "made by the task\n");
    await manager.saveTurn(task, { editedPaths: ["src/app.ts", "src/made.ts"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.restoredPaths).toEqual(["src/app.ts"]);
    expect(outcome.deletedPaths).toEqual(["src/made.ts"]);
    await toolWrite(manager, task, "src/other.ts", "other\n");
    const next = (await manager.saveTurn(task, { editedPaths: ["src/other.ts"] }))!;
    // Against the workspace, that checkpoint differs in nothing: it holds app.ts at v1 and no made.ts.
    expect((await manager.compare("t1", next.id)).files).toEqual([]);
  });
});

const isFolder = (ws: string, rel: string) =>
  fs.statSync(path.join(ws, rel), { throwIfNoEntry: false })?.isDirectory() ?? false;

describe("the user's folders stay", () => {
  it("removes only the files and folders the task created; an empty folder the user had stays", async () => {
    const { manager, task, ws } = setup();
    fs.mkdirSync(path.join(ws, "notes"));
    fs.mkdirSync(path.join(ws, "empty-and-kept"));
    write(ws, "src/app.ts", "v1\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "notes/todo.md", "made by the task\n");
    await toolWrite(manager, task, "gen/code/x.ts", "generated\n");
    await manager.saveTurn(task, { editedPaths: ["notes/todo.md", "gen/code/x.ts"] });

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths.sort()).toEqual(["gen/code/x.ts", "notes/todo.md"]);
    expect(fs.existsSync(path.join(ws, "notes"))).toBe(true);
    expect(fs.existsSync(path.join(ws, "empty-and-kept"))).toBe(true);
    expect(fs.existsSync(path.join(ws, "gen"))).toBe(false);
  });

  it("a restore without recorded edits (reset) keeps the user's folders too", async () => {
    const { manager, task, ws } = setup();
    fs.mkdirSync(path.join(ws, "notes"));
    write(ws, "src/app.ts", "v1\n");
    const base = (await manager.ensureBaseline(task))!;
    // A command creates files (no recorded edits): one in the user's empty folder, one in a new folder.
    write(ws, "notes/todo.md", "made by a command\n");
    write(ws, "gen/code/x.ts", "generated\n");
    await manager.saveTurn(task, { commandRan: true });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths.sort()).toEqual(["gen/code/x.ts", "notes/todo.md"]);
    expect(fs.existsSync(path.join(ws, "notes"))).toBe(true);
    expect(fs.existsSync(path.join(ws, "gen"))).toBe(false);
  });
});

describe("the user's empty folders stay, even made again by a command", () => {
  /** `rm -rf rel && mkdir rel`, born after the checkpoint (a birth time is in milliseconds). */
  async function remake(ws: string, rel: string): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 20));
    fs.rmSync(path.join(ws, rel), { recursive: true });
    fs.mkdirSync(path.join(ws, rel));
  }
  it("by either restore rule, and for a later task in another process", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [ws], t2: [ws] });
    fs.mkdirSync(path.join(ws, "reports"));
    fs.mkdirSync(path.join(ws, "drafts/old"), { recursive: true });
    write(ws, "src/app.ts", "v1\n");
    const manager = makeManager(sb, { conversation });
    const t1: CheckpointTask = { id: "t1", workspaceRoots: [ws] };
    const base = (await manager.ensureBaseline(t1))!;
    expect(base.emptyFolders).toEqual(["drafts/old", "reports"]);
    // A command (no recorded edits: the reset rule) remade the folder and wrote in it.
    await remake(ws, "reports");
    write(ws, "reports/r.txt", "made by a command\n");
    await manager.saveTurn(t1, { commandRan: true });
    const reset = await manager.restore("t1", base.id, "files");
    expect(reset.deletedPaths).toEqual(["reports/r.txt"]);
    // Before: removed, its new birth time taken for a folder the task made.
    expect(isFolder(ws, "reports")).toBe(true);

    // Another process: its baseline takes the list from the newest snapshot, less what is gone.
    fs.rmSync(path.join(ws, "reports"), { recursive: true });
    const later = makeManager(sb, { conversation });
    const t2: CheckpointTask = { id: "t2", workspaceRoots: [ws] };
    const base2 = (await later.ensureBaseline(t2))!;
    expect(base2.emptyFolders).toEqual(["drafts/old"]);
    await remake(ws, "drafts/old");
    await later.beforeEdit?.(t2, ["drafts/old/d.md"]);
    write(ws, "drafts/old/d.md", "written by a tool\n");
    await later.saveTurn(t2, { editedPaths: ["drafts/old/d.md"] });
    const recorded = await later.restore("t2", base2.id, "files");
    expect(recorded.deletedPaths).toEqual(["drafts/old/d.md"]);
    expect(isFolder(ws, "drafts/old")).toBe(true);
  });
});

describe("an empty folder a command deleted comes back", () => {
  /** Empty `reports/` and `drafts/old/`, a baseline, then a command's turn that deleted both. */
  async function foldersDeletedByACommand() {
    const { manager, task, ws } = setup();
    fs.mkdirSync(path.join(ws, "reports"));
    fs.mkdirSync(path.join(ws, "drafts/old"), { recursive: true });
    write(ws, "src/app.ts", "v1\n");
    const base = (await manager.ensureBaseline(task))!;
    // A command (`rmdir reports && rm -r drafts && echo … > notes.txt`): no recorded edits.
    fs.rmdirSync(path.join(ws, "reports"));
    fs.rmSync(path.join(ws, "drafts"), { recursive: true });
    write(ws, "notes.txt", "made by a command\n");
    const turn = (await manager.saveTurn(task, { commandRan: true }))!;
    return { manager, ws, base, turn };
  }

  it("by the reset rule; a checkpoint saved after the deletion does not list it", async () => {
    const { manager, ws, base, turn } = await foldersDeletedByACommand();
    expect(base.emptyFolders).toEqual(["drafts/old", "reports"]);
    // Before: the process's list as the baseline had it, so a restore to this turn would make them again.
    expect(turn.emptyFolders).toEqual([]);

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual(["notes.txt"]);
    // Before: both stayed gone.
    expect(isFolder(ws, "reports")).toBe(true);
    expect(isFolder(ws, "drafts/old")).toBe(true);

    // Back to the turn: the folders the turn did not have are not made again (nor removed: the person's now).
    fs.rmdirSync(path.join(ws, "reports"));
    await manager.restore("t1", turn.id, "files");
    expect(isFolder(ws, "reports")).toBe(false);
  });

  it("with tool edits, when a command ran after the checkpoint, also where a link of the task stood", async () => {
    const { sb, manager, task, ws } = setup();
    const outside = path.join(sb.base, "outside");
    fs.mkdirSync(outside);
    fs.mkdirSync(path.join(ws, "reports"));
    fs.mkdirSync(path.join(ws, "cache/keep"), { recursive: true });
    write(ws, "src/app.ts", "v1\n");
    const base = (await manager.ensureBaseline(task))!;
    expect(base.emptyFolders).toEqual(["cache/keep", "reports"]);
    await toolWrite(manager, task, "src/app.ts", "v2\n");
    await manager.saveTurn(task, { editedPaths: ["src/app.ts"] });
    // A command deleted one folder and put a link to a folder outside in place of another's parent.
    fs.rmdirSync(path.join(ws, "reports"));
    fs.rmSync(path.join(ws, "cache"), { recursive: true });
    fs.symlinkSync(outside, path.join(ws, "cache"));
    await manager.saveTurn(task, { commandRan: true });

    const outcome = await manager.restore("t1", base.id, "files");
    expect(read(ws, "src/app.ts")).toBe("v1\n");
    expect(isFolder(ws, "reports")).toBe(true);
    expect(fs.readdirSync(outside)).toEqual([]);
    // The command's link went (the task made it), and the folder came back in its place.
    expect(fs.lstatSync(path.join(ws, "cache")).isSymbolicLink()).toBe(false);
    expect(isFolder(ws, "cache/keep")).toBe(true);

    // Undone: the tool's edit, the command's link, and no folder the restore made.
    await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(read(ws, "src/app.ts")).toBe("v2\n");
    expect(isFolder(ws, "reports")).toBe(false);
    expect(fs.readlinkSync(path.join(ws, "cache"))).toBe(outside);
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it("undoing that restore removes the folders it made again", async () => {
    const { manager, ws, base } = await foldersDeletedByACommand();
    const outcome = await manager.restore("t1", base.id, "files");
    expect(isFolder(ws, "reports")).toBe(true);
    expect(isFolder(ws, "drafts/old")).toBe(true);

    await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(read(ws, "notes.txt")).toBe("made by a command\n");
    // Before: all three stayed, though none was there when the restore was asked for.
    expect(isFolder(ws, "reports")).toBe(false);
    expect(isFolder(ws, "drafts")).toBe(false);
  });

  it("undoing the undo makes them again, each restore in a process of its own (as `dline restore` is)", async () => {
    const { sb, manager, task, ws } = setup();
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [ws] });
    fs.mkdirSync(path.join(ws, "E/sub"), { recursive: true });
    write(ws, "a.txt", "o\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "a.txt", "edited\n");
    await manager.saveTurn(task, { editedPaths: ["a.txt"] });
    // The command `rm -r E`.
    fs.rmSync(path.join(ws, "E"), { recursive: true });
    await manager.saveTurn(task, { commandRan: true });
    await manager.stop();

    const restoreIn = async (checkpointId: string) => {
      const process = makeManager(sb, { conversation });
      const outcome = await process.restore("t1", checkpointId, "files");
      await process.stop();
      return outcome;
    };
    const restored = await restoreIn(base.id);
    expect([read(ws, "a.txt"), isFolder(ws, "E/sub")]).toEqual(["o\n", true]);
    const undone = await restoreIn(restored.undoCheckpointId);
    expect([read(ws, "a.txt"), isFolder(ws, "E")]).toEqual(["edited\n", false]);
    await restoreIn(undone.undoCheckpointId);
    // Before: a.txt came back, E/sub did not (the undo checkpoint listed no empty folder).
    expect([read(ws, "a.txt"), isFolder(ws, "E/sub")]).toEqual(["o\n", true]);
  });

  it("undoing it keeps a folder it made that something was put in since", async () => {
    const { manager, task, ws } = setup();
    fs.mkdirSync(path.join(ws, "reports"));
    write(ws, "src/app.ts", "v1\n");
    const base = (await manager.ensureBaseline(task))!;
    fs.rmdirSync(path.join(ws, "reports"));
    await manager.saveTurn(task, { commandRan: true });
    const outcome = await manager.restore("t1", base.id, "files");
    // Files the checkpoints leave out (an excluded folder): the undo does not delete them.
    write(ws, "reports/node_modules/pkg/index.js", "installed after the restore\n");

    await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(read(ws, "reports/node_modules/pkg/index.js")).toBe("installed after the restore\n");
  });

  it("a restore of tool edits alone leaves a folder the person removed since as it is", async () => {
    const { manager, task, ws } = setup();
    fs.mkdirSync(path.join(ws, "reports"));
    write(ws, "src/app.ts", "v1\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "src/app.ts", "v2\n");
    await manager.saveTurn(task, { editedPaths: ["src/app.ts"] });
    fs.rmdirSync(path.join(ws, "reports"));
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "src/app.ts")).toBe("v1\n");
    expect(isFolder(ws, "reports")).toBe(false);
  });
});

describe("empty folders a command made", () => {
  // Found in a user pass: a command's `mkdir newempty` stayed after a restore to the baseline,
  // while a folder a command made and filled went with its files.
  it.each([
    ["the reset rule (no recorded edits)", false],
    ["recorded edits, a command after the checkpoint", true],
  ])(
    "go with a restore to a checkpoint before them, by %s; the user's stay; the undo makes them again",
    async (_, toolEdit) => {
      const { manager, task, ws } = setup();
      fs.mkdirSync(path.join(ws, "kept-empty"));
      write(ws, "src/app.ts", "v1\n");
      const base = (await manager.ensureBaseline(task))!;
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (toolEdit) {
        await toolWrite(manager, task, "src/app.ts", "v2\n");
        await manager.saveTurn(task, { editedPaths: ["src/app.ts"] });
      }
      fs.mkdirSync(path.join(ws, "newempty/deep"), { recursive: true });
      fs.mkdirSync(path.join(ws, "src/made"));
      if (!toolEdit) write(ws, "src/app.ts", "v2\n");
      await manager.saveTurn(task, { commandRan: true });

      const outcome = await manager.restore("t1", base.id, "files");
      expect(read(ws, "src/app.ts")).toBe("v1\n");
      expect(isFolder(ws, "newempty")).toBe(false);
      expect(isFolder(ws, "src/made")).toBe(false);
      expect(isFolder(ws, "src")).toBe(true);
      expect(isFolder(ws, "kept-empty")).toBe(true);

      await manager.restore("t1", outcome.undoCheckpointId, "files");
      expect(read(ws, "src/app.ts")).toBe("v2\n");
      expect(isFolder(ws, "newempty/deep")).toBe(true);
      expect(isFolder(ws, "src/made")).toBe(true);
      expect(isFolder(ws, "kept-empty")).toBe(true);
    },
  );
});

describe("a later task's list of empty folders", () => {
  it("is the newest snapshot's, less what is gone: its baseline walks nothing", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [ws], t2: [ws] });
    fs.mkdirSync(path.join(ws, "keep"));
    fs.mkdirSync(path.join(ws, "gone"));
    write(ws, "src/app.ts", "v1\n");
    const first = makeManager(sb, { conversation });
    const t1: CheckpointTask = { id: "t1", workspaceRoots: [ws] };
    expect((await first.ensureBaseline(t1))!.emptyFolders).toEqual(["gone", "keep"]);
    await first.saveCompletion(t1);

    // Between the tasks: one recorded folder removed, a new empty one made.
    fs.rmdirSync(path.join(ws, "gone"));
    fs.mkdirSync(path.join(ws, "made-between"));
    const later = makeManager(sb, { conversation });
    const t2: CheckpointTask = { id: "t2", workspaceRoots: [ws] };
    // A walk would have listed made-between too (a known gap, for a later task's cost).
    expect((await later.ensureBaseline(t2))!.emptyFolders).toEqual(["keep"]);
  });
});

describe("bytes exactly as they were", () => {
  it("a CRLF file under `* text eol=lf` comes back with its CRLFs, by either restore rule", async () => {
    const { manager, task, ws } = setup();
    const crlf = Buffer.from("line one\r\nline two\r\n");
    write(ws, ".gitattributes", "* text eol=lf\n*.dat ident\n");
    write(ws, "src/windows.txt", crlf);
    write(ws, "src/other.txt", crlf);
    write(ws, "src/id.dat", "$Id$\n");
    const base = (await manager.ensureBaseline(task))!;
    // A tool edit of one file (recorded-paths restore)...
    await toolWrite(manager, task, "src/windows.txt", "changed\n");
    await manager.saveTurn(task, { editedPaths: ["src/windows.txt"] });
    await manager.restore("t1", base.id, "files");
    expect(bytes(ws, "src/windows.txt")).toEqual(crlf);
    // ...and the workspace unchanged by the snapshot: Compare finds nothing.
    expect((await manager.compare("t1", base.id)).files).toEqual([]);

    // A command-only task (reset rule) restores every file byte for byte.
    const t2: CheckpointTask = { id: "t2", workspaceRoots: [ws] };
    const base2 = (await manager.ensureBaseline(t2))!;
    write(ws, "src/other.txt", "changed by a command\n");
    write(ws, "src/id.dat", "changed\n");
    await manager.saveTurn(t2, { commandRan: true });
    await manager.restore("t2", base2.id, "files");
    expect(bytes(ws, "src/other.txt")).toEqual(crlf);
    expect(read(ws, "src/id.dat")).toBe("$Id$\n");
  });

  it("the shadow config has one section per name and names no program of the workspace", async () => {
    const { manager, task, ws, sb } = setup();
    write(ws, "a.txt", "a");
    await manager.ensureBaseline(task);
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    const config = fs.readFileSync(path.join(gitDir, "config"), "utf8");
    expect(config.match(/^\[core\]$/gm)).toHaveLength(1);
    expect(config).toMatch(/hooksPath = ".*no-hooks"/);
    expect(config).toMatch(/fsmonitor = false/);
    expect(fs.readFileSync(path.join(gitDir, "info", "attributes"), "utf8")).toMatch(
      /^\* -text -eol .*-filter -ident -working-tree-encoding/m,
    );
  });
});
