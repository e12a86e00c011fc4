import { createHash } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";

/** A file's content as a hash; null when there is no file. */
type Fingerprint = string | null;

async function fingerprint(file: string): Promise<Fingerprint> {
  try {
    return createHash("sha256")
      .update(await fs.readFile(file))
      .digest("hex");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // A file that cannot be read (now or then) is compared by why, never made to fail a restore.
    return code === "ENOENT" ? null : `unreadable: ${code ?? String(err)}`;
  }
}

/**
 * The files a file restore wrote or deleted, as it left them (read just after it answered). Undo
 * of the restore puts back what was there before it: what the person changed in these files
 * since would be lost, so Undo asks first about the files it names (`changedSince`).
 */
export class RestoredFiles {
  private constructor(
    private readonly workspaceRoot: string,
    private readonly left: ReadonlyMap<string, Fingerprint>,
  ) {}

  /** Reads what the restore left (workspace-relative paths with "/"). */
  static async read(
    workspaceRoot: string,
    written: readonly string[],
    deleted: readonly string[],
  ): Promise<RestoredFiles> {
    const left = new Map<string, Fingerprint>();
    for (const rel of written) left.set(rel, await fingerprint(path.join(workspaceRoot, rel)));
    for (const rel of deleted) left.set(rel, null);
    return new RestoredFiles(workspaceRoot, left);
  }

  /**
   * Of the files Undo would write (`undoWrites`; undefined when unknown: the files the restore
   * wrote), those changed since the restore: a file it did not write (created or edited since),
   * one whose content is no longer what it left, or one open with unsaved changes (`unsaved`).
   */
  async changedSince(undoWrites: readonly string[] | undefined, unsaved: (rel: string) => boolean): Promise<string[]> {
    const changed: string[] = [];
    for (const rel of undoWrites ?? [...this.left.keys()]) {
      const left = this.left.get(rel);
      if (left === undefined || unsaved(rel) || (await fingerprint(path.join(this.workspaceRoot, rel))) !== left)
        changed.push(rel);
    }
    return changed;
  }
}
