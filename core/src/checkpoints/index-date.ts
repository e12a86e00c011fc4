import { statSync, utimesSync } from "node:fs";

/** Subcommands that may write the index without refreshing its untracked cache (git status does). */
const INDEX_WRITERS = new Set(["update-index", "write-tree", "read-tree", "add", "rm", "reset", "checkout-index"]);

/**
 * Keeps the index dated no later than the git status that last wrote it. git's untracked cache
 * keeps each folder's time in whole seconds and trusts it unless the index was written in that
 * second or before (then it looks again). Our other index writers (update-index for a save's
 * paths, write-tree for the cached trees) rewrote the index a second later without refreshing
 * that cache: a folder the person changed in the second of the status then looked unchanged to
 * every later status, and a file made there went unseen (taken later for a command's, a restore
 * to before that command would delete it). After such a writer the index gets back the date it
 * had before (by induction, that of the last status): an older date only makes git check more.
 * `before` is read as the writer starts; `after` once it succeeded.
 */
export function indexDateKeeper(
  indexFile: string,
  args: readonly string[],
  subcommand: string | undefined,
  env: NodeJS.ProcessEnv | undefined,
): () => void {
  // A scratch index (GIT_INDEX_FILE) is not the one status reads.
  if (!subcommand || !INDEX_WRITERS.has(subcommand) || env?.GIT_INDEX_FILE || args.includes("--dry-run"))
    return () => {};
  const before = statSync(indexFile, { throwIfNoEntry: false });
  if (!before) return () => {};
  return () => {
    try {
      const now = statSync(indexFile, { throwIfNoEntry: false });
      if (now && now.mtimeMs > before.mtimeMs) utimesSync(indexFile, now.atime, before.mtime);
    } catch {
      // Gone or not ours to date: git then looks at what it cannot trust anyway.
    }
  };
}
