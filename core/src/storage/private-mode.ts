/**
 * Everything the core writes under its three roots is its user's alone: files 0600, folders
 * 0700, whatever the umask (another local user must not read a task's messages, a database's
 * WAL with what a tool read, or a checkpoint's copy of the workspace). Every module that
 * creates a file or folder there uses these.
 */
import * as fs from "node:fs";

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** mkdir -p with 0700 for every folder it creates. */
export function mkdirPrivate(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Makes one folder 0700 inside a folder that must already exist (EEXIST is fine; a missing
 * parent throws ENOENT). For what a task's folder holds: a process writing there late (the task
 * deleted meanwhile) must fail, not bring the task's folder back.
 */
export function mkdirPrivateInExisting(dir: string): void {
  try {
    fs.mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

export async function mkdirPrivateAsync(dir: string): Promise<void> {
  await fs.promises.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Narrows an existing file or folder that is open to group or others (made by an older version); missing: nothing. */
export function narrowMode(p: string, mode: number): void {
  try {
    const st = fs.statSync(p);
    if ((st.mode & 0o077) !== 0) fs.chmodSync(p, mode);
  } catch {
    // missing, or not ours to change: left as it is
  }
}

/** The three roots themselves are created 0700, and narrowed to 0700 when an older version left them open. */
export function securePrivateRoots(roots: readonly string[]): void {
  for (const root of roots) {
    try {
      mkdirPrivate(root);
    } catch {
      // an unwritable root fails where it is used, with a clear error
    }
    narrowMode(root, PRIVATE_DIR_MODE);
  }
}
