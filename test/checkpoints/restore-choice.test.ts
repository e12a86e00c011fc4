import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../core/src/logging/logger.js";
import { DlineError } from "../../core/src/errors.js";
import type { CheckpointInfo } from "../../core/src/checkpoints/index.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";

// Which checkpoint a restore goes back to, and what it does to the conversation: restoring to
// the wrong checkpoint puts files back to a state the user never asked for.

function setup(withConversation = true, options: { sizeLimitBytes?: number } = {}) {
  const sb = makeSandbox();
  const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
  const manager = makeManager(sb, withConversation ? { conversation, ...options } : options);
  const task = { id: "t1", workspaceRoots: [sb.workspace] };
  return { sb, conversation, manager, task, ws: sb.workspace };
}

function recordingLogger() {
  const records: any[] = [];
  return { records, logger: createLogger({ write: (l) => records.push(JSON.parse(l)), close: () => {} }, "debug") };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    return err instanceof DlineError ? err.code : String(err);
  }
}

/**
 * Waits until the wall clock is past a checkpoint's stamp, so a message added next is dated
 * after it (checkpoint stamps may run a little ahead of the clock: they never repeat).
 */
function pastStampOf(cp: CheckpointInfo): void {
  while (Date.now() <= cp.createdAt) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
}

describe("Restore All on an edited message", () => {
  it("without a checkpoint of its own goes back to the newest checkpoint made before the message, not a later or the first one", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "start");
    write(ws, "a.txt", "one");
    await manager.ensureBaseline(task, "m1");
    conversation.addMessage("t1", "m2", "make it two");
    write(ws, "a.txt", "two");
    const second = (await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" }))!;
    pastStampOf(second);
    // m3 has no checkpoint of its own (a message whose turn changed nothing, say).
    conversation.addMessage("t1", "m3", "now four");
    conversation.addMessage("t1", "m4", "four it is");
    // Times tell the checkpoint of a later turn from m3's only once a millisecond has passed (a
    // turn always takes longer; this save alone may not, on a fast run).
    pastStampOf({ createdAt: conversation.messages("t1").at(-1)!.createdAt } as CheckpointInfo);
    write(ws, "a.txt", "four");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m4" });

    const result = await manager.editMessage("t1", "m3", "now three", "restore_all");
    expect(result).toMatchObject({ restored: true, fileError: "" });
    expect(read(ws, "a.txt")).toBe("two");
    expect(conversation.messages("t1").map((m) => m.id)).toEqual(["m1", "m2"]);
  });

  it("on a message older than every checkpoint goes back to the first checkpoint", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m0", "before any checkpoint");
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task, "m1"))!;
    pastStampOf(base);
    conversation.addMessage("t1", "m1", "make it two");
    write(ws, "a.txt", "two");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m1" });
    // m0 predates the baseline: only the baseline can stand for it.
    await manager.editMessage("t1", "m0", "before, edited", "restore_all");
    expect(read(ws, "a.txt")).toBe("one");
    expect(conversation.messages("t1")).toEqual([]);
  });

  it("with its own checkpoint goes back to that one, even when older checkpoints are dated before the message", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "start");
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task, "m1"))!;
    pastStampOf(base);
    conversation.addMessage("t1", "m2", "two");
    write(ws, "a.txt", "two");
    const second = (await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" }))!;
    pastStampOf(second);
    conversation.addMessage("t1", "m3", "three");
    write(ws, "a.txt", "three");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m3" });
    // m2 was written before its checkpoint: by date alone the baseline would be chosen.
    await manager.editMessage("t1", "m2", "two, edited", "restore_all");
    expect(read(ws, "a.txt")).toBe("two");
    expect(conversation.messages("t1").map((m) => m.id)).toEqual(["m1"]);
  });

  it("after an earlier restore goes back to the message's checkpoint, not the undo point that restore saved", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "start");
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task, "m1"))!;
    pastStampOf(base);
    conversation.addMessage("t1", "m2", "make it two");
    write(ws, "a.txt", "TWO");
    const second = (await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" }))!;
    pastStampOf(second);
    // The person adds a line, then restores the files to the baseline: the undo point saved
    // before that restore holds their line, under the baseline's message.
    write(ws, "a.txt", "TWO\nmine");
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "a.txt")).toBe("one");
    write(ws, "a.txt", "one\nmine again");
    // As seen in VS Code: the files came back as they were before the first restore.
    const outcome = await manager.editMessage("t1", "m1", "start, edited", "restore_all");
    expect(read(ws, "a.txt")).toBe("one");
    expect(outcome).toMatchObject({ restored: true, fileError: "", restoredPaths: ["a.txt"], deletedPaths: [] });
    // Its undo point (what a client's Undo restores) holds the line typed since.
    await manager.restore("t1", outcome.undoCheckpointId, "files");
    expect(read(ws, "a.txt")).toBe("one\nmine again");
  });

  it("never goes back to a checkpoint without files, even one made for the message itself", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "start");
    write(ws, "a.txt", "one");
    await manager.ensureBaseline(task, "m1");
    conversation.addMessage("t1", "m2", "two");
    write(ws, "a.txt", "two");
    const second = (await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" }))!;
    pastStampOf(second);
    conversation.addMessage("t1", "m3", "three");
    // Times are in milliseconds: the later save must not share m3's.
    pastStampOf({ createdAt: Date.now() } as CheckpointInfo);
    write(ws, "a.txt", "three");
    // The snapshot of "three" is saved after m3 was written (for a later message)...
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m4" });
    // ...and a compaction checkpoint names m3: it holds no files of its own (its tree is the latest snapshot).
    await manager.saveCompaction(task, { messageId: "m3" });
    const result = await manager.editMessage("t1", "m3", "three, edited", "restore_all");
    expect(result).toMatchObject({ restored: true, fileError: "" });
    expect(read(ws, "a.txt")).toBe("two");
  });

  it("whose files cannot be restored still rewinds the conversation, and says why", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "start");
    write(ws, "a.txt", "one");
    await manager.ensureBaseline(task, "m1");
    conversation.addMessage("t1", "m2", "two");
    write(ws, "a.txt", "two");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" });
    // A folder of the user's stands where the checkpoint's file goes.
    fs.rmSync(path.join(ws, "a.txt"));
    write(ws, "a.txt/mine.txt", "the user's\n");
    const result = await manager.editMessage("t1", "m1", "start, edited", "restore_all");
    expect(result).toMatchObject({
      restored: true,
      fileError:
        "Restoring files failed: Cannot restore a.txt: a folder holding a.txt/mine.txt is in its place, and no checkpoint holds all of it (the restore would lose it). No file was restored. Move that folder elsewhere (or delete it) and restore again.",
    });
    expect(read(ws, "a.txt/mine.txt")).toBe("the user's\n");
    expect(conversation.messages("t1")).toEqual([]);
  });

  it("is refused while the checkpoints report an error, naming it; Restore Chat answers without a file error", async () => {
    const { manager, task, ws, conversation } = setup();
    write(ws, "a.txt", "one");
    conversation.addMessage("t1", "m1", "first");
    await manager.ensureBaseline(task, "m1");
    fs.renameSync(ws, `${ws}-away`);
    await manager.saveTurn(task, { commandRan: true });
    const status = await manager.status({ taskId: "t1" });
    const err = (await manager
      .editMessage("t1", "m1", "first, edited", "restore_all")
      .catch((e: unknown) => e)) as DlineError;
    expect(err.code).toBe("failed_precondition");
    expect(err.message).toBe(`Restore All is not available: ${status.message}`);
    expect(await manager.editMessage("t1", "m1", "first, edited", "restore_chat")).toMatchObject({
      restored: true,
      fileError: "",
    });
  });

  it("skips checkpoints without files (a compaction) when choosing where to go back to", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "start");
    write(ws, "a.txt", "one");
    await manager.ensureBaseline(task, "m1");
    conversation.addMessage("t1", "m2", "two");
    write(ws, "a.txt", "two");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" });
    conversation.addMessage("t1", "m3", "three");
    write(ws, "a.txt", "three");
    // The compaction checkpoint names m3 but holds no files.
    const compaction = (await manager.saveCompaction(task, { messageId: "m3" }))!;
    expect(compaction.hasFiles).toBe(false);
    const result = await manager.editMessage("t1", "m3", "three, edited", "restore_all");
    expect(result.fileError).toBe("");
    expect(read(ws, "a.txt")).toBe("two");
  });

  it("an unknown message is not_found and nothing is restored", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "start");
    write(ws, "a.txt", "one");
    await manager.ensureBaseline(task, "m1");
    write(ws, "a.txt", "two");
    const err = (await manager
      .editMessage("t1", `nope${"x".repeat(100)}`, "x", "restore_all")
      .catch((e: unknown) => e)) as DlineError;
    expect(err.code).toBe("not_found");
    expect(err.message).toBe(`Message nope${"x".repeat(76)} does not exist in task t1.`);
    expect(read(ws, "a.txt")).toBe("two");
    expect(conversation.messages("t1").map((m) => m.id)).toEqual(["m1"]);
  });
});

