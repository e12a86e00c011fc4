import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeManager, makeSandbox, write } from "./helpers.js";
import { nth } from "../helpers/items.js";
import { indexWriteStamp } from "../helpers/shadow-index.js";

/** The shadow index's last write: a scan stages into it, a watched save does not touch it. */
function indexTime(gitDir: string): string {
  return indexWriteStamp(path.join(gitDir, "index"));
}

describe("saves after commands stage only what the watcher saw change", () => {
  it("files changed, added, deleted, a new folder, ignored and excluded files: the same snapshot a scan makes, without a scan", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, ".gitignore", "out-ignored/\n*.secret\n");
    for (let i = 0; i < 40; i++) write(ws, `src/m${i % 4}/f${i}.ts`, `export const x = ${i};\n`);
    write(ws, "README.md", "readme\n");
    const task = { id: "t1", workspaceRoots: [ws] };
    const manager = makeManager(sb);
    await manager.ensureBaseline(task);
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");

    // The first command of the process runs a while: the workspace is watched from then on.
    manager.commandStarting(task);
    await manager.idle();
    write(ws, "src/m0/f0.ts", "first command\n");
    await manager.saveTurn(task, { commandRan: true });

    // A second command changes, adds, deletes; makes a folder with files; writes ignored and excluded files.
    write(ws, "src/m1/f1.ts", "changed\n");
    fs.rmSync(path.join(ws, "src/m2/f2.ts"));
    write(ws, "src/new/deep/a.ts", "new a\n");
    write(ws, "src/new/b.ts", "new b\n");
    write(ws, "out-ignored/x.js", "ignored\n");
    write(ws, "key.secret", "ignored\n");
    write(ws, "node_modules/pkg/index.js", "excluded\n");
    write(ws, "app.log", "excluded type\n");
    // The scan's staging is followed by the index's cached trees, written in the background.
    await manager.idle();
    const before = indexTime(gitDir);
    const cp = (await manager.saveTurn(task, { commandRan: true }))!;
    expect(indexTime(gitDir)).toBe(before);

    // A full scan by another process finds the workspace exactly as that save recorded it.
    const other = makeManager(sb);
    const scanned = (await other.saveTurn({ id: "t2", workspaceRoots: [ws] }, { commandRan: true }))!;
    expect(scanned.tree).toBe(cp.tree);
    const { files } = await manager.compare("t1", nth(await manager.list("t1"), 0, "checkpoint").id);
    expect(files.map((f) => [f.path, f.status, !!f.notTracked]).sort()).toEqual([
      ["app.log", "added", true],
      ["key.secret", "added", true],
      ["node_modules/", "added", true],
      ["out-ignored/", "added", true],
      ["src/m0/f0.ts", "modified", false],
      ["src/m1/f1.ts", "modified", false],
      ["src/m2/f2.ts", "deleted", false],
      ["src/new/b.ts", "added", false],
      ["src/new/deep/a.ts", "added", false],
    ]);
    await manager.stop();
    await other.stop();
  });

  it("a burst of changes too large to trust the watcher falls back to a scan, with the same result", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "a.txt", "a\n");
    for (let i = 0; i < 9000; i++) write(ws, `gen/g${i % 30}/f${i}.txt`, `${i}\n`);
    const task = { id: "t1", workspaceRoots: [ws] };
    const manager = makeManager(sb);
    await manager.ensureBaseline(task);
    manager.commandStarting(task);
    await manager.idle();
    write(ws, "a.txt", "first\n");
    await manager.saveTurn(task, { commandRan: true });
    // Every file changed in watched folders: more events than the watcher is trusted with.
    for (let i = 0; i < 9000; i++) write(ws, `gen/g${i % 30}/f${i}.txt`, `changed ${i}\n`);
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    const before = indexTime(gitDir);
    const cp = (await manager.saveTurn(task, { commandRan: true }))!;
    expect(indexTime(gitDir)).not.toBe(before);
    const other = makeManager(sb);
    expect((await other.saveTurn({ id: "t2", workspaceRoots: [ws] }, { commandRan: true }))!.tree).toBe(cp.tree);
    await manager.stop();
    await other.stop();
  });
});

describe("the watch begins as the first command starts", () => {
  function workspaceWithFiles() {
    const sb = makeSandbox();
    const ws = sb.workspace;
    for (let i = 0; i < 40; i++) write(ws, `src/m${i % 4}/f${i}.ts`, `export const x = ${i};\n`);
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    return { sb, ws, gitDir, task: { id: "t1", workspaceRoots: [ws] } };
  }

  it("and is scanned while the command runs: the save after it stages what changed without a scan of its own", async () => {
    const { sb, ws, gitDir, task } = workspaceWithFiles();
    const manager = makeManager(sb);
    await manager.ensureBaseline(task);
    // Changed in the editor after the baseline, before the command: the scan during the command finds it.
    write(ws, "src/m3/f3.ts", "edited by the person\n");
    manager.commandStarting(task);
    await manager.idle();
    // The command: changes, adds a folder, deletes.
    write(ws, "src/m0/f0.ts", "changed by the command\n");
    write(ws, "src/made/deep/a.ts", "new\n");
    fs.rmSync(path.join(ws, "src/m1/f1.ts"));
    const before = indexTime(gitDir);
    const cp = (await manager.saveTurn(task, { commandRan: true }))!;
    // Before: this save walked the workspace for the watch, then scanned it (the index restaged).
    expect(indexTime(gitDir)).toBe(before);

    const other = makeManager(sb);
    expect((await other.saveTurn({ id: "t2", workspaceRoots: [ws] }, { commandRan: true }))!.tree).toBe(cp.tree);
    const { files } = await manager.compare("t1", nth(await manager.list("t1"), 0, "checkpoint").id);
    expect(files.map((f) => [f.path, f.status]).sort()).toEqual([
      ["src/m0/f0.ts", "modified"],
      ["src/m1/f1.ts", "deleted"],
      ["src/m3/f3.ts", "modified"],
      ["src/made/deep/a.ts", "added"],
    ]);
    await manager.stop();
    await other.stop();
  });

  it("short commands are saved by scans; from the second on the workspace is watched, and then saves do not scan", async () => {
    const { sb, ws, gitDir, task } = workspaceWithFiles();
    const manager = makeManager(sb);
    await manager.ensureBaseline(task);
    const other = makeManager(sb);
    const scannedByOther = async () => {
      const cp = (await other.saveTurn({ id: "t2", workspaceRoots: [ws] }, { commandRan: true }))!;
      // That process's scan writes the index's cached trees in the background.
      await other.idle();
      return cp.tree;
    };
    /** A command over before its watch was due (commandStarting's delay): only its save is seen. */
    const shortCommand = async (rel: string) => {
      write(ws, rel, `changed by a command\n`);
      return (await manager.saveTurn(task, { commandRan: true }))!;
    };
    for (const rel of ["src/m0/f0.ts", "src/m1/f1.ts"]) {
      const before = indexTime(gitDir);
      const cp = await shortCommand(rel);
      expect(indexTime(gitDir)).not.toBe(before);
      expect(await scannedByOther()).toBe(cp.tree);
    }
    // The second command's save began the watch; once its walk and scan have ended, saves are watched.
    await manager.idle();
    const before = indexTime(gitDir);
    const third = await shortCommand("src/m2/f2.ts");
    expect(indexTime(gitDir)).toBe(before);
    expect(await scannedByOther()).toBe(third.tree);
    await manager.stop();
    await other.stop();
  });
});
