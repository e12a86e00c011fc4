import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeManager, makeSandbox, write } from "./helpers.js";
import { nth } from "../helpers/items.js";

/** The shadow index's modification time: a scan stages into it, a watched save does not touch it. */
function indexTime(gitDir: string): number {
  return fs.statSync(path.join(gitDir, "index")).mtimeMs;
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

    // The first command of the process: the workspace is watched from then on (this save scans).
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
