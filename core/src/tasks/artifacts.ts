import * as fs from "node:fs";
import * as path from "node:path";
import { DlineError } from "../errors.js";
import { writeFileAtomicSync, mkdirPrivate } from "../storage/index.js";

/**
 * A task's artifacts/ folder. Only task-relative paths are accepted: absolute paths, `..`
 * segments and symlinks that lead outside the folder are refused with invalid_argument.
 */
export class TaskArtifacts {
  constructor(readonly dir: string) {}

  /** The absolute path of a task-relative artifact path, after every check. */
  resolve(relative: string): string {
    if (typeof relative !== "string" || relative.length === 0 || relative.includes("\0")) {
      throw new DlineError("invalid_argument", "An artifact path must be a non-empty relative path.");
    }
    if (path.isAbsolute(relative) || path.win32.isAbsolute(relative) || /^[A-Za-z]:/.test(relative)) {
      throw new DlineError(
        "invalid_argument",
        `Artifact path "${relative.slice(0, 200)}" is absolute; only task-relative paths are allowed.`,
      );
    }
    if (relative.split(/[\\/]+/).some((s) => s === "..")) {
      throw new DlineError("invalid_argument", `Artifact path "${relative.slice(0, 200)}" leaves the task folder.`);
    }
    const full = path.resolve(this.dir, relative);
    const base = path.resolve(this.dir);
    if (!full.startsWith(base + path.sep)) {
      throw new DlineError("invalid_argument", `Artifact path "${relative.slice(0, 200)}" leaves the task folder.`);
    }
    this.assertNoSymlinkEscape(full);
    return full;
  }

  write(relative: string, bytes: Uint8Array | string): string {
    const full = this.resolve(relative);
    mkdirPrivate(path.dirname(full));
    this.assertNoSymlinkEscape(full);
    writeFileAtomicSync(full, bytes);
    return full;
  }

  read(relative: string): Buffer {
    return fs.readFileSync(this.resolve(relative));
  }

  /** Follows every existing component of `full`: each must stay inside the artifacts folder. */
  private assertNoSymlinkEscape(full: string): void {
    let realBase: string;
    try {
      realBase = fs.realpathSync(this.dir);
    } catch {
      return; // no artifacts folder yet: nothing can be a symlink
    }
    let existing = full;
    while (!fs.existsSync(existing) && existing !== path.dirname(existing)) existing = path.dirname(existing);
    let real: string;
    try {
      real = fs.realpathSync(existing);
    } catch {
      // A dangling symlink: refuse, it could be created to point anywhere.
      throw new DlineError("invalid_argument", "An artifact path goes through a broken symbolic link.");
    }
    if (real !== realBase && !real.startsWith(realBase + path.sep)) {
      throw new DlineError(
        "invalid_argument",
        "An artifact path goes through a symbolic link that leaves the task folder.",
      );
    }
    // A dangling link as the last component is invisible to existsSync: check it explicitly.
    try {
      if (fs.lstatSync(full).isSymbolicLink()) {
        const target = fs.realpathSync(full);
        if (!target.startsWith(realBase + path.sep)) {
          throw new DlineError("invalid_argument", "An artifact path is a symbolic link that leaves the task folder.");
        }
      }
    } catch (err) {
      if (err instanceof DlineError) throw err;
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      if (isDanglingLink(full)) throw new DlineError("invalid_argument", "An artifact path is a broken symbolic link.");
    }
  }
}

function isDanglingLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
