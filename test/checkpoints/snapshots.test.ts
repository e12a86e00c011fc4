import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeManager, makeSandbox, write, type Sandbox } from "./helpers.js";

/** The files of a checkpoint's snapshot with their contents, read with plain git. */
function snapshot(sb: Sandbox, commit: string): Record<string, string> {
  const gitDir = path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git");
  const run = (...args: string[]) =>
    execFileSync("git", ["--git-dir", gitDir, ...args], {
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    }).toString();
  const files = run("ls-tree", "-r", "-z", "--name-only", commit).split("\0").filter(Boolean);
  return Object.fromEntries(files.map((f) => [f, run("cat-file", "blob", `${commit}:${f}`)]));
}

describe("every snapshot matches the workspace it was taken from", () => {
  it("across per-turn saves of recorded paths, command scans, restores and ignored files", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, ".gitignore", "out/\n");
    write(ws, "a.txt", "a0");
    write(ws, "b.txt", "b0");
    const manager = makeManager(sb);
    const task = { id: "t", workspaceRoots: [ws] };
    const base = (await manager.ensureBaseline(task))!;
    expect(snapshot(sb, base.id)).toEqual({ ".gitignore": "out/\n", "a.txt": "a0", "b.txt": "b0" });

    // A tool writes a tracked file and an ignored one (force-added).
    write(ws, "a.txt", "a1");
    write(ws, "out/report.txt", "r1");
    const t1 = (await manager.saveTurn(task, { editedPaths: ["a.txt", "out/report.txt"] }))!;
    expect(snapshot(sb, t1.id)).toEqual({
      ".gitignore": "out/\n",
      "a.txt": "a1",
      "b.txt": "b0",
      "out/report.txt": "r1",
    });

    // A command changes b.txt; the scan keeps what tools wrote, including the ignored file.
    write(ws, "b.txt", "b1");
    const t2 = (await manager.saveTurn(task, { commandRan: true }))!;
    expect(snapshot(sb, t2.id)).toEqual({
      ".gitignore": "out/\n",
      "a.txt": "a1",
      "b.txt": "b1",
      "out/report.txt": "r1",
    });

    // A tool deletes the ignored file; a hand edit reverts a.txt (picked up by the next scan).
    fs.rmSync(path.join(ws, "out/report.txt"));
    const t3 = (await manager.saveTurn(task, { editedPaths: ["out/report.txt"] }))!;
    expect(snapshot(sb, t3.id)).toEqual({ ".gitignore": "out/\n", "a.txt": "a1", "b.txt": "b1" });
    write(ws, "a.txt", "a0");
    const t4 = (await manager.saveTurn(task, { commandRan: true }))!;
    expect(snapshot(sb, t4.id)).toEqual({ ".gitignore": "out/\n", "a.txt": "a0", "b.txt": "b1" });

    // Restore to t1: a.txt (recorded), and b.txt, which a command changed since; the next
    // recorded-path save builds on the restored state.
    await manager.restore("t", t1.id, "files");
    expect(fs.readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("a1");
    expect(fs.readFileSync(path.join(ws, "b.txt"), "utf8")).toBe("b0");
    expect(fs.readFileSync(path.join(ws, "out/report.txt"), "utf8")).toBe("r1");
    write(ws, "c.txt", "c1");
    const t5 = (await manager.saveTurn(task, { editedPaths: ["c.txt"] }))!;
    expect(snapshot(sb, t5.id)).toEqual({
      ".gitignore": "out/\n",
      "a.txt": "a1",
      "b.txt": "b0",
      "c.txt": "c1",
      "out/report.txt": "r1",
    });
    const t6 = (await manager.saveTurn(task, { commandRan: true }))!;
    expect(snapshot(sb, t6.id)).toEqual(snapshot(sb, t5.id));
    expect(t6.reused).toBe(true);

    // An executable bit and a symbolic link survive a recorded-path save and a restore.
    write(ws, "run.sh", "#!/bin/sh\n");
    fs.chmodSync(path.join(ws, "run.sh"), 0o755);
    fs.symlinkSync("a.txt", path.join(ws, "link"));
    const t7 = (await manager.saveTurn(task, { editedPaths: ["run.sh", "link"] }))!;
    fs.chmodSync(path.join(ws, "run.sh"), 0o644);
    fs.rmSync(path.join(ws, "link"));
    await manager.saveTurn(task, { editedPaths: ["run.sh", "link"] });
    await manager.restore("t", t7.id, "files");
    expect(fs.statSync(path.join(ws, "run.sh")).mode & 0o111).not.toBe(0);
    expect(fs.readlinkSync(path.join(ws, "link"))).toBe("a.txt");
  });

  it("a folder a command replaced by a link to another: the turn is saved and compared", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "d/f.txt", "f");
    write(ws, "other/g.txt", "g");
    const manager = makeManager(sb);
    const task = { id: "t", workspaceRoots: [ws] };
    const base = (await manager.ensureBaseline(task))!;
    fs.rmSync(path.join(ws, "d"), { recursive: true });
    fs.symlinkSync("other", path.join(ws, "d"));
    // Before, git refused to stage d/f.txt ("beyond a symbolic link"): no checkpoint, and compare failed.
    const turn = (await manager.saveTurn(task, { commandRan: true }))!;
    expect(turn).toBeDefined();
    expect(snapshot(sb, turn.id)).toEqual({ d: "other", "other/g.txt": "g" });
    const { files } = await manager.compare("t", base.id);
    expect(files.map((f) => [f.path, f.status])).toEqual([
      ["d", "added"],
      ["d/f.txt", "deleted"],
    ]);
  });
});
