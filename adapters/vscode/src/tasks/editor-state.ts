import * as path from "node:path";
import * as vscode from "vscode";

export interface EditorFiles {
  visibleFiles: string[];
  openFiles: string[];
  unsavedFiles: string[];
}

/**
 * What the editor has open in the task's workspace, relative to it with "/" separators: the
 * visible and open files (the model reads them as environment details) and the files with
 * unsaved changes (the core refuses to edit those: the person is editing them).
 */
export function editorFiles(workspaceRoot: string): EditorFiles {
  const relative = (uri: vscode.Uri): string | undefined => {
    if (uri.scheme !== "file" || !workspaceRoot) return undefined;
    const rel = path.relative(workspaceRoot, uri.fsPath);
    return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel.split(path.sep).join("/") : undefined;
  };
  const unique = (paths: (string | undefined)[]) => [...new Set(paths.filter((p): p is string => Boolean(p)))];
  const tabUris = vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .flatMap((t) => (t.input instanceof vscode.TabInputText ? [t.input.uri] : []));
  return {
    visibleFiles: unique(vscode.window.visibleTextEditors.map((e) => relative(e.document.uri))),
    openFiles: unique(tabUris.map(relative)),
    unsavedFiles: unique(vscode.workspace.textDocuments.filter((d) => d.isDirty).map((d) => relative(d.uri))),
  };
}
