import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointManager, CheckpointTask } from "../../core/src/checkpoints/index.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";

// Undoing a restore must bring back every file the restore wrote over or deleted, including
// those its undo checkpoint cannot hold (over the snapshot's size limit, 1 KiB here; pre-images
// are kept up to 4 KiB). Found with a 5.9 MB source file edited twice by a task: a restore to
// the first turn put back the first edit, and its undo then said "kept as is: not tracked by
// checkpoints", the second edit lost for good.

const LIMIT = 1024;

function setup() {
  const sb = makeSandbox();
  const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
  const manager = makeManager(sb, { conversation, sizeLimitBytes: LIMIT });
  const task: CheckpointTask = { id: "t1", workspaceRoots: [sb.workspace] };
  return { manager, task, ws: sb.workspace };
}

/** Over the snapshot's limit, within the pre-images'. */
function big(label: string): string {
  return `${label}\n${"x".repeat(2000)}\n`;
}

async function toolWrite(manager: CheckpointManager, task: CheckpointTask, rel: string, content: string) {
  await manager.beforeEdit?.(task, [rel]);
  write(task.workspaceRoots[0]!, rel, content);
}

describe("undoing a restore of recorded edits", () => {
  it("brings back a file over the size limit that the restore wrote over", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/big.js", big("original"));
    write(ws, "a.txt", "a v1\n");
    const base = (await manager.ensureBaseline(task))!;
    expect(base.skipped).toContainEqual(expect.objectContaining({ path: "src/big.js" }));
    await toolWrite(manager, task, "src/big.js", big("TURN1"));
    const turn1 = await manager.saveTurn(task, { editedPaths: ["src/big.js"] });
    await toolWrite(manager, task, "src/big.js", big("TURN2"));
    await toolWrite(manager, task, "a.txt", "a v2\n");
    await manager.saveTurn(task, { editedPaths: ["src/big.js", "a.txt"] });

    const outcome = await manager.restore("t1", turn1!.id, "files");
    expect(read(ws, "src/big.js")).toBe(big("TURN1"));
    expect(outcome.restoredPaths).toEqual(["a.txt", "src/big.js"]);
    expect(outcome.keptPaths).toEqual([]);

    const undo = await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(read(ws, "src/big.js")).toBe(big("TURN2"));
    expect(read(ws, "a.txt")).toBe("a v2\n");
    expect(undo.restoredPaths).toEqual(["a.txt", "src/big.js"]);
    expect(undo.keptPaths).toEqual([]);

    // Compare against the start: the file over the limit is modified (no text: too large)...
    const changed = await manager.compare("t1", base.id);
    expect(changed.files.map((f) => [f.path, f.status, f.tooLarge])).toEqual([
      ["a.txt", "modified", false],
      ["src/big.js", "modified", true],
    ]);
    // And the restore to the start puts the original back, as before.
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "src/big.js")).toBe(big("original"));
    // ...and once it holds its earlier bytes again, it is not listed (it was, "modified"),
    expect((await manager.compare("t1", base.id)).files).toEqual([]);
    // nor named "kept as is: not tracked by checkpoints" by a restore that finds it so.
    const again = await manager.restore("t1", base.id, "files");
    expect(again).toMatchObject({ restoredPaths: [], deletedPaths: [], keptPaths: [] });
  });

  it("deletes a file the task created over the size limit, and its undo brings it back", async () => {
    const { manager, task, ws } = setup();
    write(ws, "a.txt", "a v1\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "out/report.js", big("made by the task"));
    await toolWrite(manager, task, "a.txt", "a v2\n");
    await manager.saveTurn(task, { editedPaths: ["out/report.js", "a.txt"] });

    // Before: the file stayed, named nowhere (the undo checkpoint could not hold it).
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual(["out/report.js"]);
    expect(read(ws, "out/report.js")).toBeUndefined();

    await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(read(ws, "out/report.js")).toBe(big("made by the task"));
    expect(read(ws, "a.txt")).toBe("a v2\n");
  });

  it("brings back a file inside a nested repository (which no snapshot holds) that the restore wrote over", async () => {
    const { manager, task, ws } = setup();
    write(ws, "nested/a.txt", "nested original\n");
    execFileSync("git", ["init", "-q"], { cwd: path.join(ws, "nested") });
    write(ws, "a.txt", "a v1\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "nested/a.txt", "nested CHANGED\n");
    await manager.saveTurn(task, { editedPaths: ["nested/a.txt"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(read(ws, "nested/a.txt")).toBe("nested original\n");
    // Before: "kept as is: not tracked by checkpoints", the task's version gone for good.
    const undo = await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(read(ws, "nested/a.txt")).toBe("nested CHANGED\n");
    expect(undo.keptPaths).toEqual([]);
  });

  it("leaves a file too large even for a pre-image as it is, and says so", async () => {
    const { manager, task, ws } = setup();
    write(ws, "small.txt", "small v1\n");
    const base = (await manager.ensureBaseline(task))!;
    // The task grows a file it had saved small past what any pre-image keeps (4 KiB).
    const huge = `grown\n${"y".repeat(8000)}\n`;
    await toolWrite(manager, task, "small.txt", huge);
    await manager.saveTurn(task, { editedPaths: ["small.txt"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.keptPaths).toEqual([{ path: "small.txt", reason: "too_large" }]);
    expect(outcome.restoredPaths).toEqual([]);
    expect(read(ws, "small.txt")).toBe(huge);
  });
});

describe("undoing a restore without recorded edits (reset)", () => {
  it("brings back a file a command grew over the size limit", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/table.js", "id,value\n1,a\n");
    write(ws, "a.txt", "a v1\n");
    const base = (await manager.ensureBaseline(task))!;
    // A command appends to both: the snapshots after it leave src/table.js out (too large).
    write(ws, "src/table.js", big("id,value"));
    write(ws, "a.txt", "a v2\n");
    await manager.saveTurn(task, { commandRan: true });

    const outcome = await manager.restore("t1", base.id, "files");
    expect(read(ws, "src/table.js")).toBe("id,value\n1,a\n");
    expect(outcome.restoredPaths).toEqual(["a.txt", "src/table.js"]);

    // Before: "kept as is: not tracked by checkpoints", the grown file gone for good.
    const undo = await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(read(ws, "src/table.js")).toBe(big("id,value"));
    expect(read(ws, "a.txt")).toBe("a v2\n");
    expect(undo.keptPaths).toEqual([]);
  });

  it("leaves a file a command grew past any pre-image as it is, and says so", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/table.js", "id,value\n1,a\n");
    const base = (await manager.ensureBaseline(task))!;
    const huge = `grown\n${"y".repeat(8000)}\n`;
    write(ws, "src/table.js", huge);
    await manager.saveTurn(task, { commandRan: true });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.keptPaths).toEqual([{ path: "src/table.js", reason: "too_large" }]);
    expect(read(ws, "src/table.js")).toBe(huge);
  });
});
