/** An edit computed before it is written (file-edit.ts prepares and commits it). */
export interface FileChange {
  /** Forward-slash path relative to the workspace root. */
  path: string;
  absolutePath: string;
  status: "added" | "modified" | "deleted";
  /** The file as the preparation read it (undefined: it did not exist). */
  before: string | undefined;
  /** What the edit leaves (undefined: the file is deleted). */
  after: string | undefined;
  /** Digest of `before` as read, to tell whether the file changed before the commit. */
  beforeDigest: string | undefined;
  /** The texts are too large (or binary) for a preview; the edit still writes `after` whole. */
  previewTruncated: boolean;
  /**
   * When only `before` is left out (binary, or too large to read) and `after` fits a preview:
   * `after`, so the person still reads what the edit writes.
   */
  previewAfter?: string;
  /** Bytes of the file now (0: it does not exist) and of what the edit writes (0: deleted). */
  beforeBytes: number;
  afterBytes: number;
  /** The file now is binary: its text is never shown. */
  beforeBinary: boolean;
  /**
   * When the texts are too large for a preview (not binary, not unread): the change as a unified
   * diff, if that fits the preview's size; what the person reads before approving.
   */
  previewDiff: string | undefined;
}

export interface PreparedEdit {
  changes: FileChange[];
}
