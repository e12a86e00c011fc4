import * as fs from "node:fs";
import * as path from "node:path";
import { DlineError } from "../errors.js";

/**
 * The folder a task continues in. A task's tools run in its workspace and nowhere else: a task
 * without one (imported from Cline without a recorded folder) or whose recorded folder is not on
 * this machine is not continued until the caller names a folder, never in the sidecar's current
 * folder. A task that has its folder keeps it.
 */
export function workspaceToContinueIn(
  taskId: string,
  recorded: string,
  given: string | undefined,
): { workspaceRoot: string; changed: boolean } {
  const recordedHere = isFolder(recorded);
  if (given) {
    assertWorkspaceFolder(given);
    if (recordedHere && !samePlace(recorded, given)) {
      throw new DlineError("invalid_argument", `Task ${taskId} runs in ${recorded}; it cannot continue in ${given}.`);
    }
    return recordedHere ? { workspaceRoot: recorded, changed: false } : { workspaceRoot: given, changed: true };
  }
  if (!recorded) {
    throw new DlineError(
      "failed_precondition",
      `Task ${taskId} has no workspace: name the folder its tools should run in (workspace_root) to continue it.`,
      {
        errorReason: "no_workspace",
      },
    );
  }
  if (!recordedHere) {
    throw new DlineError(
      "failed_precondition",
      `Task ${taskId} ran in ${recorded}, which is not a folder on this machine: name the folder to continue it in (workspace_root).`,
      { errorReason: "no_workspace" },
    );
  }
  return { workspaceRoot: recorded, changed: false };
}

/** A workspace root a caller gives: an absolute path to a folder (invalid_argument otherwise). */
export function assertWorkspaceFolder(given: string): void {
  if (!path.isAbsolute(given))
    throw new DlineError("invalid_argument", `workspace_root must be an absolute path, not ${given}.`);
  if (!isFolder(given)) throw new DlineError("invalid_argument", `The workspace ${given} is not a folder.`);
}

function isFolder(p: string): boolean {
  if (!p || !path.isAbsolute(p)) return false;
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function samePlace(a: string, b: string): boolean {
  try {
    return fs.realpathSync(a) === fs.realpathSync(b);
  } catch {
    return path.resolve(a) === path.resolve(b);
  }
}
