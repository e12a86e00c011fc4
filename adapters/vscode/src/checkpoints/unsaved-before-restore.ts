import * as path from "node:path";
import * as vscode from "vscode";
import { visibleLine } from "../text/visible-text.js";

/**
 * The open documents with unsaved changes among the files a file restore is about to write
 * (workspace-relative paths with "/"; undefined when they could not be read: every unsaved file
 * of the workspace). A restore writes the files on disk: an editor with unsaved changes would go
 * on showing its own text, as if the restore had not reached that file, its next Save would write
 * that text over the restored file, and Undo could not bring those changes back (they were never
 * on disk). So they are saved just before the restore: the editors then show the restored files,
 * and Undo puts back what the person had typed.
 */
export function unsavedDocuments(workspaceRoot: string, paths: readonly string[] | undefined): vscode.TextDocument[] {
  const wanted = paths && new Set(paths);
  return vscode.workspace.textDocuments.filter((d) => {
    const rel = workspaceRelative(workspaceRoot, d.uri);
    return d.isDirty && rel !== undefined && (!wanted || wanted.has(rel));
  });
}

export function workspaceRelative(workspaceRoot: string, uri: vscode.Uri): string | undefined {
  if (uri.scheme !== "file" || !workspaceRoot) return undefined;
  const rel = path.relative(workspaceRoot, uri.fsPath);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel.split(path.sep).join("/") : undefined;
}

/** Saves them; one that cannot be saved stops the restore before it changed anything. */
export async function saveBeforeRestore(
  workspaceRoot: string,
  documents: readonly vscode.TextDocument[],
): Promise<void> {
  for (const doc of documents)
    if (doc.isDirty && !(await doc.save()))
      throw new Error(
        `${visibleLine(workspaceRelative(workspaceRoot, doc.uri) ?? doc.uri.fsPath)} has unsaved changes that could not be saved: nothing was restored.`,
      );
}

/**
 * Every way the core is asked to write files (a restore from the checkpoint menu, Restore All of
 * an edited message, Undo of a restore) calls this just before asking: the unsaved documents
 * among the files it will write (`paths()`, read only when some document is unsaved at all) are
 * saved, for the reasons above. Saving what could not be read: every unsaved file of the workspace.
 */
export async function saveUnsavedBeforeWrite(
  workspaceRoot: string,
  paths: () => Promise<readonly string[] | undefined>,
): Promise<void> {
  if (unsavedDocuments(workspaceRoot, undefined).length === 0) return;
  await saveBeforeRestore(workspaceRoot, unsavedDocuments(workspaceRoot, await paths()));
}
