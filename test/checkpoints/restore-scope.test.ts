import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointManager, CheckpointTask } from "../../core/src/checkpoints/index.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";

/**
 * "Other files are left alone": a restore of a task that edited files and ran a command takes
 * back the files it edited and what its commands changed, not what the person or another task
 * changed since. The workspace's newest snapshot holds those too; a restore that compared the
 * checkpoint with it reverted the person's edit and deleted their new file once another task
 * had saved after them.
 */
function setup() {
  const sb = makeSandbox();
  const conversation = new FileConversation(path.join(sb.base, "conversations"), {
    t1: [sb.workspace],
    t2: [sb.workspace],
  });
  // Each client process (a CLI run, an editor window) has its own manager over the same repository.
  const process = () => makeManager(sb, { conversation });
  const task = (id: string): CheckpointTask => ({ id, workspaceRoots: [sb.workspace] });
  return { process, t1: task("t1"), t2: task("t2"), ws: sb.workspace };
}

async function toolWrite(manager: CheckpointManager, task: CheckpointTask, ws: string, rel: string, text: string) {
  await manager.beforeEdit?.(task, [rel]);
  write(ws, rel, text);
}

describe("a file restore after a task's command", () => {
  it("leaves what the person and a later task changed after the task: only its edit and its command's change come back", async () => {
    const { process, t1, t2, ws } = setup();
    write(ws, "a.txt", "A\n");
    write(ws, "b.txt", "B\n");
    write(ws, "c.txt", "C\n");
    const first = process();
    const base = (await first.ensureBaseline(t1))!;
    await toolWrite(first, t1, ws, "a.txt", "task 1\n");
    await first.saveTurn(t1, { editedPaths: ["a.txt"] });
    write(ws, "c.txt", "C\ntask 1's command\n");
    await first.saveTurn(t1, { commandRan: true });
    await first.saveCompletion(t1);
    await first.stop();

    // The person works by hand, then a second task edits a.txt in another process.
    write(ws, "b.txt", "B\nthe person's edit\n");
    write(ws, "u.txt", "the person's notes\n");
    const second = process();
    await second.ensureBaseline(t2);
    await toolWrite(second, t2, ws, "a.txt", "task 2\n");
    await second.saveTurn(t2, { editedPaths: ["a.txt"] });
    await second.saveCompletion(t2);
    await second.stop();

    const restoring = process();
    const { restorePaths } = await restoring.compare("t1", base.id);
    expect(restorePaths).toEqual(["a.txt", "c.txt"]);
    const outcome = await restoring.restore("t1", base.id, "files");
    expect(outcome.restoredPaths).toEqual(["a.txt", "c.txt"]);
    expect(outcome.deletedPaths).toEqual([]);
    expect([read(ws, "a.txt"), read(ws, "c.txt")]).toEqual(["A\n", "C\n"]);
    expect(read(ws, "b.txt")).toBe("B\nthe person's edit\n");
    expect(read(ws, "u.txt")).toBe("the person's notes\n");

    // Its undo puts back exactly what the restore changed.
    await restoring.restore("t1", outcome.undoCheckpointId, "files");
    expect([read(ws, "a.txt"), read(ws, "c.txt")]).toEqual(["task 2\n", "C\ntask 1's command\n"]);
    expect(read(ws, "u.txt")).toBe("the person's notes\n");
    await restoring.stop();
  });

  it("a task whose commands alone changed files: only what they changed comes back, not the person's later work", async () => {
    // Found on express: a task that only ran a command was restored by resetting every file,
    // which deleted the person's notes written after it and reverted their edit.
    const { process, t1, ws } = setup();
    write(ws, "Readme.md", "readme\n");
    write(ws, "index.js", "index\n");
    const first = process();
    const base = (await first.ensureBaseline(t1))!;
    write(ws, "Readme.md", "readme\ncmd\n");
    write(ws, "cmdnew.txt", "new\n");
    await first.saveTurn(t1, { commandRan: true });
    await first.saveCompletion(t1);
    await first.stop();

    write(ws, "notes.txt", "the person's notes\n");
    write(ws, "index.js", "index, the person's edit\n");
    const restoring = process();
    const { restorePaths } = await restoring.compare("t1", base.id);
    expect(restorePaths.sort()).toEqual(["Readme.md", "cmdnew.txt"]);
    const outcome = await restoring.restore("t1", base.id, "files");
    expect(outcome.restoredPaths).toEqual(["Readme.md"]);
    expect(outcome.deletedPaths).toEqual(["cmdnew.txt"]);
    expect(read(ws, "notes.txt")).toBe("the person's notes\n");
    expect(read(ws, "index.js")).toBe("index, the person's edit\n");
    await restoring.restore("t1", outcome.undoCheckpointId, "files");
    expect([read(ws, "Readme.md"), read(ws, "cmdnew.txt")]).toEqual(["readme\ncmd\n", "new\n"]);
    await restoring.stop();
  });

  it("leaves what another task saved while the command ran (two windows on one folder)", async () => {
    const { process, t1, t2, ws } = setup();
    write(ws, "a.txt", "A\n");
    write(ws, "c.txt", "C\n");
    write(ws, "x.txt", "X\n");
    const one = process();
    const two = process();
    const base = (await one.ensureBaseline(t1))!;
    await toolWrite(one, t1, ws, "a.txt", "task 1\n");
    await one.saveTurn(t1, { editedPaths: ["a.txt"] });
    // The other window's task saves its edit before task 1's command ends.
    await two.ensureBaseline(t2);
    await toolWrite(two, t2, ws, "x.txt", "task 2\n");
    await two.saveTurn(t2, { editedPaths: ["x.txt"] });
    write(ws, "c.txt", "C\ntask 1's command\n");
    await one.saveTurn(t1, { commandRan: true });

    const outcome = await one.restore("t1", base.id, "files");
    expect(outcome.restoredPaths).toEqual(["a.txt", "c.txt"]);
    expect(read(ws, "x.txt")).toBe("task 2\n");
    expect(fs.readFileSync(path.join(ws, "c.txt"), "utf8")).toBe("C\n");
    await one.stop();
    await two.stop();
  });
});
