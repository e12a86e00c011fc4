import { lstatSync, readFileSync } from "node:fs";
import * as path from "node:path";

/** Where the person's own repository (the workspace's `.git`) stands: its HEAD's branch and commit. */
export interface RepositoryHead {
  /** The branch HEAD names ("refs/heads/main"); "" when HEAD is detached. */
  ref: string;
  /** The commit HEAD resolves to; "" when the branch has no commit yet. */
  id: string;
}

const ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** HEAD, refs and their gitdir pointers are a line each; anything longer is not one of them. */
const MAX_READ = 64 * 1024;

/**
 * The workspace repository's HEAD, read from its files (no git process: the repository's
 * config and hooks are the person's, and a save must not run them), or undefined when the
 * workspace is not a repository's top folder or its HEAD cannot be read. Checkpoints record
 * it, so that a restore can say when the person's git history moved since: a restore puts files
 * back, never branches, commits or the index (a task's `git reset --hard HEAD~15` stays).
 */
export function readRepositoryHead(workspaceRoot: string): RepositoryHead | undefined {
  try {
    const gitDir = gitDirOf(workspaceRoot);
    if (!gitDir) return undefined;
    const head = readSmall(path.join(gitDir, "HEAD"))?.trim();
    if (!head) return undefined;
    if (ID.test(head)) return { ref: "", id: head };
    const ref = /^ref: (refs\/[^\0\n]+)$/.exec(head)?.[1];
    if (!ref || ref.split("/").includes("..")) return undefined;
    return { ref, id: resolveRef(gitDir, ref) ?? "" };
  } catch {
    return undefined;
  }
}

/** The sentence a restore adds when the repository's HEAD is not where it was at `then`; "" when it is. */
export function repositoryMovedNote(then: RepositoryHead | undefined, now: RepositoryHead | undefined): string {
  if (!then || !now || (then.ref === now.ref && then.id === now.id)) return "";
  const at = (h: RepositoryHead) =>
    `${h.ref ? h.ref.replace(/^refs\/heads\//, "") : "a detached HEAD"}${h.id ? ` at ${h.id.slice(0, 8)}` : ""}`;
  return `Your git repository moved since this checkpoint (${at(then)} then, ${at(now)} now): a restore puts files back, never commits, branches or the index.`;
}

/** `.git` as a folder, or the folder a `.git` file points to (a worktree or a submodule). */
function gitDirOf(workspaceRoot: string): string | undefined {
  const dotGit = path.join(workspaceRoot, ".git");
  const st = lstatSync(dotGit, { throwIfNoEntry: false });
  if (st?.isDirectory()) return dotGit;
  if (!st?.isFile()) return undefined;
  const target = /^gitdir: (.+)$/m.exec(readSmall(dotGit) ?? "")?.[1]?.trim();
  return target ? path.resolve(workspaceRoot, target) : undefined;
}

/** A branch's commit: its loose ref file, else packed-refs; in a worktree, the common folder's too. */
function resolveRef(gitDir: string, ref: string): string | undefined {
  const common = readSmall(path.join(gitDir, "commondir"))?.trim();
  const dirs = [gitDir, ...(common ? [path.resolve(gitDir, common)] : [])];
  for (const dir of dirs) {
    const loose = readSmall(path.join(dir, ...ref.split("/")))?.trim();
    if (loose && ID.test(loose)) return loose;
  }
  for (const dir of dirs) {
    for (const line of (readSmall(path.join(dir, "packed-refs")) ?? "").split("\n")) {
      const [id, name] = line.split(" ");
      if (name === ref && id && ID.test(id)) return id;
    }
  }
  return undefined;
}

function readSmall(file: string): string | undefined {
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st?.isFile() || st.size > MAX_READ * 16) return undefined;
  return readFileSync(file, "utf8");
}
