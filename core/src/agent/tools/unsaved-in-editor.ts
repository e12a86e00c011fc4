/**
 * Files the person is editing: an editor reports the files it has open with unsaved changes,
 * and edit tools leave those alone. Writing one would put the disk and the editor's buffer at
 * odds, and the person's next save would silently undo the edit (or the edit their work).
 */
import * as path from "node:path";
import type { PreparedEdit } from "./prepared-edit.js";
import { ToolError } from "./types.js";

/** The first file of `edit` that the editor reports as modified and unsaved, as its workspace path. */
export function fileBeingEdited(
  edit: PreparedEdit,
  unsaved: readonly string[],
  workspaceRoot: string,
): string | undefined {
  if (unsaved.length === 0) return undefined;
  const busy = new Set(unsaved.filter((p) => p && !p.includes("\0")).map((p) => path.resolve(workspaceRoot, p)));
  return edit.changes.find((change) => busy.has(path.resolve(change.absolutePath)))?.path;
}

/** What the model reads when an edit was refused because the person is editing the file. */
export function beingEditedMessage(relativePath: string): string {
  return (
    `"${relativePath}" has unsaved changes in the user's editor (they are editing it), so the edit was refused and nothing was written. ` +
    "Do not try to write it again now: tell the user what you want to change and ask them to save the file (or to make the change themselves), then read it again."
  );
}

/** Throws a ToolError (the call fails, the model reads why) when the editor has one of the edit's files unsaved. */
export function assertNotBeingEdited(edit: PreparedEdit, unsaved: readonly string[], workspaceRoot: string): void {
  const busy = fileBeingEdited(edit, unsaved, workspaceRoot);
  if (busy !== undefined) throw new ToolError(beingEditedMessage(busy), "failed_precondition");
}
