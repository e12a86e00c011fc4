/**
 * Undo of a file restore and what the person changed since: the files it would overwrite are
 * found from what the restore left (read from a real folder), the question names them, and
 * declining it brings the restore's notice back with its Undo, with nothing written.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RestoredFiles } from "../../adapters/vscode/src/checkpoints/restored-files.js";
import { UNDO_RESTORE } from "../../adapters/vscode/src/checkpoints/restore-options.js";
import { offerUndo, UndoDeclined, undoOverwriteQuestion } from "../../adapters/vscode/src/checkpoints/undo-notice.js";

const folders: string[] = [];
afterEach(() => {
  for (const f of folders.splice(0)) fs.rmSync(f, { recursive: true, force: true });
});

/** A workspace folder holding these files. */
function workspace(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "dline-undo-overwrite-"));
  folders.push(root);
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

const nothingUnsaved = () => false;

describe("the files an Undo would overwrite that changed since the restore", () => {
  it("none when the files are as the restore left them (written, and deleted)", async () => {
    const root = workspace({ "a.txt": "restored a\n", "src/b.txt": "restored b\n" });
    const left = await RestoredFiles.read(root, ["a.txt", "src/b.txt"], ["gone.txt"]);
    expect(await left.changedSince(["a.txt", "src/b.txt", "gone.txt"], nothingUnsaved)).toEqual([]);
  });

  it("a file edited, one deleted, one created again since: each is named", async () => {
    const root = workspace({ "a.txt": "restored a\n", "b.txt": "restored b\n", "c.txt": "restored c\n" });
    const left = await RestoredFiles.read(root, ["a.txt", "b.txt", "c.txt"], ["gone.txt"]);
    fs.appendFileSync(path.join(root, "a.txt"), "my words\n");
    fs.rmSync(path.join(root, "b.txt"));
    fs.writeFileSync(path.join(root, "gone.txt"), "made again\n");
    expect(await left.changedSince(["a.txt", "b.txt", "c.txt", "gone.txt"], nothingUnsaved)).toEqual([
      "a.txt",
      "b.txt",
      "gone.txt",
    ]);
  });

  it("a file open with unsaved changes counts as changed, though the disk is as the restore left it", async () => {
    const root = workspace({ "a.txt": "restored a\n", "b.txt": "restored b\n" });
    const left = await RestoredFiles.read(root, ["a.txt", "b.txt"], []);
    expect(await left.changedSince(["a.txt", "b.txt"], (rel) => rel === "b.txt")).toEqual(["b.txt"]);
  });

  it("a file Undo would write that the restore did not (made since) is named; one Undo leaves alone is not", async () => {
    const root = workspace({ "a.txt": "restored a\n" });
    const left = await RestoredFiles.read(root, ["a.txt"], []);
    fs.writeFileSync(path.join(root, "new.txt"), "mine\n");
    fs.appendFileSync(path.join(root, "a.txt"), "mine too\n");
    // Undo writes only new.txt (a.txt is out of its reach, by the restore rules): a.txt is not asked about.
    expect(await left.changedSince(["new.txt"], nothingUnsaved)).toEqual(["new.txt"]);
  });

  it("without the list of Undo's writes (Compare failed), the files the restore wrote are checked", async () => {
    const root = workspace({ "a.txt": "restored a\n", "b.txt": "restored b\n" });
    const left = await RestoredFiles.read(root, ["a.txt", "b.txt"], []);
    fs.writeFileSync(path.join(root, "b.txt"), "mine\n");
    expect(await left.changedSince(undefined, nothingUnsaved)).toEqual(["b.txt"]);
  });
});

describe("the question before such an Undo", () => {
  it("names the files (five, then how many more) and says what Undo does to them and what Keep does", () => {
    const one = undoOverwriteQuestion(["notes.md"]);
    expect(one.message).toBe("You changed a file since the restore. Undo it anyway?");
    expect(one.detail).toContain("Changed since the restore: notes.md.");
    expect(one.detail).toContain("back as it was before the restore, over your changes");
    expect(one.detail).toContain("Keep My Changes leaves every file as it is");
    const many = undoOverwriteQuestion(["1", "2", "3", "4", "5", "6", "7"]);
    expect(many.message).toBe("You changed 7 files since the restore. Undo it anyway?");
    expect(many.detail).toContain("Changed since the restore: 1, 2, 3, 4, 5 and 2 more.");
  });

  it("shows control characters in a file name as escapes", () => {
    expect(undoOverwriteQuestion(["evil\u001b[2K.txt"]).detail).toContain("evil\\e[2K.txt");
  });
});

describe("declining that question on a restore's notice", () => {
  it("brings the notice back with Undo, with no error; Undo chosen again then works", async () => {
    const infos: string[][] = [];
    const errors: string[] = [];
    const answers = [UNDO_RESTORE, UNDO_RESTORE];
    let calls = 0;
    await offerUndo(
      {
        info: (_text, ...actions) => {
          infos.push(actions);
          return Promise.resolve(answers.shift());
        },
        error: (text) => errors.push(text),
      },
      "Dline: files restored to the checkpoint (1 file).",
      () => (++calls === 1 ? Promise.reject(new UndoDeclined()) : Promise.resolve()),
    );
    expect(calls).toBe(2);
    expect(infos).toEqual([[UNDO_RESTORE], [UNDO_RESTORE]]);
    expect(errors).toEqual([]);
  });
});
