import * as vscode from "vscode";

/**
 * Calls `onChange` when the set of documents with unsaved changes changes (one became dirty,
 * was saved, reverted or closed), not at every keystroke.
 */
export function watchUnsavedFiles(onChange: () => void): vscode.Disposable {
  const dirty = () => new Set(vscode.workspace.textDocuments.filter((d) => d.isDirty).map((d) => d.uri.toString()));
  let last = dirty();
  const check = () => {
    const now = dirty();
    if (now.size === last.size && [...now].every((u) => last.has(u))) return;
    last = now;
    onChange();
  };
  return vscode.Disposable.from(
    vscode.workspace.onDidChangeTextDocument(check),
    vscode.workspace.onDidSaveTextDocument(check),
    vscode.workspace.onDidCloseTextDocument(check),
  );
}
