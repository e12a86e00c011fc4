// An editor's sidecar lives across tasks: a few seconds after a task's completion it watches the
// workspace, so that the next task's baseline takes what the watcher saw change instead of a
// git status over every file (at 27,000 files about 90 ms of CPU each task).
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeManager, makeSandbox, read, write } from "./helpers.js";

/** A `git` first on PATH that notes the subcommands it runs (status, write-tree), then runs the real git. */
function countingGit(dir: string): { path: string; statuses: () => number; treeWrites: () => number } {
  const bin = path.join(dir, "counting-git-bin");
  fs.mkdirSync(bin, { recursive: true });
  const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  const log = path.join(dir, "git-calls.log");
  fs.writeFileSync(
    path.join(bin, "git"),
    `#!/bin/sh\nfor a in "$@"; do case "$a" in status|write-tree) echo "$a" >> '${log}';; esac; done\nexec '${realGit}' "$@"\n`,
    { mode: 0o755 },
  );
  const count = (name: string) =>
    fs.existsSync(log)
      ? fs
          .readFileSync(log, "utf8")
          .split("\n")
          .filter((l) => l === name).length
      : 0;
  return {
    path: `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
    statuses: () => count("status"),
    treeWrites: () => count("write-tree"),
  };
}

async function until(condition: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(condition()).toBe(true);
}

describe("the next task in a sidecar that lives on (an editor's)", () => {
  it("takes its baseline from what the watcher saw: no git status, the person's edits between the tasks in it", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "src/a.txt", "a\n");
    write(ws, "src/b.txt", "b\n");
    const git = countingGit(sb.base);
    const manager = makeManager(sb, { env: { ...sb.env, PATH: git.path } });
    const first = { id: "t1", workspaceRoots: [ws] };
    await manager.ensureBaseline(first);
    await manager.beforeEdit(first, ["src/a.txt"]);
    write(ws, "src/a.txt", "a by the first task\n");
    await manager.saveTurn(first, { editedPaths: ["src/a.txt"] });
    await manager.saveCompletion(first);
    const afterFirst = git.statuses();
    // The watch begins a few seconds later, and one scan puts it in step.
    await until(() => git.statuses() > afterFirst, 15_000);
    await manager.idle();
    const watching = git.statuses();

    // The person edits a file and makes one between the tasks.
    write(ws, "src/b.txt", "b by hand\n");
    write(ws, "src/new.txt", "made by hand\n");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = { id: "t2", workspaceRoots: [ws] };
    const treeWrites = git.treeWrites();
    const base = (await manager.ensureBaseline(second))!;
    expect(git.statuses()).toBe(watching);
    await manager.beforeEdit(second, ["src/b.txt"]);
    write(ws, "src/b.txt", "b by the second task\n");
    await manager.saveTurn(second, { editedPaths: ["src/b.txt"] });
    await manager.saveCompletion(second);
    await manager.idle();
    // The baseline staged what the watcher saw into the index; no git status reads it while the
    // watcher is in step, so the index's cached trees are not rewritten after each save (a git
    // process a task, beside its turns).
    expect(git.treeWrites()).toBe(treeWrites);
    const restored = await manager.restore("t2", base.id, "files");
    expect(restored.fileError).toBe("");
    expect([read(ws, "src/b.txt"), read(ws, "src/new.txt"), read(ws, "src/a.txt")]).toEqual([
      "b by hand\n",
      "made by hand\n",
      "a by the first task\n",
    ]);
    await manager.stop();
  }, 30_000);

  it("a process its client stops after one command (the CLI's) begins no watch after a completion", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "src/a.txt", "a\n");
    const git = countingGit(sb.base);
    const manager = makeManager(sb, { env: { ...sb.env, PATH: git.path }, watchBetweenTasks: false });
    const task = { id: "t1", workspaceRoots: [ws] };
    await manager.ensureBaseline(task);
    await manager.beforeEdit(task, ["src/a.txt"]);
    write(ws, "src/a.txt", "a by the task\n");
    await manager.saveTurn(task, { editedPaths: ["src/a.txt"] });
    await manager.saveCompletion(task);
    await manager.idle();
    const statuses = git.statuses();
    // An editor's sidecar watches (and scans once) well within this; this one begins nothing.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    await manager.idle();
    expect(git.statuses()).toBe(statuses);
    await manager.stop();
  }, 30_000);
});
