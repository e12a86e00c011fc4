import * as fs from "node:fs";
import * as path from "node:path";
import { lstatIfPresent, toAbsolute } from "./workspace-paths.js";

/**
 * Folders a command moved (`mv lib lib2`, `git mv src lib`) keep their birth time, older than
 * the checkpoint, so a restore that put the files back at their old place and deleted the moved
 * ones left the moved folder and its subfolders behind, empty (6,438 of them on babel), by the
 * rule that keeps a folder born before the checkpoint. These helpers tell such a moved copy from
 * a person's folder: the restore had to make its original again (it was gone), and the files
 * the restore deleted under the copy came back under the original by the same name (but for
 * new files the task made there).
 */

/**
 * The topmost folders on the way of `written` (repository paths a restore is about to write)
 * that are not folders now: the restore makes them again. Asked before anything is written.
 */
export function foldersToRemake(workspaceRoot: string, written: readonly string[]): string[] {
  const known = new Map<string, boolean>(); // folder -> is a folder now
  const isFolder = (rel: string) => {
    let answer = known.get(rel);
    if (answer === undefined) {
      answer = !!lstatIfPresent(toAbsolute(workspaceRoot, rel))?.isDirectory();
      known.set(rel, answer);
    }
    return answer;
  };
  const remade = new Set<string>();
  for (const p of written) {
    const parts = p.split("/").slice(0, -1);
    for (let i = 1; i <= parts.length; i++) {
      const folder = parts.slice(0, i).join("/");
      if (!isFolder(folder)) {
        remade.add(folder);
        break;
      }
    }
  }
  return [...remade];
}

/**
 * The folders among the parents of `deleted` that are moved copies of a folder in `remade`: at
 * least half of the files deleted under the copy (the rest the task's own new files) have their
 * counterpart, by the same path below, among `written` under the remade folder. Topmost only (a copy's subfolders go with it), and never one the
 * checkpoint records as the person's empty folder (`keep`), nor one holding or held by the
 * folder it copies.
 */
export function movedCopies(
  deleted: readonly string[],
  written: readonly string[],
  remade: readonly string[],
  keep: readonly string[],
): string[] {
  if (!remade.length || !deleted.length) return [];
  const remadeSet = new Set(remade);
  const kept = new Set(keep);
  // Each written file's path below the remade folder on its way (at most one: the topmost).
  const originalsBelow = new Map<string, string[]>();
  for (const w of written) {
    const parts = w.split("/");
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join("/");
      if (!remadeSet.has(folder)) continue;
      const below = parts.slice(i).join("/");
      originalsBelow.set(below, [...(originalsBelow.get(below) ?? []), folder]);
      break;
    }
  }
  // Per candidate copy folder: how many deleted files lie under it, and how many of those have a
  // counterpart under each remade folder.
  const under = new Map<string, number>();
  const matched = new Map<string, Map<string, number>>();
  for (const d of deleted) {
    const parts = d.split("/");
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join("/");
      under.set(folder, (under.get(folder) ?? 0) + 1);
      for (const original of originalsBelow.get(parts.slice(i).join("/")) ?? []) {
        const byOriginal = matched.get(folder) ?? new Map<string, number>();
        byOriginal.set(original, (byOriginal.get(original) ?? 0) + 1);
        matched.set(folder, byOriginal);
      }
    }
  }
  const copies: string[] = [];
  for (const [folder, count] of under) {
    if (kept.has(folder)) continue;
    // The task's own new files may lie there too (a file it made before the move): at least half
    // of what was deleted came back under the original.
    const original = [...(matched.get(folder) ?? [])].find(([o, n]) => 2 * n >= count && !related(o, folder));
    if (original) copies.push(folder);
  }
  return copies.filter((c) => !copies.some((other) => other !== c && c.startsWith(`${other}/`)));
}

function related(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/**
 * Removes each of `folders` when nothing but empty folders is left in it (bottom-up, with
 * `rmdir`: a file, a link or anything else there keeps it and the folders on its way), never
 * through a link. Answers the folders removed, each copy's subfolders included.
 */
export function removeEmptyTrees(workspaceRoot: string, folders: readonly string[]): string[] {
  const removed: string[] = [];
  for (const rel of folders) {
    const abs = toAbsolute(workspaceRoot, rel);
    if (!lstatIfPresent(abs)?.isDirectory() || !onlyFolders(workspaceRoot, rel)) continue;
    const gone: string[] = [];
    if (removeIfEmptyTree(abs, rel, gone)) removed.push(...gone);
  }
  return removed;
}

/** Whether every part of `rel`'s way is a folder (no link) of the workspace. */
function onlyFolders(workspaceRoot: string, rel: string): boolean {
  const parts = rel.split("/");
  return parts.every(
    (part, i) =>
      !!part &&
      part !== "." &&
      part !== ".." &&
      part !== ".git" &&
      !!lstatIfPresent(toAbsolute(workspaceRoot, parts.slice(0, i + 1).join("/")))?.isDirectory(),
  );
}

/** Removes the folder at `abs` if it holds only folders that are (recursively) empty. */
function removeIfEmptyTree(abs: string, rel: string, gone: string[]): boolean {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(abs, { withFileTypes: true });
  } catch {
    return false;
  }
  let empty = true;
  for (const e of entries) {
    if (!e.isDirectory() || !removeIfEmptyTree(path.join(abs, e.name), `${rel}/${e.name}`, gone)) empty = false;
  }
  if (!empty) return false;
  try {
    fs.rmdirSync(abs);
  } catch {
    return false; // something came in meanwhile, or not writable: left as it is
  }
  gone.push(rel);
  return true;
}
