import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { execFileSync } from "node:child_process";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";
import { lastOf } from "../helpers/items.js";

function setup() {
  const sb = makeSandbox();
  const conversation = new FileConversation(path.join(sb.base, "conversations"), {
    t1: [sb.workspace],
    t2: [sb.workspace],
  });
  const manager = makeManager(sb, { conversation });
  const task = { id: "t1", workspaceRoots: [sb.workspace] };
  return { sb, conversation, manager, task, ws: sb.workspace };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    return err instanceof DlineError ? err.code : String(err);
  }
}

describe("restore with recorded edits (only the task's files)", () => {
  it("brings edited files back, deletes files the task created, leaves everything else alone", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/app.ts", "v1");
    write(ws, "README.md", "readme v1");
    const base = (await manager.ensureBaseline(task))!;
    // The task edits one file and creates another; the user edits README and creates notes.txt by hand.
    write(ws, "src/app.ts", "v2");
    write(ws, "src/new-file.ts", "created by the task");
    write(ws, "README.md", "readme edited by hand");
    write(ws, "notes.txt", "created by hand");
    await manager.saveTurn(task, { editedPaths: ["src/app.ts", "src/new-file.ts"] });

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.filesRestored).toBe(true);
    expect(outcome.restoredPaths).toEqual(["src/app.ts"]);
    expect(outcome.deletedPaths).toEqual(["src/new-file.ts"]);
    expect(read(ws, "src/app.ts")).toBe("v1");
    expect(read(ws, "src/new-file.ts")).toBeUndefined();
    expect(read(ws, "README.md")).toBe("readme edited by hand");
    expect(read(ws, "notes.txt")).toBe("created by hand");
  });

  it("a task that also ran commands: what its commands changed comes back too, to the baseline or to a turn before them", async () => {
    const { manager, task, ws } = setup();
    write(ws, "a.txt", "a");
    write(ws, "notes.txt", "my notes");
    write(ws, "keep/me.txt", "kept");
    const base = (await manager.ensureBaseline(task))!;
    // An edit tool writes new.txt; then a command deletes two files the person had and makes one.
    write(ws, "new.txt", "new");
    const edited = (await manager.saveTurn(task, { editedPaths: ["new.txt"] }))!;
    fs.rmSync(path.join(ws, "notes.txt"));
    fs.rmSync(path.join(ws, "a.txt"));
    write(ws, "made-by-command.txt", "made");
    await manager.saveTurn(task, { commandRan: true });
    await manager.saveCompletion(task);

    // Back to the turn before the command: the command's changes are undone, the edit stays.
    const middle = await manager.restore("t1", edited.id, "files");
    expect(middle.fileError).toBe("");
    expect(read(ws, "notes.txt")).toBe("my notes");
    expect(read(ws, "a.txt")).toBe("a");
    expect(fs.existsSync(path.join(ws, "made-by-command.txt"))).toBe(false);
    expect(read(ws, "new.txt")).toBe("new");

    // Back to the baseline: the edit goes too; what nobody touched stays.
    await manager.restore("t1", base.id, "files");
    expect(fs.existsSync(path.join(ws, "new.txt"))).toBe(false);
    expect(read(ws, "notes.txt")).toBe("my notes");
    expect(read(ws, "a.txt")).toBe("a");
    expect(read(ws, "keep/me.txt")).toBe("kept");
  });

  it("is undone by restoring the before-restore checkpoint, and the restored marker clears on the next save", async () => {
    const { manager, task, ws } = setup();
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task))!;
    write(ws, "a.txt", "two");
    write(ws, "b.txt", "made by task");
    await manager.saveTurn(task, { editedPaths: ["a.txt", "b.txt"] });
    const outcome = await manager.restore("t1", base.id, "files");
    let list = await manager.list("t1");
    expect(list.find((c) => c.id === base.id)!.restored).toBe(true);
    const undo = lastOf(list, "checkpoint");
    expect(undo.id).toBe(outcome.undoCheckpointId);
    expect(undo.kind).toBe("before_restore");
    expect(undo.undoAvailable).toBe(true);

    await manager.restore("t1", undo.id, "files");
    expect(read(ws, "a.txt")).toBe("two");
    expect(read(ws, "b.txt")).toBe("made by task");
    // Undone: nothing left to undo (the undo's own "before restore" would put the restore back).
    list = await manager.list("t1");
    expect(list.some((c) => c.undoAvailable)).toBe(false);

    write(ws, "a.txt", "three");
    await manager.saveTurn(task, { editedPaths: ["a.txt"] });
    list = await manager.list("t1");
    expect(list.some((c) => c.restored)).toBe(false);
    expect(list.some((c) => c.undoAvailable)).toBe(false);
  });
});