describe("restore modes", () => {
  it("without the task store a files-only restore still works; the conversation modes are refused before any file changes", async () => {
    const { manager, task, ws } = setup(false);
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task))!;
    write(ws, "a.txt", "two");
    await manager.saveTurn(task, { editedPaths: ["a.txt"] });
    const refused = (await manager.restore("t1", base.id, "task").catch((e: unknown) => e)) as DlineError;
    expect(refused.code).toBe("failed_precondition");
    expect(refused.message).toBe(
      "Restoring the conversation needs the task store, which is not available in this version yet.",
    );
    expect(await codeOf(manager.restore("t1", base.id, "files_and_task"))).toBe("failed_precondition");
    expect(read(ws, "a.txt")).toBe("two");
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome).toMatchObject({
      filesRestored: true,
      conversationRestored: false,
      restoredPaths: ["a.txt"],
      fileError: "",
    });
    expect(outcome.undoCheckpointId).toMatch(/^[0-9a-f]{40}/);
    expect(read(ws, "a.txt")).toBe("one");
  });

  it("task only answers what it did: the conversation, no files", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "start");
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task, "m1"))!;
    conversation.addMessage("t1", "m2", "more");
    write(ws, "a.txt", "two");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" });
    expect(await manager.restore("t1", base.id, "task")).toEqual({
      filesRestored: false,
      fileError: "",
      restoredPaths: [],
      deletedPaths: [],
      keptPaths: [],
      keptPathsIncomplete: false,
      undoCheckpointId: "",
      conversationRestored: true,
      runStopped: false,
      repositoryNote: "",
    });
    expect(read(ws, "a.txt")).toBe("two");
  });

  it("a checkpoint without files allows only task only, saying so", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "start");
    write(ws, "a.txt", "one");
    await manager.ensureBaseline(task, "m1");
    const compaction = (await manager.saveCompaction(task, { messageId: "m1" }))!;
    const err = (await manager.restore("t1", compaction.id, "files").catch((e: unknown) => e)) as DlineError;
    expect(err.message).toBe("This checkpoint has no file snapshot; only Restore Task Only is available.");
  });

  it("files and task logs a file restore that failed", async () => {
    const { records, logger } = recordingLogger();
    const sb = makeSandbox();
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
    const manager = makeManager(sb, { conversation, logger });
    const task = { id: "t1", workspaceRoots: [sb.workspace] };
    const ws = sb.workspace;
    conversation.addMessage("t1", "m1", "start");
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task, "m1"))!;
    write(ws, "a.txt", "two");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m1" });
    fs.rmSync(path.join(ws, "a.txt"));
    fs.mkdirSync(path.join(ws, "a.txt"));
    const outcome = await manager.restore("t1", base.id, "files_and_task");
    expect(outcome.fileError).toBe(
      "Restoring files failed: Cannot restore a.txt: an empty folder is in its place (no checkpoint would make it again). No file was restored. Move that folder elsewhere (or delete it) and restore again.",
    );
    expect(records.find((r) => r.msg === "file restore failed")).toMatchObject({ level: "error", task: "t1" });
  });

  it("a files-only restore that fails says so (it is not reported as done)", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "start");
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task, "m1"))!;
    write(ws, "a.txt", "two");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m1" });
    // A folder now stands where the checkpoint's file was.
    fs.rmSync(path.join(ws, "a.txt"));
    fs.mkdirSync(path.join(ws, "a.txt"));
    write(ws, "a.txt/mine.txt", "the user's file");
    expect(await codeOf(manager.restore("t1", base.id, "files"))).toBe("failed_precondition");
    expect(read(ws, "a.txt/mine.txt")).toBe("the user's file");
    expect(conversation.messages("t1").map((m) => m.id)).toEqual(["m1"]);
  });

  it("ids are checked: full 40 or 64 hex digits of this task's checkpoints only", async () => {
    const { manager, task, ws } = setup();
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task))!;
    expect(await codeOf(manager.restore("t1", base.id.toUpperCase(), "files"))).toBe("invalid_argument");
    expect(await codeOf(manager.restore("t1", base.id.slice(0, 39), "files"))).toBe("invalid_argument");
    expect(await codeOf(manager.restore("t1", `${base.id}0`, "files"))).toBe("invalid_argument");
    expect(await codeOf(manager.restore("t1", `x${base.id}`, "files"))).toBe("invalid_argument");
    const long = (await manager
      .restore("t1", `not an id ${"z".repeat(200)}`, "files")
      .catch((e: unknown) => e)) as DlineError;
    expect(long.message).toBe(`"not an id ${"z".repeat(70)}" is not a checkpoint id.`);
    expect(await codeOf(manager.restore("t1", "a".repeat(64), "files"))).toBe("not_found");
    const err = await manager.restore("t1", "b".repeat(40), "files").catch((e: DlineError) => e);
    expect((err as DlineError).message).toBe(`Checkpoint ${"b".repeat(40)} does not belong to task t1.`);
  });
});

