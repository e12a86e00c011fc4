import * as fs from "node:fs/promises";
import * as path from "node:path";
import { ShadowGit } from "./git-process.js";

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
    const hit = await git
      .text(["for-each-ref", "--count=1", "--format=%(refname)", `refs/dline/tasks/${taskId}/`])
      .catch(() => "");
    if (!hit.trim()) continue;
    const worktree = (await git.text(["config", "--get", "core.worktree"]).catch(() => "")).trim();
    if (worktree) return worktree;
  }
  return undefined;
}
