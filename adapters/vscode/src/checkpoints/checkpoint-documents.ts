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
  private readonly sets: { id: string; keys: string[] }[] = [];
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
    const id = `${Date.now().toString(36)}-${this.counter}`;
    this.sets.push({ id, keys: [] });
    while (this.sets.length > this.keepSets) for (const key of this.sets.shift()?.keys ?? []) this.contents.delete(key);
    return id;
  }

  /**
   * A document with `content`, at the file's own absolute path (so that diff editors pair it
   * with the workspace file instead of showing a rename). `side` and `setId` keep the URIs of
   * different sides and comparisons apart.
   */
  add(
    setId: string,
    side: string,
    absolutePath: string,
    content: string,
    label: string,
    options: { plainText?: boolean } = {},
  ): vscode.Uri {
    // A notice in place of the file's text: a plain-text name, so no language service parses the
    // notice as the file's language (JavaScript errors in Problems for a sentence).
    const shownPath = options.plainText ? `${absolutePath} (not previewed).txt` : absolutePath;
    const uri = vscode.Uri.from({
      scheme: this.scheme,
      path: vscode.Uri.file(shownPath).path,
      query: new URLSearchParams({ set: setId, side, label }).toString(),
    });
    const key = uri.toString();
    this.contents.set(key, content);
    this.sets.find((set) => set.id === setId)?.keys.push(key);
    this.changed.fire(uri);
    return uri;
  }

  /**
   * Drops a set's documents (a proposal that was answered): their contents go, and an editor
   * still showing one reads that it is no longer available.
   */
  dropSet(setId: string): void {
    const index = this.sets.findIndex((set) => set.id === setId);
    if (index < 0) return;
    const [set] = this.sets.splice(index, 1);
    for (const key of set?.keys ?? []) {
      this.contents.delete(key);
      this.changed.fire(vscode.Uri.parse(key));
    }
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