describe("the undo of a restore (found through ACP)", () => {
  /** A task that wrote a.txt then b.txt (one turn each), from an empty a.txt-less workspace. */
  async function twoTurns() {
    const ctx = setup();
    write(ctx.ws, "keep.txt", "the person's\n");
    const base = (await ctx.manager.ensureBaseline(ctx.task))!;
    write(ctx.ws, "a.txt", "A\n");
    const first = (await ctx.manager.saveTurn(ctx.task, { editedPaths: ["a.txt"] }))!;
    write(ctx.ws, "b.txt", "B\n");
    await ctx.manager.saveTurn(ctx.task, { editedPaths: ["b.txt"] });
    return { ...ctx, base, first };
  }

  it("is offered after a restore to an older undo point chosen from the list, and undoes that restore", async () => {
    const { manager, ws, base, first } = await twoTurns();
    const toBase = await manager.restore("t1", base.id, "files");
    await manager.restore("t1", first.id, "files");
    expect(read(ws, "a.txt")).toBe("A\n");
    expect(fs.existsSync(path.join(ws, "b.txt"))).toBe(false);
    // Not an undo (the undo point of the restore just before it is another): the files go back
    // to what they were before the first restore, and that restore can be undone.
    await manager.restore("t1", toBase.undoCheckpointId, "files");
    expect(read(ws, "b.txt")).toBe("B\n");
    const undo = lastOf(await manager.list("t1"), "checkpoint");
    expect(undo.undoAvailable).toBe(true);
    await manager.restore("t1", undo.id, "files");
    expect(read(ws, "a.txt")).toBe("A\n");
    expect(fs.existsSync(path.join(ws, "b.txt"))).toBe(false);
    // That one was an undo: nothing is offered to undo after it.
    expect((await manager.list("t1")).some((c) => c.undoAvailable)).toBe(false);
  });

  it("is withdrawn once another task saved a checkpoint in the workspace, so it never writes over that task's edits", async () => {
    const { manager, ws, base } = await twoTurns();
    await manager.restore("t1", base.id, "files");
    expect(lastOf(await manager.list("t1"), "checkpoint").undoAvailable).toBe(true);
    const other = { id: "t2", workspaceRoots: [ws] };
    await manager.ensureBaseline(other);
    write(ws, "b.txt", "task 2's\n");
    await manager.saveTurn(other, { editedPaths: ["b.txt"] });
    const undoPoint = lastOf(await manager.list("t1"), "checkpoint");
    expect(undoPoint.kind).toBe("before_restore");
    expect(undoPoint.undoAvailable).toBe(false);
    expect(read(ws, "b.txt")).toBe("task 2's\n");
  });

  it("stays offered when another task saved checkpoints since without changing a file it puts back", async () => {
    const { manager, ws, base } = await twoTurns();
    await manager.restore("t1", base.id, "files");
    const other = { id: "t2", workspaceRoots: [ws] };
    await manager.ensureBaseline(other);
    write(ws, "c.txt", "task 2's own file\n");
    await manager.saveTurn(other, { editedPaths: ["c.txt"] });
    const undo = lastOf(await manager.list("t1"), "checkpoint");
    expect(undo.undoAvailable).toBe(true);
    await manager.restore("t1", undo.id, "files");
    expect(read(ws, "a.txt")).toBe("A\n");
    expect(read(ws, "b.txt")).toBe("B\n");
    expect(read(ws, "c.txt")).toBe("task 2's own file\n");
  });

  it("is still offered when the restore was a reset (a task without recorded edits) and nothing was saved since", async () => {
    const { manager, task, ws } = setup();
    write(ws, "a.txt", "one\n");
    const base = (await manager.ensureBaseline(task))!;
    write(ws, "a.txt", "two\n");
    await manager.saveTurn(task, { commandRan: true });
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "a.txt")).toBe("one\n");
    expect(lastOf(await manager.list("t1"), "checkpoint").undoAvailable).toBe(true);
  });

  it("point restores only files: restoring the conversation to it is refused, and nothing changes", async () => {
    const { manager, ws, base } = await twoTurns();
    const outcome = await manager.restore("t1", base.id, "files");
    const before = await manager.list("t1");
    for (const mode of ["files_and_task", "task"] as const) {
      const refused = await manager.restore("t1", outcome.undoCheckpointId, mode).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(DlineError);
      expect(refused).toMatchObject({ code: "failed_precondition" });
      expect((refused as Error).message).toMatch(/only its files can be restored/);
    }
    // The files stay as the restore left them, and every checkpoint is still offered.
    expect(fs.existsSync(path.join(ws, "a.txt"))).toBe(false);
    expect(await manager.list("t1")).toEqual(before);
  });
});

