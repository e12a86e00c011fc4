/**
 * Lists workspace files the way git sees them. In a git work tree we ask git itself
 * (`git ls-files -z --cached --others --exclude-standard`: tracked files plus untracked files
 * that no .gitignore, .git/info/exclude or global excludes file ignores). Elsewhere we walk the
 * folder and apply every .gitignore found on the way with IgnoreMatcher. `.git` is never listed.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { IgnoreMatcher } from "./ignore-matcher.js";

export interface ListedFiles {
  /** Workspace-relative, forward slashes, sorted. */
  files: string[];
  /** True when `limit` cut the list. */
  truncated: boolean;
  source: "git" | "walk";
}

/** Files under `relativeDir` ("." = all), recursively, honouring .gitignore. */
export async function listWorkspaceFiles(workspaceRoot: string, relativeDir: string, limit: number, signal?: AbortSignal): Promise<ListedFiles> {
  const fromGit = await gitListFiles(workspaceRoot, relativeDir, signal);
  if (fromGit) {
    const files = [...new Set(fromGit)].sort();
    return { files: files.slice(0, limit), truncated: files.length > limit, source: "git" };
  }
  const files: string[] = [];
  const matcher = new IgnoreMatcher().add(".git/");
  await loadGitignore(workspaceRoot, "", matcher);
  // Ancestors of the start folder may hold .gitignore files too.
  const startParts = relativeDir === "." ? [] : relativeDir.split("/");
  for (let i = 1; i <= startParts.length; i++) await loadGitignore(workspaceRoot, startParts.slice(0, i).join("/"), matcher);
  const truncated = await walk(workspaceRoot, relativeDir === "." ? "" : relativeDir, matcher, files, limit, signal);
  files.sort();
  return { files, truncated, source: "walk" };
}

async function walk(root: string, rel: string, matcher: IgnoreMatcher, out: string[], limit: number, signal?: AbortSignal): Promise<boolean> {
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
    const childRel = rel ? `${rel}/${entry.name}` : entry.name;
    const isDir = entry.isDirectory();
    if (matcher.ignores(childRel, isDir)) continue;
    if (isDir) dirs.push(childRel);
    else if (entry.isFile() || entry.isSymbolicLink()) {
      if (out.length >= limit) return true;
      out.push(childRel);
    }
  }
  for (const dir of dirs) {
    await loadGitignore(root, dir, matcher);
    if (await walk(root, dir, matcher, out, limit, signal)) return true;
  }
  return false;
}

async function loadGitignore(root: string, rel: string, matcher: IgnoreMatcher): Promise<void> {
  try {
    matcher.add(await fs.readFile(path.join(root, rel, ".gitignore"), "utf8"), rel);
  } catch {
    // no .gitignore here
  }
}

/** Returns undefined when the workspace is not inside a git work tree (or git is missing). */
async function gitListFiles(workspaceRoot: string, relativeDir: string, signal?: AbortSignal): Promise<string[] | undefined> {
  const inside = await run("git", ["rev-parse", "--is-inside-work-tree"], workspaceRoot, signal);
  if (inside?.trim() !== "true") return undefined;
  const args = ["-c", "core.quotepath=off", "ls-files", "-z", "--cached", "--others", "--exclude-standard"];
  if (relativeDir !== ".") args.push("--", relativeDir);
  const out = await run("git", args, workspaceRoot, signal);
  if (out === undefined) return undefined;
  const files: string[] = [];
  for (const entry of out.split("\0")) {
    if (!entry) continue;
    // --cached lists deleted-but-tracked files and submodule folders: keep only real files.
    const stat = await fs.lstat(path.join(workspaceRoot, entry)).catch(() => undefined);
    if (stat && (stat.isFile() || stat.isSymbolicLink())) files.push(entry);
  }
  return files;
}

function run(cmd: string, args: string[], cwd: string, signal?: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, signal, maxBuffer: 256 * 1024 * 1024, encoding: "utf8" }, (err, stdout) => resolve(err ? undefined : stdout));
  });
}
