/**
 * The restore quick pick after a file restore (Restore Files Only stays listed, marked "(files
 * already restored)", and choosing it says why nothing happens), and a restore's Undo that the
 * core refuses for a while (the error shows, and the notice with its Undo comes back).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import {
  FILES_ALREADY_RESTORED,
  pickRestore,
  restoreOptions,
  UNDO_RESTORE,
  type RestoreMenuItem,
} from "../../adapters/vscode/src/checkpoints/restore-options.js";
import { offerUndo, UndoGone } from "../../adapters/vscode/src/checkpoints/undo-notice.js";

/** A quick pick that picks by label (a row's text includes it), recording every list it showed. */
function scriptedMenu(choices: string[]) {
  const shown: { title: string; rows: string[]; items: RestoreMenuItem[] }[] = [];
  const explained: string[] = [];
  return {
    shown,
    explained,
    ui: {
      pick: (items: RestoreMenuItem[], title: string) => {
        shown.push({
          title,
          rows: items.map((i) => [i.label, i.description, i.detail].filter(Boolean).join(" ")),
          items,
        });
        const want = choices.shift();
        return Promise.resolve(want === undefined ? undefined : items.find((i) => i.label.includes(want)));
      },
      explain: (message: string) => explained.push(message),
    },
  };
}

describe("the restore menu after a file restore", () => {
  const restored = restoreOptions({ hasFiles: true, compaction: false, restored: true });

  it("More options still lists Restore Files Only, marked (files already restored), with the reason", async () => {
    const menu = scriptedMenu(["More options"]);
    expect(await pickRestore(restored, menu.ui)).toBeUndefined();
    const more = menu.shown[1]!;
    expect(more.title).toBe("Restore checkpoint: more options");
    expect(more.rows).toHaveLength(2);
    // Listed after the option that can be chosen, which the quick pick selects first.
    expect(more.items.map((i) => i.mode)).toEqual([RestoreMode.TASK, RestoreMode.FILES]);
    const files = more.items.find((i) => i.label.includes("Restore Files Only"));
    expect(files?.description).toBe(FILES_ALREADY_RESTORED);
    expect(files?.label).toMatch(/^\$\(circle-slash\) /); // greyed by its icon: a quick pick has no disabled rows
    expect(files?.detail).toContain("already restored to this checkpoint");
    expect(
      more.rows.some((r) => r.includes("Restore Task Only") && r.includes("Clear messages after this point")),
    ).toBe(true);
  });

  it("choosing it explains why and restores nothing", async () => {
    const menu = scriptedMenu(["More options", "Restore Files Only"]);
    expect(await pickRestore(restored, menu.ui)).toBeUndefined();
    expect(menu.explained).toHaveLength(1);
    expect(menu.explained[0]).toMatch(/^Dline: Restore Files Only is not available: the files were already restored/);
    expect(menu.explained[0]).toContain("Restore Task Only still works");
  });

  it("Restore Task Only stays available; before a file restore Restore Files Only is an ordinary option", async () => {
    expect(await pickRestore(restored, scriptedMenu(["More options", "Restore Task Only"]).ui)).toBe(RestoreMode.TASK);
    const fresh = restoreOptions({ hasFiles: true, compaction: false, restored: false });
    const menu = scriptedMenu(["More options", "Restore Files Only"]);
    expect(await pickRestore(fresh, menu.ui)).toBe(RestoreMode.FILES);
    expect(menu.explained).toEqual([]);
    expect(menu.shown[1]!.rows).toEqual([
      "Restore Files Only Revert files to this checkpoint",
      "Restore Task Only Clear messages after this point",
    ]);
    expect(await pickRestore(fresh, scriptedMenu(["Restore Files & Task"]).ui)).toBe(RestoreMode.FILES_AND_TASK);
  });
});