describe("restore without recorded edits (reset --hard in the shadow repository)", () => {
  it("returns every snapshotted file and removes snapshotted files created later; ignored and LFS files stay", async () => {
    const { manager, task, ws } = setup();
    write(ws, ".gitignore", "secret-output/\n");
    write(ws, ".gitattributes", "*.psd2 filter=lfs diff=lfs merge=lfs -text\n");
    write(ws, "main.c", "int main() { return 0; }\n");
    write(ws, "lib/util.c", "util v1\n");
    const base = (await manager.ensureBaseline(task))!;
    // A command changes files (no recorded paths).
    write(ws, "main.c", "int main() { return 1; }\n");
    fs.rmSync(path.join(ws, "lib/util.c"));
    write(ws, "generated.c", "generated\n");
    write(ws, "secret-output/result.txt", "ignored output");
    write(ws, "art/big.psd2", "lfs content");
    await manager.saveTurn(task, { commandRan: true });

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.restoredPaths.sort()).toEqual(["lib/util.c", "main.c"]);
    expect(outcome.deletedPaths).toEqual(["generated.c"]);
    expect(read(ws, "main.c")).toBe("int main() { return 0; }\n");
    expect(read(ws, "lib/util.c")).toBe("util v1\n");
    expect(read(ws, "generated.c")).toBeUndefined();
    expect(read(ws, "secret-output/result.txt")).toBe("ignored output");
    expect(read(ws, "art/big.psd2")).toBe("lfs content");
  });
});

