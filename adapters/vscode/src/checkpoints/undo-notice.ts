import { Code, ConnectError } from "@connectrpc/connect";
import { errorNotice } from "../chat/error-banner.js";
import { visibleLine } from "../text/visible-text.js";
import { UNDO_RESTORE } from "./restore-options.js";

/** The editor's notices (VS Code's information and error messages, or a test's). */
export interface UndoNoticeUi {
  /** A notice with actions: resolves to the action chosen, undefined when it was closed. */
  info(text: string, ...actions: string[]): PromiseLike<string | undefined>;
  error(text: string): void;
}

/** The restore can no longer be undone (a checkpoint was saved, or files restored, since). */
export class UndoGone extends Error {}

/** The person chose to keep what they changed since the restore: nothing was undone. */
export class UndoDeclined extends Error {}

/** The action of the question before an Undo that would overwrite what the person changed since the restore. */
export const UNDO_ANYWAY = "Undo Anyway";

/** The safe answer to that question, its default (first) button: nothing is undone, every file stays as it is. */
export const KEEP_MY_CHANGES = "Keep My Changes";

/**
 * The question before an Undo that would overwrite files the person changed since the restore
 * (workspace-relative paths): which files, and what Undo would do to them.
 */
export function undoOverwriteQuestion(changed: readonly string[], shown = 5): { message: string; detail: string } {
  const n = changed.length;
  const more = n > shown ? ` and ${n - shown} more` : "";
  const names = `${changed.slice(0, shown).map(visibleLine).join(", ")}${more}`;
  return {
    message: `You changed ${n === 1 ? "a file" : `${n} files`} since the restore. Undo it anyway?`,
    detail:
      `Changed since the restore: ${names}. Undo puts ${n === 1 ? "it" : "them"} back as ${n === 1 ? "it was" : "they were"} before the restore, over your changes. ` +
      `${KEEP_MY_CHANGES} leaves every file as it is; Undo stays offered on the restore's notice.`,
  };
}

/** A refusal that lasts: offering Undo again would only be refused again. */
function lasting(err: unknown): boolean {
  return err instanceof UndoGone || (err instanceof ConnectError && err.code === Code.NotFound);
}

/**
 * A file restore's notice with Undo. Undo that fails for a while (the core refuses it while
 * another task of the workspace runs or waits for approval, or while it restarts) says why and
 * brings the notice back with its Undo, so the person can undo once that is over; a refusal that
 * lasts says why, and the notice does not come back. Undo the person declined (it would have
 * overwritten their changes since the restore) brings the notice back, saying nothing more.
 */
export async function offerUndo(ui: UndoNoticeUi, info: string, undo: () => Promise<void>): Promise<void> {
  for (;;) {
    const choice = await ui.info(info, UNDO_RESTORE);
    if (choice !== UNDO_RESTORE) return;
    try {
      await undo();
      return;
    } catch (err) {
      if (err instanceof UndoDeclined) continue;
      const gone = lasting(err);
      const reason = errorNotice(err).replace(/^Dline: /, "");
      ui.error(
        visibleLine(
          `Dline: the restore could not be undone: ${reason}` +
            (gone ? "" : " Undo is still offered on the restore's notice: use it once that is done."),
        ),
      );
      if (gone) return;
    }
  }
}
