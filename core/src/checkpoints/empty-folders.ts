import * as fs from "node:fs";
import * as path from "node:path";
import { existedAt } from "./left-out.js";
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

/**
 * The empty folders made after `since` (their birth time) that `recorded` (a checkpoint's list of
 * the workspace's empty folders) does not name: a command's `mkdir newempty` since that
 * checkpoint, which a restore to it removes (removeFoldersMadeSince). Unknown birth times keep
 * every folder. Walked as findEmptyFolders walks.
 */
export async function emptyFoldersMadeSince(
  workspaceRoot: string,
  since: number,
  recorded: readonly string[],
  skipFolder: (repoPath: string, name: string) => boolean,
  leftOut: ReadonlySet<string>,
  signal?: AbortSignal,
): Promise<string[]> {
  const known = new Set(recorded);
  const empty = await findEmptyFolders(workspaceRoot, skipFolder, leftOut, signal);
  return empty.filter((rel) => !known.has(rel) && madeSince(workspaceRoot, rel, since));
}

/**
 * Removes those of `folders` (emptyFoldersMadeSince) still empty, children first, and then each
 * one's folders on the way while they are empty, made after `since` and not in `recorded` (a
 * `mkdir -p a/b` leaves nothing of `a`). A folder the restore put files in stays, and so does
 * any path with a link on its way. Answers the folders removed.
 */
export function removeFoldersMadeSince(
  workspaceRoot: string,
  folders: readonly string[],
  since: number,
  recorded: readonly string[],
): string[] {
  const known = new Set(recorded);
  const removed: string[] = [];
  for (const rel of [...folders].sort((a, b) => b.split("/").length - a.split("/").length)) {
    let current = rel;
    while (current && !known.has(current) && madeSince(workspaceRoot, current, since)) {
      if (!onlyFoldersOnWay(workspaceRoot, current)) break;
      try {
        fs.rmdirSync(toAbsolute(workspaceRoot, current));
      } catch {
        break; // not empty (or not writable): left as it is
      }
      removed.push(current);
      current = current.includes("/") ? current.slice(0, current.lastIndexOf("/")) : "";
    }
  }
  return removed;
}

function madeSince(workspaceRoot: string, rel: string, since: number): boolean {
  const st = lstatIfPresent(toAbsolute(workspaceRoot, rel));
  return !!st?.isDirectory() && !existedAt(st.birthtimeMs, since);
}

/** Those of `folders` that are still folders (each checkpoint records what is left of the list). */
export function stillFolders(workspaceRoot: string, folders: readonly string[]): string[] {
  return folders.filter((rel) => lstatIfPresent(toAbsolute(workspaceRoot, rel))?.isDirectory());
}

/**
 * Makes again those of `folders` that are gone (a command deleted a person's empty folder; a
 * restore brings it back, as git would bring back a file). Folder by folder, never through a
 * link or past a file: a path whose way holds anything but folders is left as it is, so nothing
 * is made outside the workspace. Answers the folders made.
 */
export function makeMissingFolders(workspaceRoot: string, folders: readonly string[]): string[] {
  return folders.filter((rel) => {
    try {
      return makeFolderPath(workspaceRoot, rel);
    } catch {
      return false; // a folder on the way is not readable: left as it is
    }
  });
}

/**
 * The folders a restore may make for `folders` (makeMissingFolders, after the restore has
 * written its files): on each path's way, the first that is not a folder now and those under
 * it. Where a file or a link stands (a command's, which the restore may delete) it is named
 * too. Parents come before their children.
 */
export function foldersToMake(workspaceRoot: string, folders: readonly string[]): string[] {
  const planned = new Set<string>();
  for (const rel of folders) {
    const parts = rel.split("/");
    if (!validParts(parts)) continue;
    const first = firstNotFolder(workspaceRoot, parts);
    if (first >= 0) for (let j = first + 1; j <= parts.length; j++) planned.add(parts.slice(0, j).join("/"));
  }
  return [...planned].sort();
}

/**
 * Undoes makeMissingFolders: removes those of `folders` that are empty folders now, children
 * before parents. A folder with anything in it stays, and so does any path with a link on its
 * way (nothing outside the workspace is touched). Answers the folders removed.
 */
export function removeEmptyFolders(workspaceRoot: string, folders: readonly string[]): string[] {
  const deepestFirst = [...folders].sort((a, b) => b.split("/").length - a.split("/").length);
  return deepestFirst.filter((rel) => {
    if (!onlyFoldersOnWay(workspaceRoot, rel)) return false;
    try {
      fs.rmdirSync(toAbsolute(workspaceRoot, rel));
      return true;
    } catch {
      return false; // not empty (or not writable): left as it is
    }
  });
}

/** Whether `rel` and every folder on its way are folders (not links) of the workspace. */
function onlyFoldersOnWay(workspaceRoot: string, rel: string): boolean {
  const parts = rel.split("/");
  return validParts(parts) && firstNotFolder(workspaceRoot, parts) < 0;
}

/** The index of the first part of the path that is not a folder now (missing, a file, a link); -1 if none. */
function firstNotFolder(workspaceRoot: string, parts: readonly string[]): number {
  return parts.findIndex(
    (_, i) => !lstatIfPresent(toAbsolute(workspaceRoot, parts.slice(0, i + 1).join("/")))?.isDirectory(),
  );
}

function validParts(parts: readonly string[]): boolean {
  return !parts.some((part) => !part || part === "." || part === ".." || part === ".git");
}

/** Whether it made (some of) the folders on `rel`'s way, up to `rel` itself. */
function makeFolderPath(workspaceRoot: string, rel: string): boolean {
  const parts = rel.split("/");
  if (!validParts(parts)) return false;
  let dir = workspaceRoot;
  let made = false;
  for (const part of parts) {
    dir = path.join(dir, part);
    const st = lstatIfPresent(dir);
    if (st?.isDirectory()) continue;
    if (st) return false; // a file or a link stands on the way
    try {
      fs.mkdirSync(dir);
      made = true;
    } catch {
      return false; // made meanwhile by someone else, or not writable: left as it is
    }
  }
  return made;
}
