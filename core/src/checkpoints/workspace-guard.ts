import * as fs from "node:fs";
import * as path from "node:path";
import { DlineError } from "../errors.js";

/** The sentences (docs/checkpoints.md, "Limits") for workspaces checkpoints cannot use. */
export const MESSAGES = {
  noWorkspace: "No workspace detected. Please open Dline in a workspace to use checkpoints.",
  multiRoot: "Checkpoints are not currently supported in multi-root workspaces.",
  gitMissing: "Git must be installed to use checkpoints.",
  protectedDir: (name: string) => `Cannot use checkpoints in ${name} directory`,
  slowInit:
    "Checkpoints are taking longer than expected to initialize. Working in a large repository? Consider opening Dline in a specific project folder, or disabling checkpoints.",
  initTimeout: "Checkpoints initialization timed out. The repository may be too large; retry or disable checkpoints.",
  disabled: "Checkpoints are disabled.",
  initializing: "Checkpoints are initializing.",
  waitingForLock: (pid: number | undefined) =>
    `Checkpoints are waiting for another Dline window using this workspace's checkpoints${pid ? ` (process ${pid})` : ""}.`,
  lockWaitTimeout: (waitMs: number, pid: number | undefined) =>
    `Another Dline window${pid ? ` (process ${pid})` : ""} has been using this workspace's checkpoints for over ${Math.round(waitMs / 1000)} s; retry once it is done.`,
  lockLost:
    "Another Dline process took over this workspace's checkpoint repository while this one was using it; the step was stopped.",
  ready: "Checkpoints are ready.",
  rebuilt: (aside: string) =>
    `The checkpoint repository was damaged and has been rebuilt; earlier checkpoints were kept aside in ${aside}.`,
  damaged: (gitDir: string, cause: string) =>
    `The checkpoint repository ${gitDir} is damaged (${cause}); it was left as it is. The next checkpoint saved in this workspace moves it aside and starts a new one.`,
  indexRebuilt: (aside: string) =>
    `The checkpoint index was damaged and has been rebuilt; no checkpoint was lost. The damaged files were kept aside in ${aside}.`,
  headRepaired: (kept: string) =>
    `The checkpoint repository's HEAD was damaged and has been repaired; no checkpoint was lost.${kept ? ` What it held was kept aside in ${kept}.` : ""}`,
  restoreLeftPartWay: (target: string, undoId: string | undefined) =>
    `A restore of the files to ${target} was cut short: the Dline process running it stopped while it wrote them, so the files may be part-way. Restore that checkpoint again to finish it, or restore the "before restore" checkpoint ${undoId ? `${undoId.slice(0, 12)} ` : ""}saved just before it to put them back as they were.`,
  checkpointUnreadable: (checkpointId: string, taskId: string, gitDir: string) =>
    `Checkpoint ${checkpointId.slice(0, 8)} of task ${taskId} cannot be read: objects it needs are missing from the checkpoint repository ${gitDir}. Its other checkpoints whose objects are all there still work.`,
} as const;

/**
 * Folders' real paths (links resolved), each looked up once: the roots are checked at every
 * step of a task's checkpoints. A path that cannot be resolved (not there yet) stands for itself.
 */
export class RealPaths {
  private readonly known = new Map<string, string>();

  of(folder: string): string {
    let real = this.known.get(folder);
    if (real === undefined) {
      try {
        real = fs.realpathSync.native(folder);
      } catch {
        real = folder;
      }
      // A sidecar opens a handful of folders; the bound only keeps a pathological client finite.
      if (this.known.size >= 1000) this.known.clear();
      this.known.set(folder, real);
    }
    return real;
  }
}

/**
 * Checks the workspace roots of a task before any shadow repository is made for them:
 * exactly one root, and not the home, Desktop, Documents or Downloads folder itself, named
 * directly or through a link (a link to the home folder opened as a project would have the
 * checkpoints scan the whole home). Returns the one root as given; throws
 * `failed_precondition` with its sentence otherwise.
 */
export function checkWorkspaceRoots(
  roots: readonly string[],
  homeDir: string,
  realPaths: RealPaths = new RealPaths(),
): string {
  const [only, another] = roots.filter((r) => r.trim() !== "");
  if (only === undefined) throw new DlineError("failed_precondition", MESSAGES.noWorkspace);
  if (another !== undefined) throw new DlineError("failed_precondition", MESSAGES.multiRoot);
  const root = path.resolve(only);
  const home = path.resolve(homeDir);
  const protectedDirs: [string, string][] = [
    [home, "home"],
    [path.join(home, "Desktop"), "Desktop"],
    [path.join(home, "Documents"), "Documents"],
    [path.join(home, "Downloads"), "Downloads"],
  ];
  const realRoot = realPaths.of(root);
  for (const [dir, name] of protectedDirs) {
    if (samePath(root, dir) || samePath(realRoot, realPaths.of(dir)))
      throw new DlineError("failed_precondition", MESSAGES.protectedDir(name));
  }
  return root;
}

function samePath(a: string, b: string): boolean {
  const norm = (p: string) => p.replace(/[\\/]+$/, "");
  return process.platform === "win32" || process.platform === "darwin"
    ? norm(a).toLowerCase() === norm(b).toLowerCase()
    : norm(a) === norm(b);
}