describe("restore modes and the conversation", () => {
  it("files and task: files back and messages after the checkpoint deleted", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "make it two");
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task, "m1"))!;
    write(ws, "a.txt", "two");
    conversation.addMessage("t1", "m2", "done");
    conversation.addMessage("t1", "m3", "thanks");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" });

    const outcome = await manager.restore("t1", base.id, "files_and_task");
    expect(outcome.filesRestored).toBe(true);
    expect(outcome.conversationRestored).toBe(true);
    expect(read(ws, "a.txt")).toBe("one");
    expect(conversation.messages("t1").map((m) => m.id)).toEqual(["m1"]);
  });

  it("task only: messages deleted, files unchanged", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "hi");
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task, "m1"))!;
    write(ws, "a.txt", "two");
    conversation.addMessage("t1", "m2", "later");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" });
    const outcome = await manager.restore("t1", base.id, "task");
    expect(outcome.filesRestored).toBe(false);
    expect(read(ws, "a.txt")).toBe("two");
    expect(conversation.messages("t1").map((m) => m.id)).toEqual(["m1"]);
  });

  it("files only keeps the conversation", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "hi");
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task, "m1"))!;
    write(ws, "a.txt", "two");
    conversation.addMessage("t1", "m2", "later");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" });
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "a.txt")).toBe("one");
    expect(conversation.messages("t1").map((m) => m.id)).toEqual(["m1", "m2"]);
  });

  it("a compaction checkpoint allows only task-only restores", async () => {
    const { manager, task, ws, conversation } = setup();
    conversation.addMessage("t1", "m1", "hi");
    write(ws, "a.txt", "one");
    await manager.ensureBaseline(task, "m1");
    const compaction = (await manager.saveCompaction(task, { messageId: "m1" }))!;
    expect(compaction.hasFiles).toBe(false);
    conversation.addMessage("t1", "m2", "later");
    expect(await codeOf(manager.restore("t1", compaction.id, "files"))).toBe("failed_precondition");
    expect(await codeOf(manager.restore("t1", compaction.id, "files_and_task"))).toBe("failed_precondition");
    expect(await codeOf(manager.restore("t1", compaction.id, "task"))).toBe("ok");
    expect(conversation.messages("t1").map((m) => m.id)).toEqual(["m1"]);
  });

  it("when the file restore fails during files and task, the conversation is still restored and the error reported", async () => {
    const { manager, task, ws, conversation, sb } = setup();
    conversation.addMessage("t1", "m1", "hi");
    write(ws, "a.txt", "one");
    const base = (await manager.ensureBaseline(task, "m1"))!;
    conversation.addMessage("t1", "m2", "later");
    write(ws, "a.txt", "two");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" });
    // The snapshot's copy of a.txt is lost (a damaged object store): git cannot put it back.
    const oneBlob = execFileSync("git", ["hash-object", "--stdin"], { input: "one" }).toString().trim();
    fs.rmSync(path.join(sb.layout.checkpointRepoDir(ws), ".git", "objects", oneBlob.slice(0, 2), oneBlob.slice(2)));
    const outcome = await manager.restore("t1", base.id, "files_and_task");
    expect(outcome.filesRestored).toBe(false);
    expect(outcome.fileError).toMatch(/Restoring files failed/);
    expect(outcome.conversationRestored).toBe(true);
    expect(conversation.messages("t1").map((m) => m.id)).toEqual(["m1"]);
    expect(read(ws, "a.txt")).toBe("two");
    // The error names the checkpoint; the repository stays where it is (its other checkpoints
    // are whole), and the next save works in it.
    expect(outcome.fileError).toContain(`Checkpoint ${base.id.slice(0, 8)} of task t1 cannot be read`);
    expect(fs.readdirSync(sb.layout.checkpointRepoDir(ws)).some((n) => n.startsWith(".git.corrupt-"))).toBe(false);
    expect(await manager.saveTurn(task, { editedPaths: ["a.txt"] })).toBeDefined();
  });

  it("unknown checkpoints and bad ids are refused with clear codes", async () => {
    const { manager, task, ws } = setup();
    write(ws, "a.txt", "one");
    await manager.ensureBaseline(task);
    expect(await codeOf(manager.restore("t1", "0".repeat(40), "files"))).toBe("not_found");
    expect(await codeOf(manager.restore("t1", "HEAD~1", "files"))).toBe("invalid_argument");
    expect(await codeOf(manager.list("nope"))).toBe("not_found");
  });
});

