import * as path from "node:path";
import { canonicalWorkspacePath, normaliseWorkspacePath } from "../storage/index.js";
import { findTaskWorkspaceInFiles, hasRefFiles } from "./task-repository-finder.js";

/**
 * Which folder a workspace's checkpoints are kept for: its real path, links resolved. A folder
 * opened through a link and through its real path (two editor windows, the CLI in one of them)
 * then shares one shadow repository and one lock: with one each, a restore of a task run through
 * the link took what a task run through the real path had changed meanwhile for its own, and
 * deleted and reverted it. A link pointed elsewhere since is another folder, with its own.
 *
 * A task whose checkpoints an earlier version kept under the path as given (a link) goes on in
 * that repository, so that none of them is lost from view.
 */
export class RepositoryRoots {
  /**
   * A task's answer through a link, by link, folder and task: where its refs are does not change
   * while the link leads to the same folder (a task's saves go where its earlier ones went).
   */
  private readonly throughLinks = new Map<string, string>();

  /** `checkpointsDir` holds the shadow repositories; `repoDirOf`: the one (holding `.git`) of a workspace root. */
  constructor(
    private readonly checkpointsDir: string,
    private readonly repoDirOf: (root: string) => string,
  ) {}

  /** The root whose repository keeps the checkpoints of `given` (a resolved path), or of its task. */
  of(given: string, taskId?: string): string {
    const asGiven = normaliseWorkspacePath(given);
    const real = canonicalWorkspacePath(given);
    if (real === asGiven || !taskId) return real;
    const key = `${asGiven}\0${real}\0${taskId}`;
    let root = this.throughLinks.get(key);
    if (root === undefined) {
      root = this.holdsTask(asGiven, taskId) && !this.holdsTask(real, taskId) ? asGiven : real;
      // A sidecar serves a bounded number of tasks; the bound keeps a long-lived one finite.
      if (this.throughLinks.size >= 1000) this.throughLinks.clear();
      this.throughLinks.set(key, root);
    }
    return root;
  }

  /**
   * The folder another repository keeps the task's checkpoints for, when the task went through a
   * link (`given`) and `root`'s repository holds none of them: the link led elsewhere then.
   */
  keptElsewhere(given: string, root: string, taskId: string): string | undefined {
    if (normaliseWorkspacePath(given) === root || this.holdsTask(root, taskId)) return undefined;
    const keptFor = findTaskWorkspaceInFiles(this.checkpointsDir, taskId);
    return keptFor && normaliseWorkspacePath(keptFor) !== root ? keptFor : undefined;
  }

  /** Whether the repository of `root` holds refs of the task (read from its files, no git process). */
  private holdsTask(root: string, taskId: string): boolean {
    return hasRefFiles(path.join(this.repoDirOf(root), ".git"), `refs/dline/tasks/${taskId}/`);
  }
}
