import * as vscode from "vscode";

export const CHECKPOINT_SCHEME = "dline-checkpoint";

/**
 * Serves read-only sides of diffs under one scheme: `dline-checkpoint:` for checkpoints (the
 * core's Compare / ViewChanges answers), `dline-proposed:` for the change an edit approval is
 * about and the changes edits made. Kept for as long as a diff may be reopened (a few sets at
 * most: older sets are dropped).
 */
export class CheckpointDocuments implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private readonly sets: string[][] = [];
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private counter = 0;

  constructor(
    private readonly keepSets = 8,
    readonly scheme = CHECKPOINT_SCHEME,
  ) {}

  /** Starts a new set of documents (one Compare or View Changes); returns its id. */
  beginSet(): string {
    this.counter++;
    this.sets.push([]);
    while (this.sets.length > this.keepSets) for (const key of this.sets.shift() ?? []) this.contents.delete(key);
    return `${Date.now().toString(36)}-${this.counter}`;
  }

  /**
   * A document with `content`, at the file's own absolute path (so that diff editors pair it
   * with the workspace file instead of showing a rename). `side` and `setId` keep the URIs of
   * different sides and comparisons apart.
   */
  add(setId: string, side: string, absolutePath: string, content: string, label: string): vscode.Uri {
    const uri = vscode.Uri.from({
      scheme: this.scheme,
      path: vscode.Uri.file(absolutePath).path,
      query: new URLSearchParams({ set: setId, side, label }).toString(),
    });
    const key = uri.toString();
    this.contents.set(key, content);
    this.sets[this.sets.length - 1]?.push(key);
    this.changed.fire(uri);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const content = this.contents.get(uri.toString());
    if (content === undefined) return "(This comparison is no longer available: open it again from the chat.)";
    return content;
  }

  dispose(): void {
    this.changed.dispose();
    this.contents.clear();
  }
}
