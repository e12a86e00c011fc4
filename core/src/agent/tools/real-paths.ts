/** Real locations of paths (symlinks followed), for the checks that decide by where a file really is. */
import * as fs from "node:fs";
import * as path from "node:path";

/** The path's real location, or undefined when nothing is there (or it cannot be resolved). */
export function realpathOrUndefined(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

/** Whether `target` is `root` or inside it (both absolute, compared as they are). */
export function isInsideFolder(root: string, target: string): boolean {
  return target === root || target.startsWith(root.endsWith(path.sep) ? root : `${root}${path.sep}`);
}