describe("what Restore All leaves as it was, and says so (as a files restore does)", () => {
  it("a file too large to have been kept when a tool rewrote it: the dry run and the Restore All name it kept, never written", async () => {
    const { manager, task, ws, conversation } = setup(true, { sizeLimitBytes: 1024 });
    write(ws, "assets/big.txt", Buffer.alloc(5000, 97));
    write(ws, "src/a.txt", "one\n");
    conversation.addMessage("t1", "m1", "shrink the asset");
    pastStampOf((await manager.ensureBaseline(task, "m1"))!);
    conversation.addMessage("t1", "m2", "more");
    await manager.beforeEdit?.(task, ["assets/big.txt", "src/a.txt"]);
    write(ws, "assets/big.txt", "now small\n");
    write(ws, "src/a.txt", "two\n");
    await manager.saveTurn(task, { editedPaths: ["assets/big.txt", "src/a.txt"], messageId: "m2" });

    const dry = await manager.editMessage("t1", "m1", "shrink it, edited", "restore_all", { dryRun: true });
    expect(dry).toMatchObject({ restoredPaths: ["src/a.txt"], deletedPaths: [] });
    expect(dry.keptPaths).toEqual([{ path: "assets/big.txt", reason: "too_large" }]);

    const done = await manager.editMessage("t1", "m1", "shrink it, edited", "restore_all");
    expect(done).toMatchObject({ restored: true, fileError: "", restoredPaths: ["src/a.txt"], deletedPaths: [] });
    expect(done.keptPaths).toEqual([{ path: "assets/big.txt", reason: "too_large" }]);
    expect(read(ws, "assets/big.txt")).toBe("now small\n");
    expect(read(ws, "src/a.txt")).toBe("one\n");
  });

  it("a file the task grew past what a pre-image keeps: the dry run and the Restore All name it kept, never written over", async () => {
    const { manager, task, ws, conversation } = setup(true, { sizeLimitBytes: 1024 });
    write(ws, "src/table.js", "small\n");
    write(ws, "src/a.txt", "one\n");
    conversation.addMessage("t1", "m1", "grow the table");
    pastStampOf((await manager.ensureBaseline(task, "m1"))!);
    conversation.addMessage("t1", "m2", "more");
    await manager.beforeEdit?.(task, ["src/table.js", "src/a.txt"]);
    // Past 4 KiB: neither the undo checkpoint nor a pre-image could keep what the restore would overwrite.
    const grown = "row\n".repeat(2000);
    write(ws, "src/table.js", grown);
    write(ws, "src/a.txt", "two\n");
    await manager.saveTurn(task, { editedPaths: ["src/table.js", "src/a.txt"], messageId: "m2" });

    const dry = await manager.editMessage("t1", "m1", "grow it, edited", "restore_all", { dryRun: true });
    expect(dry).toMatchObject({ restoredPaths: ["src/a.txt"], deletedPaths: [] });
    expect(dry.keptPaths).toEqual([{ path: "src/table.js", reason: "too_large" }]);

    const done = await manager.editMessage("t1", "m1", "grow it, edited", "restore_all");
    expect(done).toMatchObject({ restoredPaths: ["src/a.txt"], deletedPaths: [] });
    expect(done.keptPaths).toEqual([{ path: "src/table.js", reason: "too_large" }]);
    expect(read(ws, "src/table.js")).toBe(grown);
    expect(read(ws, "src/a.txt")).toBe("one\n");
  });

  it("an ignored .env and an excluded build/ file a command changed: named kept, not tracked, by the dry run and the Restore All, their bytes left", async () => {
    const { manager, task, ws, conversation } = setup();
    write(ws, ".gitignore", ".env\n");
    write(ws, ".env", "SECRET=original\n");
    write(ws, "build/out.txt", "old build\n");
    write(ws, "src/app.js", "app\n");
    conversation.addMessage("t1", "m1", "build it");
    pastStampOf((await manager.ensureBaseline(task, "m1"))!);
    conversation.addMessage("t1", "m2", "again");
    // The command's writes: the checkpoints are not told of them beforehand.
    write(ws, ".env", "SECRET=from-command\n");
    write(ws, "build/out.txt", "new build\n");
    write(ws, "src/app.js", "app, built\n");
    await manager.saveTurn(task, { commandRan: true, messageId: "m2" });

    const kept = [
      { path: ".env", reason: "not_tracked" },
      { path: "build/out.txt", reason: "not_tracked" },
    ];
    const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1);
    const dry = await manager.editMessage("t1", "m1", "build it, edited", "restore_all", { dryRun: true });
    expect(dry).toMatchObject({ restoredPaths: ["src/app.js"], deletedPaths: [], keptPathsIncomplete: false });
    expect([...dry.keptPaths].sort(byPath)).toEqual(kept);

    const done = await manager.editMessage("t1", "m1", "build it, edited", "restore_all");
    expect(done).toMatchObject({ restoredPaths: ["src/app.js"], deletedPaths: [], keptPathsIncomplete: false });
    expect([...done.keptPaths].sort(byPath)).toEqual(kept);
    expect(read(ws, ".env")).toBe("SECRET=from-command\n");
    expect(read(ws, "build/out.txt")).toBe("new build\n");
    expect(read(ws, "src/app.js")).toBe("app\n");
  });
});
