/**
 * The questions VS Code asks before a restore (hunt59, found in code-server):
 * - a restore of a running task said a file its running command wrote "will stay as it is", then
 *   deleted it: the core's restorePaths now name it (test/tasks/restore-running-task.test.ts),
 *   and the question says that what the command changes until it is stopped is undone too;
 * - Restore All overwrote the person's own edits with no question: it asks as the checkpoint
 *   menu's Restore does, from the core's dry run;
 * - Restore Files & Task read like Files Only (nothing of the messages it deletes, an Undo that
 *   seemed to bring everything back); Restore Task Only deleted the messages without asking.
 */
import { describe, expect, it } from "vitest";
import { KeptReason, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { leftAloneByRestore } from "../../adapters/vscode/src/checkpoints/restore-options.js";
import { restoreAllQuestion, restoreQuestion } from "../../adapters/vscode/src/checkpoints/restore-questions.js";

const files = (paths: string[]) => paths.map((path) => ({ path, notTracked: false, tooLarge: false }));

describe("the question before a restore of a running task", () => {
  it("puts back what the running command wrote, and says what it writes until stopped is undone too", () => {
    // Compare's answer while `echo tick >> notes/ticks.txt` runs: ticks.txt is among restorePaths now.
    const restorePaths = ["notes/a.txt", "notes/b.txt", "notes/ticks.txt"];
    const plan = { restorePaths, leftAlone: leftAloneByRestore(files(restorePaths), restorePaths) };
    const q = restoreQuestion(RestoreMode.FILES, plan, [], "command");
    expect(q.message).toBe("Restore the files to this checkpoint?");
    expect(q.detail).toMatch(
      /^The task is running: it is stopped first, with its command, and what the command changes until then is undone too\. Resume goes on afterwards\. /,
    );
    expect(q.detail).toContain("3 files changed since this checkpoint (notes/a.txt, notes/b.txt, notes/ticks.txt)");
    expect(q.detail).not.toContain("not changed by this task");
    expect(q.detail).not.toContain("will stay as");
  });

  it("does not speak of a command when none runs (waiting for an approval)", () => {
    const q = restoreQuestion(RestoreMode.FILES, { restorePaths: ["a.txt"], leftAlone: [] }, [], "task");
    expect(q.detail).toMatch(/^The task is running: it is stopped first; Resume goes on afterwards\. /);
    expect(q.detail).not.toContain("command");
  });

  it("says nothing of a run when the task does not run", () => {
    const q = restoreQuestion(RestoreMode.FILES, { restorePaths: ["a.txt"], leftAlone: [] }, [], false);
    expect(q.detail).not.toContain("running");
  });
});

describe("the questions of Files & Task and Task Only", () => {
  const plan = {
    restorePaths: ["index.js"],
    leftAlone: [{ path: "Readme.md", reason: "not changed by this task" as const }],
  };

  it("Files & Task says the later messages are deleted, and that Undo brings back the files only", () => {
    const both = restoreQuestion(RestoreMode.FILES_AND_TASK, plan, [], false);
    const filesOnly = restoreQuestion(RestoreMode.FILES, plan, [], false);
    expect(both.message).toBe("Restore the files and delete the messages after this checkpoint?");
    expect(both.message).not.toBe(filesOnly.message);
    expect(both.button).toBe("Restore Files & Task");
    expect(both.detail).toMatch(
      /^The messages after this checkpoint are deleted: the conversation goes back to this point\. 1 file changed since this checkpoint \(index\.js\) will be put back/,
    );
    expect(both.detail).toContain("Readme.md (not changed by this task)");
    expect(both.detail).toContain(
      "Undo on the notice afterwards puts the files back as they are now, but not the deleted messages.",
    );
    // Files Only keeps its own words: its Undo brings back everything it changed.
    expect(filesOnly.detail).not.toContain("messages");
    expect(filesOnly.detail).toContain("Undo on the notice afterwards puts it back as it is now.");
  });

  it("Files & Task with nothing to put back still says the messages go", () => {
    const q = restoreQuestion(RestoreMode.FILES_AND_TASK, { restorePaths: [], leftAlone: [] }, [], "command");
    expect(q.detail).toContain("The messages after this checkpoint are deleted");
    expect(q.detail).toContain("nothing will be overwritten");
  });

  it("Task Only asks first: the messages go, files stay, and nothing brings them back", () => {
    const q = restoreQuestion(RestoreMode.TASK, undefined, [], false);
    expect(q).toEqual({
      message: "Delete the messages after this checkpoint?",
      detail:
        "The messages after this checkpoint are deleted: the conversation goes back to this point. Files stay as they are. This cannot be undone.",
      button: "Restore Task Only",
    });
    // Running: it is stopped first; its command's changes are not undone (files stay).
    const running = restoreQuestion(RestoreMode.TASK, undefined, [], "command");
    expect(running.detail).toMatch(
      /^The task is running: it is stopped first, with its command\. Resume goes on afterwards\. /,
    );
    expect(running.detail).not.toContain("undone too");
  });
});

describe("the question before Restore All", () => {
  // hunt59: notes/a.txt held "two\nmy line" ("my line" the person's own saved edit); Restore All
  // wrote "one" over it and deleted notes/b.txt and notes/ticks.txt, with no question.
  const dry = {
    restoredPaths: ["notes/a.txt"],
    deletedPaths: ["notes/b.txt", "notes/ticks.txt"],
    keptPaths: [],
  };

  it("names what it overwrites and deletes, the person's own changes too, what stays, and what Undo brings back", () => {
    const q = restoreAllQuestion(dry, [], [], false);
    expect(q.message).toBe("Restore the files and the conversation to before this message?");
    expect(q.button).toBe("Restore All");
    expect(q.detail).toBe(
      "This message and the ones after it are deleted; your edited text stays in the message box. " +
        "It puts the files back as they were before this message: it overwrites or brings back 1 file (notes/a.txt) " +
        "and deletes 2 files created since (notes/b.txt, notes/ticks.txt), including changes you made to them yourself. " +
        "Other files stay as they are. " +
        "Undo on the notice afterwards puts the files back as they are now, but not the deleted messages.",
    );
  });

  it("names the changed files it leaves as they are, those Compare finds and those the dry run keeps", () => {
    const q = restoreAllQuestion(
      { ...dry, keptPaths: [{ path: ".env", reason: KeptReason.NOT_TRACKED }] },
      [{ path: "Readme.md", reason: "not changed by this task" }],
      ["notes/a.txt"],
      "command",
    );
    expect(q.detail).toMatch(
      /^The task is running: it is stopped first, with its command, and what the command changes until then is undone too\./,
    );
    expect(q.detail).toContain(
      "2 changed files will stay as they are, not restored: .env (not tracked by checkpoints); Readme.md (not changed by this task).",
    );
    expect(q.detail).toMatch(/Unsaved changes in notes\/a\.txt are saved first, so that Undo brings them back too\.$/);
  });

  it("shortens long lists", () => {
    const many = Array.from({ length: 8 }, (_, i) => `f${i}.txt`);
    const q = restoreAllQuestion({ restoredPaths: many, deletedPaths: [], keptPaths: [] }, [], [], false, 3);
    expect(q.detail).toContain("overwrites or brings back 8 files (f0.txt, f1.txt, f2.txt and 5 more)");
  });
});
