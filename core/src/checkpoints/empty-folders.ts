import * as fs from "node:fs";
import { lstatIfPresent, toAbsolute } from "./workspace-paths.js";

/**
 * How many empty folders a checkpoint records. Git holds files only, and a person rarely keeps
 * more than a few empty folders; every checkpoint's message carries the list.
 */
export const MAX_RECORDED_EMPTY_FOLDERS = 200;

/**
 * The workspace's empty folders (repository paths), found by walking it: snapshots hold files,
 * so without this list a restore could not tell a person's empty folder that a command deleted
 * and made again from one the task made. Not walked: `.git`, nested repositories, `skipFolder`
 * and `leftOut` (folders whose files never enter a snapshot, so a restore never empties them).
 * Synchronous reads in slices, as a scan's checks are: one thread-pool round trip per folder
 * would cost more than the reads.
 */
export async function findEmptyFolders(
  workspaceRoot: string,
  skipFolder: (repoPath: string, name: string) => boolean,
  leftOut: ReadonlySet<string>,
  signal?: AbortSignal,
): Promise<string[]> {
  const empty: string[] = [];
  const pending = [""];
  let read = 0;
  while (pending.length && empty.length < MAX_RECORDED_EMPTY_FOLDERS) {
    if (++read % 500 === 0) {
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    }
    const rel = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(rel ? toAbsolute(workspaceRoot, rel) : workspaceRoot, { withFileTypes: true });
    } catch {
      continue; // gone meanwhile, or not readable: nothing a restore would empty there
    }
    if (rel && entries.length === 0) {
      empty.push(rel);
      continue;
    }
    if (rel && entries.some((e) => e.name === ".git")) continue;
    for (const e of entries) {
      if (!e.isDirectory() || e.name === ".git") continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (!skipFolder(child, e.name) && !leftOut.has(child)) pending.push(child);
    }
  }
  return empty.sort();
}

/** Those of `folders` that are still folders (a later task's baseline keeps what is left of the list). */
export function stillFolders(workspaceRoot: string, folders: readonly string[]): string[] {
  return folders.filter((rel) => lstatIfPresent(toAbsolute(workspaceRoot, rel))?.isDirectory());
}