describe("edit message", () => {
  it("unchanged text restores nothing; Restore Chat rewinds with the edited text; Restore All also restores files", async () => {
    const { manager, task, ws, conversation } = setup();
    write(ws, "a.txt", "one");
    conversation.addMessage("t1", "m1", "first request");
    await manager.ensureBaseline(task, "m1");
    write(ws, "a.txt", "two");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m1" });
    conversation.addMessage("t1", "m2", "second request");
    const secondCp = (await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m2" }))!;
    write(ws, "a.txt", "three");
    await manager.saveTurn(task, { editedPaths: ["a.txt"], messageId: "m3" });
    conversation.addMessage("t1", "m3", "reply");

    expect(await manager.editMessage("t1", "m2", "second request", "restore_chat")).toMatchObject({
      restored: false,
      fileError: "",
    });
    expect(conversation.messages("t1").length).toBe(3);

    expect((await manager.editMessage("t1", "m2", "second request, edited", "restore_all")).restored).toBe(true);
    expect(read(ws, "a.txt")).toBe(secondCp ? "two" : "");
    expect(conversation.messages("t1").map((m) => m.id)).toEqual(["m1"]);

    conversation.addMessage("t1", "m4", "another");
    await manager.editMessage("t1", "m4", "another, edited", "restore_chat");
    expect(conversation.messages("t1").map((m) => m.text)).toEqual(["first request", "another, edited"]);
    expect(read(ws, "a.txt")).toBe("two");
  });
});

describe("edit message while the header shows a checkpoint error", () => {
  it("refuses Restore All but still allows Restore Chat", async () => {
    const { manager, task, ws, conversation } = setup();
    write(ws, "a.txt", "one");
    conversation.addMessage("t1", "m1", "first");
    await manager.ensureBaseline(task, "m1");
    fs.renameSync(ws, ws + "-away");
    expect(await manager.saveTurn(task, { commandRan: true })).toBeUndefined();
    expect((await manager.status({ taskId: "t1" })).state).toBe("failed");
    expect(await codeOf(manager.editMessage("t1", "m1", "first, edited", "restore_all"))).toBe("failed_precondition");
    expect(conversation.messages("t1").map((m) => m.text)).toEqual(["first"]);
    expect((await manager.editMessage("t1", "m1", "first, edited", "restore_chat")).restored).toBe(true);
    expect(conversation.messages("t1").map((m) => m.text)).toEqual(["first, edited"]);
  });
});

describe("compare and view changes", () => {
  it("compares a checkpoint with the current workspace, including binary files and odd names", async () => {
    const { manager, task, ws } = setup();
    write(ws, "dir with space/naïve 文件.txt", "before\n");
    write(ws, "data.dat", Buffer.from([0, 1, 2, 3, 255]));
    write(ws, "gone.txt", "bye");
    const base = (await manager.ensureBaseline(task))!;
    write(ws, "dir with space/naïve 文件.txt", "after\n");
    write(ws, "data.dat", Buffer.from([0, 9, 9, 9]));
    fs.rmSync(path.join(ws, "gone.txt"));
    write(ws, "fresh.txt", "hello");
    const { files } = await manager.compare("t1", base.id);
    const byPath = Object.fromEntries(files.map((f) => [f.path, f]));
    expect(Object.keys(byPath).sort()).toEqual(["data.dat", "dir with space/naïve 文件.txt", "fresh.txt", "gone.txt"]);
    expect(byPath["dir with space/naïve 文件.txt"]).toMatchObject({
      status: "modified",
      before: "before\n",
      after: "after\n",
      binary: false,
    });
    expect(byPath["data.dat"]).toMatchObject({ status: "modified", binary: true, before: "", after: "" });
    expect(byPath["gone.txt"]).toMatchObject({ status: "deleted", before: "bye" });
    expect(byPath["fresh.txt"]).toMatchObject({ status: "added", after: "hello" });

    // A binary file and a unicode path come back through a restore.
    await manager.restore("t1", base.id, "files");
    expect(fs.readFileSync(path.join(ws, "data.dat"))).toEqual(Buffer.from([0, 1, 2, 3, 255]));
    expect(read(ws, "dir with space/naïve 文件.txt")).toBe("before\n");
    expect(read(ws, "gone.txt")).toBe("bye");
  });

  it("shows a file that is not UTF-8 one character per byte, so a changed letter shows on both sides", async () => {
    const { manager, task, ws } = setup();
    write(ws, "legacy.txt", Buffer.from("caf\xe9 cr\xe8me\n", "latin1"));
    write(ws, "mixed.txt", "naïve\n");
    const base = (await manager.ensureBaseline(task))!;
    write(ws, "legacy.txt", Buffer.from("caf\xe8 cr\xe8me\n", "latin1"));
    // Re-encoded by a command: the UTF-8 side stays UTF-8, the other is shown byte by byte.
    write(ws, "mixed.txt", Buffer.from("na\xefve\n", "latin1"));
    const { files } = await manager.compare("t1", base.id);
    const byPath = Object.fromEntries(files.map((f) => [f.path, f]));
    // Before: both sides read "caf\ufffd cr\ufffdme": the change could not be seen.
    expect(byPath["legacy.txt"]).toMatchObject({ before: "café crème\n", after: "cafè crème\n", binary: false });
    expect(byPath["mixed.txt"]).toMatchObject({ before: "naïve\n", after: "naïve\n", binary: false });
  });

  it("view changes shows what changed since the previous completion, or since the task started", async () => {
    const { manager, task, ws } = setup();
    write(ws, "a.txt", "1");
    await manager.ensureBaseline(task);
    write(ws, "a.txt", "2");
    await manager.saveTurn(task, { editedPaths: ["a.txt"] });
    await expect(manager.viewChanges("t1")).rejects.toMatchObject({ code: "failed_precondition" });
    const first = (await manager.saveCompletion(task))!;
    let changes = await manager.viewChanges("t1");
    expect(changes.files.map((f) => [f.path, f.before, f.after])).toEqual([["a.txt", "1", "2"]]);
    write(ws, "b.txt", "new");
    await manager.saveTurn(task, { editedPaths: ["b.txt"] });
    await manager.saveCompletion(task);
    changes = await manager.viewChanges("t1");
    expect(changes.from).toBe(first.id);
    expect(changes.files.map((f) => [f.path, f.status])).toEqual([["b.txt", "added"]]);
  });

  it("view changes of an earlier completion shows that completion's changes, not the latest's", async () => {
    const { manager, task, ws } = setup();
    write(ws, "keep.txt", "kept");
    const base = (await manager.ensureBaseline(task))!;
    write(ws, "a.txt", "one");
    const turn = (await manager.saveTurn(task, { editedPaths: ["a.txt"] }))!;
    const first = (await manager.saveCompletion(task, { messageId: "done-1" }))!;
    // A follow-up message: a.txt changes, b.txt is made, and the task completes again.
    write(ws, "a.txt", "two");
    write(ws, "b.txt", "new");
    await manager.saveTurn(task, { editedPaths: ["a.txt", "b.txt"] });
    const second = (await manager.saveCompletion(task, { messageId: "done-2" }))!;
    const shown = (c: { files: { path: string; status: string; before: string; after: string }[] }) =>
      c.files.map((f) => [f.path, f.status, f.before, f.after]);

    // Before: each of these answered the latest completion's changes.
    for (const which of [
      { checkpointId: first.id },
      { messageId: "done-1" },
      { checkpointId: first.id, messageId: "done-1" },
    ]) {
      const changes = await manager.viewChanges("t1", which);
      expect(shown(changes)).toEqual([["a.txt", "added", "", "one"]]);
      expect([changes.from, changes.to]).toEqual([base.id, first.id]);
    }
    for (const which of [{}, { checkpointId: second.id }, { messageId: "done-2" }]) {
      const changes = await manager.viewChanges("t1", which);
      expect(shown(changes)).toEqual([
        ["a.txt", "modified", "one", "two"],
        ["b.txt", "added", "", "new"],
      ]);
      expect([changes.from, changes.to]).toEqual([first.id, second.id]);
    }

    // Not a completion of the task: said so, never answered with another completion's changes.
    await expect(manager.viewChanges("t1", { checkpointId: turn.id })).rejects.toMatchObject({
      code: "invalid_argument",
      message: expect.stringContaining("not a completion"),
    });
    await expect(manager.viewChanges("t1", { checkpointId: base.id })).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(manager.viewChanges("t1", { checkpointId: "f".repeat(40) })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(manager.viewChanges("t1", { checkpointId: "nope" })).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(manager.viewChanges("t1", { messageId: "no-such-message" })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(manager.viewChanges("t1", { checkpointId: second.id, messageId: "done-1" })).rejects.toMatchObject({
      code: "invalid_argument",
    });
    // Another task's completion is not this task's.
    const other = { id: "t2", workspaceRoots: [ws] };
    await manager.ensureBaseline(other);
    const othersCompletion = (await manager.saveCompletion(other))!;
    await expect(manager.viewChanges("t1", { checkpointId: othersCompletion.id })).rejects.toMatchObject({
      code: "not_found",
    });
  });

  it("a turn with no change reuses the snapshot", async () => {
    const { manager, task, ws } = setup();
    write(ws, "a.txt", "1");
    const base = (await manager.ensureBaseline(task))!;
    const turn = (await manager.saveTurn(task, { commandRan: true }))!;
    expect(turn.reused).toBe(true);
    expect(turn.tree).toBe(base.tree);
  });
});
