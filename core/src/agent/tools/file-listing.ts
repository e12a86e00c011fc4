/**
 * Lists workspace files the way git sees untracked and tracked files alike: a walk of the
 * folder that applies every `.gitignore` on the way (and those of the enclosing repository
 * above the workspace), plus the repository's `.git/info/exclude`, with the `ignore` library.
 * No git process is started: a repository's own config (core.fsmonitor, hooks, filters,
 * aliases, includes) could make git run code, and a listing must never run anything.
 * `.git` folders are never listed, nor entered. Only regular files and symbolic links are
 * listed (never FIFOs, sockets or devices).
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import ignore, { type Ignore } from "ignore";
import { isProtectedPath, type ToolGuard } from "./tool-guard.js";

export interface ListedFiles {
  /** Workspace-relative, forward slashes, sorted. */
  files: string[];
  /** True when `limit` cut the list. */
  truncated: boolean;
}

/** The rules of one ignore file, and the folder (relative to the repository root, "" = root) they apply under. */
interface IgnoreLevel {
  base: string;
  rules: Ignore;
}

/** Every ignore file that applies, outermost first; paths are tested from the innermost one out. */
class GitignoreStack {
  private readonly levels: IgnoreLevel[] = [];

  /** `prefix`: the workspace's path inside its repository ("" when it is the repository root or none). */
  constructor(private readonly prefix: string) {}

  add(base: string, text: string): void {
    if (text.trim()) this.levels.push({ base, rules: ignore({ allowRelativePaths: true }).add(text) });
  }

  /** `rel`: workspace-relative, forward slashes. */
  ignores(rel: string, isDirectory: boolean): boolean {
    const full = this.prefix ? `${this.prefix}/${rel}` : rel;
    for (let i = this.levels.length - 1; i >= 0; i--) {
      const { base, rules } = this.levels[i]!;
      if (base && !full.startsWith(`${base}/`)) continue;
      const inner = base ? full.slice(base.length + 1) : full;
      const result = rules.test(isDirectory ? `${inner}/` : inner);
      if (result.ignored) return true;
      if (result.unignored) return false;
    }
    return false;
  }
}

/** Files under `relativeDir` ("." = all), recursively, honouring .gitignore; the guard's protected folders are left out. */
export async function listWorkspaceFiles(
  workspaceRoot: string,
  relativeDir: string,
  limit: number,
  signal?: AbortSignal,
  guard?: ToolGuard,
): Promise<ListedFiles> {
  const root = await fs.realpath(workspaceRoot);
  const repoRoot = await enclosingRepository(root);
  const prefix = repoRoot ? toSlashes(path.relative(repoRoot, root)) : "";
  const stack = new GitignoreStack(prefix);
  if (repoRoot) {
    stack.add("", await readIgnoreFile(path.join(repoRoot, ".git", "info", "exclude")));
    // The repository's folders above the workspace, down to the workspace itself.
    const parts = prefix ? prefix.split("/") : [];
    for (let i = 0; i < parts.length; i++)
      stack.add(
        parts.slice(0, i).join("/"),
        await readIgnoreFile(path.join(repoRoot, ...parts.slice(0, i), ".gitignore")),
      );
  }
  const base = (rel: string) => (prefix ? (rel ? `${prefix}/${rel}` : prefix) : rel);
  stack.add(base(""), await readIgnoreFile(path.join(root, ".gitignore")));
  const start = relativeDir === "." ? "" : relativeDir;
  const startParts = start ? start.split("/") : [];
  for (let i = 1; i <= startParts.length; i++) {
    const dir = startParts.slice(0, i).join("/");
    stack.add(base(dir), await readIgnoreFile(path.join(root, dir, ".gitignore")));
  }
  const files: string[] = [];
  const skip = (absolute: string) => guard !== undefined && isProtectedPath(guard, absolute);
  const truncated = await walk(root, start, stack, base, skip, files, limit, signal);
  files.sort();
  return { files, truncated };
}

async function walk(
  root: string,
  rel: string,
  stack: GitignoreStack,
  base: (rel: string) => string,
  skip: (absolute: string) => boolean,
  out: string[],
  limit: number,
  signal?: AbortSignal,
): Promise<boolean> {
  signal?.throwIfAborted();
  let entries;
  try {
    entries = await fs.readdir(path.join(root, rel), { withFileTypes: true });
  } catch {
    return false; // unreadable folder: skip it like git does
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const dirs: string[] = [];
  for (const entry of entries) {
    if (entry.name === ".git") continue;
    const childRel = rel ? `${rel}/${entry.name}` : entry.name;
    const isDir = entry.isDirectory();
    if (!isDir && !entry.isFile() && !entry.isSymbolicLink()) continue;
    if (stack.ignores(childRel, isDir) || skip(path.join(root, childRel))) continue;
    if (isDir) dirs.push(childRel);
    else {
      if (out.length >= limit) return true;
      out.push(childRel);
    }
  }
  for (const dir of dirs) {
    stack.add(base(dir), await readIgnoreFile(path.join(root, dir, ".gitignore")));
    if (await walk(root, dir, stack, base, skip, out, limit, signal)) return true;
  }
  return false;
}

/** The folder holding the `.git` of the repository `dir` is in (itself or an ancestor), if any. */
async function enclosingRepository(dir: string): Promise<string | undefined> {
  for (let current = dir; ; current = path.dirname(current)) {
    if (
      await fs.lstat(path.join(current, ".git")).then(
        () => true,
        () => false,
      )
    )
      return current;
    if (path.dirname(current) === current) return undefined;
  }
}

/** An ignore file's text; "" when absent, unreadable or not a regular file (never blocks on a FIFO). */
async function readIgnoreFile(file: string): Promise<string> {
  try {
    const stat = await fs.lstat(file);
    if (!stat.isFile() || stat.size > 1024 * 1024) return "";
    return await fs.readFile(file, "utf8");
  } catch {
    return "";
  }
}

function toSlashes(relative: string): string {
  return relative.split(path.sep).join("/");
}
