import * as fs from "node:fs/promises";
import * as path from "node:path";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { ShadowGit } from "./git-process.js";
import { quotedConfigValue } from "./shadow-config.js";

/**
 * Finds the workspace of a task among the shadow repositories (the one holding refs of that
 * task), from the worktree each records. Used when no task store is attached, and for deletions
 * whose workspace is unknown.
 */
export async function findTaskWorkspace(
  checkpointsDir: string,
  taskId: string,
  env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
  const names = await fs.readdir(checkpointsDir).catch(() => [] as string[]);
  for (const name of names) {
    const repoDir = path.join(checkpointsDir, name);
    const gitDir = path.join(repoDir, ".git");
    if (
      !(await fs.stat(path.join(gitDir, "HEAD")).then(
        () => true,
        () => false,
      ))
    )
      continue;
    const git = new ShadowGit({
      gitDir,
      workTree: repoDir,
      emptyHooksDir: path.join(repoDir, "no-hooks"),
      baseEnv: env,
    });
    const prefix = `refs/dline/tasks/${taskId}/`;
    // A repository git cannot read (a damaged HEAD, repaired when it is opened) is looked at
    // through its files: its task is then found, and the damage handled where it is opened.
    const hit = await git
      .text(["for-each-ref", "--count=1", "--format=%(refname)", prefix])
      .catch(() => (hasRefFiles(gitDir, prefix) ? prefix : ""));
    if (!hit.trim()) continue;
    const worktree = (
      await git
        .text(["config", "--get", "core.worktree"])
        .catch(() => quotedConfigValue(readOr(path.join(gitDir, "config")), "core", "worktree") ?? "")
    ).trim();
    if (worktree) return worktree;
  }
  return undefined;
}

/**
 * The workspace whose shadow repository holds refs of the task, read from the repositories' files
 * (no git process: asked when an action on the task's checkpoints would otherwise find none).
 */
export function findTaskWorkspaceInFiles(checkpointsDir: string, taskId: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(checkpointsDir);
  } catch {
    return undefined;
  }
  for (const name of names) {
    const gitDir = path.join(checkpointsDir, name, ".git");
    if (!hasRefFiles(gitDir, `refs/dline/tasks/${taskId}/`)) continue;
    const worktree = quotedConfigValue(readOr(path.join(gitDir, "config")), "core", "worktree");
    if (worktree) return worktree;
  }
  return undefined;
}

/** True when the files ref store holds a ref under `prefix` (a loose ref's folder, or packed-refs). */
export function hasRefFiles(gitDir: string, prefix: string): boolean {
  if (existsSync(path.join(gitDir, ...prefix.split("/").filter(Boolean)))) return true;
  return readOr(path.join(gitDir, "packed-refs")).includes(` ${prefix}`);
}

function readOr(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
