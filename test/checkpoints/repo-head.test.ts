import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readRepositoryHead, repositoryMovedNote } from "../../core/src/checkpoints/repo-head.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";

/**
 * A restore puts files back, never the person's git history: a task's `git reset --hard HEAD~1`
 * or a branch the person switched to stays. Found in a bug hunt: nothing said so, and the person
 * took the restore for a full undo. Each checkpoint now records where the workspace repository's
 * HEAD stood (read from its files, running none of its config or hooks), and a restore says when
 * it moved since.
 */
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" }).trim();

function repository(ws: string): void {
  git(ws, "init", "-q", "-b", "main");
  write(ws, "a.txt", "one\n");
  git(ws, "add", "a.txt");
  git(ws, "commit", "-qm", "one");
  write(ws, "a.txt", "two\n");
  git(ws, "commit", "-qam", "two");
}

describe("the person's repository HEAD", () => {
  it("is read from its files: a branch (loose or packed), a detached HEAD, a worktree's .git file", () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    expect(readRepositoryHead(ws)).toBeUndefined();
    repository(ws);
    const two = git(ws, "rev-parse", "HEAD");
    expect(readRepositoryHead(ws)).toEqual({ ref: "refs/heads/main", id: two });
    git(ws, "pack-refs", "--all");
    expect(fs.existsSync(path.join(ws, ".git/refs/heads/main"))).toBe(false);
    expect(readRepositoryHead(ws)).toEqual({ ref: "refs/heads/main", id: two });
    git(ws, "checkout", "-q", "--detach", "HEAD~1");
    expect(readRepositoryHead(ws)).toEqual({ ref: "", id: git(ws, "rev-parse", "HEAD") });
    git(ws, "checkout", "-q", "main");
    const wt = path.join(sb.base, "wt");
    git(ws, "worktree", "add", "-q", "-b", "side", wt);
    expect(readRepositoryHead(wt)).toEqual({ ref: "refs/heads/side", id: two });
  });

  it("a restore after the task reset the branch says the repository moved, and what a restore does not undo", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    repository(ws);
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [ws] });
    const manager = makeManager(sb, { conversation });
    const task = { id: "t1", workspaceRoots: [ws] };
    const before = git(ws, "rev-parse", "HEAD");
    const base = (await manager.ensureBaseline(task))!;
    // The task's command: `git reset --hard HEAD~1` and a new file.
    git(ws, "reset", "-q", "--hard", "HEAD~1");
    write(ws, "made.txt", "made\n");
    await manager.saveTurn(task, { commandRan: true });
    const after = git(ws, "rev-parse", "HEAD");

    const outcome = await manager.restore("t1", base.id, "files");
    expect(read(ws, "a.txt")).toBe("two\n");
    expect(outcome.repositoryNote).toBe(
      `Your git repository moved since this checkpoint (main at ${before.slice(0, 8)} then, main at ${after.slice(0, 8)} now): a restore puts files back, never commits, branches or the index.`,
    );
    // Its undo: the repository is where the undo point saw it, so nothing to say.
    const undone = await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(undone.repositoryNote).toBe("");
    await manager.stop();
  });

  it("says nothing when it did not move, or when nothing was recorded", () => {
    const head = { ref: "refs/heads/main", id: "a".repeat(40) };
    expect(repositoryMovedNote(head, { ...head })).toBe("");
    expect(repositoryMovedNote(undefined, head)).toBe("");
    expect(repositoryMovedNote(head, { ref: "refs/heads/4.x", id: "b".repeat(40) })).toContain(
      "(main at aaaaaaaa then, 4.x at bbbbbbbb now)",
    );
  });
});