/** Notices that answer from a script (the action chosen, or undefined: closed), recording what they showed. */
function scriptedNotices(answers: (string | undefined)[]) {
  const infos: { text: string; actions: string[] }[] = [];
  const errors: string[] = [];
  return {
    infos,
    errors,
    ui: {
      info: (text: string, ...actions: string[]) => {
        infos.push({ text, actions });
        return Promise.resolve(answers.shift());
      },
      error: (text: string) => errors.push(text),
    },
  };
}

const INFO = "Dline: files restored to the checkpoint (1 file).";
const BUSY =
  'Task "Ask me" (t2) is running in this workspace: restoring files now could overwrite its edits. Wait for it to end, or cancel it, then restore.';

describe("Undo on a restore's notice", () => {
  it("refused for a while (another task waits for approval): the error shows and the notice comes back with Undo; Undo later works", async () => {
    const notices = scriptedNotices([UNDO_RESTORE, UNDO_RESTORE]);
    let calls = 0;
    await offerUndo(notices.ui, INFO, () => {
      calls++;
      return calls === 1 ? Promise.reject(new ConnectError(BUSY, Code.FailedPrecondition)) : Promise.resolve();
    });
    expect(calls).toBe(2);
    expect(notices.infos).toEqual([
      { text: INFO, actions: [UNDO_RESTORE] },
      { text: INFO, actions: [UNDO_RESTORE] },
    ]);
    expect(notices.errors).toEqual([
      `Dline: the restore could not be undone: ${BUSY} Undo is still offered on the restore's notice: use it once that is done.`,
    ]);
  });

  it("the notice closed again after a refusal: nothing more is done", async () => {
    const notices = scriptedNotices([UNDO_RESTORE, undefined]);
    let calls = 0;
    await offerUndo(notices.ui, INFO, () => {
      calls++;
      return Promise.reject(new ConnectError("the core is restarting", Code.Unavailable));
    });
    expect(calls).toBe(1);
    expect(notices.infos).toHaveLength(2);
    expect(notices.errors).toHaveLength(1);
  });

  it("a refusal that lasts (the undo is gone) says why, and Undo is not offered again", async () => {
    for (const err of [
      new UndoGone("a checkpoint was saved (or files restored) since."),
      new ConnectError("checkpoint not found", Code.NotFound),
    ]) {
      const notices = scriptedNotices([UNDO_RESTORE, UNDO_RESTORE]);
      await offerUndo(notices.ui, INFO, () => Promise.reject(err));
      expect(notices.infos).toHaveLength(1);
      expect(notices.errors).toHaveLength(1);
      expect(notices.errors[0]).toMatch(/^Dline: the restore could not be undone: /);
      expect(notices.errors[0]).not.toContain("still offered");
    }
  });
});

describe("the restore menu of an undo point (the checkpoint a file restore saved first)", () => {
  // It follows no message: the core refuses Restore Files & Task and Restore Task Only for it
  // (restoring the conversation there cut the task back to an older message, found through ACP).
  it("offers Restore Files Only alone, at once, without More options", async () => {
    const options = restoreOptions({ hasFiles: true, compaction: false, restored: false, undoPoint: true });
    expect(options.map((o) => o.mode)).toEqual([RestoreMode.FILES]);
    const menu = scriptedMenu(["Restore Files Only"]);
    expect(await pickRestore(options, menu.ui)).toBe(RestoreMode.FILES);
    expect(menu.shown).toHaveLength(1);
    expect(menu.shown[0]!.rows.some((r) => r.includes("More options"))).toBe(false);
  });

  it("once its files were restored, shows it not available and says why", async () => {
    const options = restoreOptions({ hasFiles: true, compaction: false, restored: true, undoPoint: true });
    const menu = scriptedMenu(["Restore Files Only"]);
    expect(await pickRestore(options, menu.ui)).toBeUndefined();
    expect(menu.shown[0]!.items.map((i) => i.mode)).toEqual([RestoreMode.FILES]);
    expect(menu.explained[0]).toContain("already restored to this checkpoint");
  });
});
