import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeManager, makeSandbox, read, write } from "./helpers.js";
import { nth } from "../helpers/items.js";

/** A file of a checkpoint, read with the system git from the shadow repository. */
function fileAt(gitDir: string, commit: string, rel: string): string {
  return execFileSync("git", ["--git-dir", gitDir, "show", `${commit}:${rel}`], {
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    encoding: "utf8",
  });
}

// Per-turn saves of recorded paths and file restores run through one fast-import process
// each; these cases hold the parts of that path that plain staging never exercised.
describe("checkpoints written through fast-import", () => {
  it("saves and restores odd file names in a folder whose name needs config quoting", async () => {
    const sb = makeSandbox();
    const ws = path.join(sb.home, "projects", 'odd #1; "quoted" \\ folder');
    fs.mkdirSync(ws, { recursive: true });
    const names = [
      '"starts with a quote.txt',
      "line\nbreak.txt",
      "back\\slash.txt",
      "ünïcode spaced name.txt",
      "dir with space/inner.txt",
    ];
    for (const n of names) write(ws, n, `v1 ${n}`);
    const manager = makeManager(sb);
    const task = { id: "t1", workspaceRoots: [ws] };
    const base = (await manager.ensureBaseline(task))!;
    for (const n of names) write(ws, n, `v2 ${n}`);
    const turn = (await manager.saveTurn(task, { editedPaths: names }))!;
    expect(turn.reused).toBe(false);
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    for (const n of names) expect(fileAt(gitDir, turn.id, n)).toBe(`v2 ${n}`);

    const outcome = await manager.restore("t1", base.id, "files");
    expect([...outcome.restoredPaths].sort()).toEqual([...names].sort());
    for (const n of names) expect(read(ws, n)).toBe(`v1 ${n}`);
    // The undo checkpoint holds what was there before the restore.
    for (const n of names) expect(fileAt(gitDir, outcome.undoCheckpointId, n)).toBe(`v2 ${n}`);

    // Another process opens the same repository: the recorded folder matches the workspace.
    const other = makeManager(sb);
    write(ws, nth(names, 0, "name"), "v3");
    const next = await other.saveTurn({ id: "t2", workspaceRoots: [ws] }, { editedPaths: [nth(names, 0, "name")] });
    expect(next).toBeDefined();
    expect((await other.status({ workspaceRoot: ws })).state).toBe("ready");
  });

  it("builds each turn on the newest snapshot, also when another process moved it", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "a.txt", "a0");
    write(ws, "b.txt", "b0");
    const first = makeManager(sb);
    const second = makeManager(sb);
    const t1 = { id: "t1", workspaceRoots: [ws] };
    const t2 = { id: "t2", workspaceRoots: [ws] };
    await first.ensureBaseline(t1);
    await second.ensureBaseline(t2);
    write(ws, "a.txt", "a1");
    await first.saveTurn(t1, { editedPaths: ["a.txt"] });
    write(ws, "b.txt", "b1");
    await second.saveTurn(t2, { editedPaths: ["b.txt"] });
    write(ws, "a.txt", "a2");
    const latest = (await first.saveTurn(t1, { editedPaths: ["a.txt"] }))!;
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    expect(fileAt(gitDir, latest.id, "a.txt")).toBe("a2");
    expect(fileAt(gitDir, latest.id, "b.txt")).toBe("b1");
    // A command scan after fast commits sees the same tree (the index caught up).
    const scanned = (await first.saveTurn(t1, { commandRan: true }))!;
    expect(scanned.tree).toBe(latest.tree);
    expect(scanned.reused).toBe(true);
  });
});
