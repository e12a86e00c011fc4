import { lstatSync, type Stats } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";

/**
 * Workspace-relative paths as git wants them ('/'-separated, no leading './'), or undefined
 * for a path outside the workspace (never staged, never restored).
 */
export function toRepoPath(workspaceRoot: string, p: string): string | undefined {
  const abs = path.resolve(workspaceRoot, p);
  const rel = path.relative(workspaceRoot, abs);
  if (!rel || rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
  const posix = rel.split(path.sep).join("/");
  if (posix === ".git" || posix.startsWith(".git/")) return undefined;
  return posix;
}

export function toAbsolute(workspaceRoot: string, repoPath: string): string {
  return path.join(workspaceRoot, ...repoPath.split("/"));
}

/**
 * lstat answering undefined when nothing is at the path: it is missing (ENOENT), or a folder on
 * the way is a file now (ENOTDIR: the user replaced a folder by a file of the same name).
 */
export function lstatIfPresent(abs: string): Stats | undefined {
  try {
    return lstatSync(abs, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw err;
  }
}

/**
 * Finds whether a path lies beyond a symbolic link: a folder on its way is a link now (a command
 * replaced a folder by a link to another). Git cannot stage such a path ("beyond a symbolic
 * link"): it leaves the index, and the link is a path of its own. Memoises folder answers.
 */
export class BeyondLinkDetector {
  private readonly known = new Map<string, boolean>();

  constructor(private readonly workspaceRoot: string) {}

  beyondLink(repoPath: string): boolean {
    return this.linkOnWay(repoPath) !== undefined;
  }

  /** The first folder on the path's way that is a link now (repository path); undefined when none is. */
  linkOnWay(repoPath: string): string | undefined {
    const folders = repoPath.split("/");
    folders.pop(); // the file's own name
    let dir = "";
    for (const folder of folders) {
      dir = dir ? `${dir}/${folder}` : folder;
      let link = this.known.get(dir);
      if (link === undefined) {
        link = lstatIfPresent(toAbsolute(this.workspaceRoot, dir))?.isSymbolicLink() ?? false;
        this.known.set(dir, link);
      }
      if (link) return dir;
    }
    return undefined;
  }
}

/**
 * Finds whether a path lies inside a nested repository or submodule (an ancestor folder below
 * the workspace root holding a `.git` file or folder). Memoises folder answers per instance.
 */
export class NestedRepoDetector {
  private readonly known = new Map<string, string | undefined>();

  constructor(private readonly workspaceRoot: string) {}

  /** The nested repository folder containing `repoPath`, or undefined. */
  async containing(repoPath: string): Promise<string | undefined> {
    const folders = repoPath.split("/");
    folders.pop(); // the file's own name
    let dir = "";
    for (const folder of folders) {
      dir = dir ? `${dir}/${folder}` : folder;
      let hit = this.known.get(dir);
      if (!this.known.has(dir)) {
        const hasGit = await fs.lstat(path.join(toAbsolute(this.workspaceRoot, dir), ".git")).then(
          () => true,
          () => false,
        );
        hit = hasGit ? dir : undefined;
        this.known.set(dir, hit);
      }
      if (hit) return hit;
    }
    return undefined;
  }

  /** `containing` with synchronous lstat calls (for long loops over many paths). */
  containingSync(repoPath: string): string | undefined {
    const folders = repoPath.split("/");
    folders.pop(); // the file's own name
    let dir = "";
    for (const folder of folders) {
      dir = dir ? `${dir}/${folder}` : folder;
      if (!this.known.has(dir)) {
        const hasGit = lstatIfPresent(path.join(toAbsolute(this.workspaceRoot, dir), ".git")) !== undefined;
        this.known.set(dir, hasGit ? dir : undefined);
      }
      const hit = this.known.get(dir);
      if (hit) return hit;
    }
    return undefined;
  }
}

/** Runs `fn` over items with at most `limit` in flight. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  // One iterator shared by the workers: each takes the next item when it is free.
  const queue = items.entries();
  const worker = async () => {
    for (const [i, item] of queue) out[i] = await fn(item);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
