import { GitError, type ShadowGit } from "./git-process.js";

/** git's answer when a ref's commit is not in the repository (for-each-ref reading commits). */
export const MISSING_REF_OBJECT = /missing object [0-9a-f]+ for refs\//i;

/**
 * True when `commit`, or an object it reaches, is missing or unreadable. Asked only after git
 * reported damage: it walks the checkpoint's whole tree.
 */
export async function objectsMissing(git: ShadowGit, commit: string, signal?: AbortSignal): Promise<boolean> {
  try {
    const out = await git.text(["rev-list", "--objects", "--missing=print", commit], { signal });
    return out.split("\n").some((line) => line.startsWith("?"));
  } catch (err) {
    // The commit itself missing ("bad object"), or an object git cannot read.
    if (err instanceof GitError && !err.missing && !signal?.aborted) return true;
    throw err;
  }
}

/**
 * Of these `[commit, ref]` pairs, the refs whose commit is missing from the repository (one
 * `cat-file --batch-check`, which reads no object's content).
 */
export async function refsWithMissingCommits(
  git: ShadowGit,
  refs: readonly (readonly [string, string])[],
  signal?: AbortSignal,
): Promise<Set<string>> {
  if (!refs.length) return new Set();
  const out = await git.run(["cat-file", "--batch-check=%(objectname)"], {
    input: refs.map(([id]) => id).join("\n") + "\n",
    signal,
  });
  const missing = new Set(
    out.stdout
      .toString("utf8")
      .split("\n")
      .filter((line) => line.endsWith(" missing"))
      .map((line) => line.slice(0, line.indexOf(" "))),
  );
  return new Set(refs.filter(([id]) => missing.has(id)).map(([, ref]) => ref));
}
