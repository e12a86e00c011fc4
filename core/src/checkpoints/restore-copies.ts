import { lstatSync, readdirSync, rmSync } from "node:fs";
import * as path from "node:path";

/**
 * A restore writes each file as a copy beside it (`<name>.dline-restore-<pid>`), then renames
 * it into place. A sidecar killed between the two leaves the copy in the person's folder; the
 * built-in exclusions keep it out of snapshots, so nothing else would ever remove it.
 */
const MARK = ".dline-restore-";

/** The copy this process writes for `abs` before renaming it into place. */
export function restoreCopyOf(abs: string): string {
  return `${abs}${MARK}${process.pid}`;
}

/**
 * Removes the copies other processes left beside these files (absolute paths), which a restore
 * is about to write: the restore holds the repository lock, so no other process is writing them
 * now. One folder read per folder; files and links only.
 */
export function removeLeftCopies(files: Iterable<string>): string[] {
  const byFolder = new Map<string, Set<string>>();
  for (const abs of files) {
    const names = byFolder.get(path.dirname(abs)) ?? new Set<string>();
    names.add(path.basename(abs));
    byFolder.set(path.dirname(abs), names);
  }
  const removed: string[] = [];
  for (const [folder, names] of byFolder) {
    let entries: string[];
    try {
      entries = readdirSync(folder);
    } catch {
      continue; // not there yet: nothing left in it
    }
    for (const entry of entries) {
      const at = entry.lastIndexOf(MARK);
      if (at <= 0 || !names.has(entry.slice(0, at))) continue;
      const pid = entry.slice(at + MARK.length);
      if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
      const copy = path.join(folder, entry);
      try {
        if (lstatSync(copy).isDirectory()) continue;
        rmSync(copy, { force: true });
        removed.push(copy);
      } catch {
        // gone meanwhile, or not removable: left as it is
      }
    }
  }
  return removed;
}
