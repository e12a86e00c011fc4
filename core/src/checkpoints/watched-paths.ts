import * as fs from "node:fs/promises";
import * as path from "node:path";
import { lstatIfPresent, toAbsolute } from "./workspace-paths.js";

/**
 * Turns what the watcher saw into the paths a save takes, as a scan would: files of folders that
 * appeared are listed (not inside nested repositories); a path the snapshot holds is taken as it
 * is now (present or gone); a new file only when the exclusions and ignore files let it in.
 */
export async function pathsToStage(
  workspaceRoot: string,
  changed: readonly string[],
  inSnapshot: (repoPath: string) => Promise<boolean>,
  excludedNow: (paths: string[]) => Promise<Set<string>>,
  skipFolder: (repoPath: string, name: string) => boolean,
): Promise<string[]> {
  const candidates = new Set<string>();
  const folders: string[] = [];
  for (const p of changed) {
    const st = lstatIfPresent(toAbsolute(workspaceRoot, p));
    if (st?.isDirectory()) folders.push(p);
    else candidates.add(p);
  }
  // A folder the exclusions leave out (node_modules after an install, an ignored build output)
  // is not walked at all.
  const skipped = await excludedNow(folders);
  for (const dir of folders) {
    if (skipped.has(dir) || skipFolder(dir, path.posix.basename(dir))) continue;
    for (const f of await filesBelow(workspaceRoot, dir, skipFolder)) candidates.add(f);
  }
  const take: string[] = [];
  const fresh: string[] = [];
  for (const p of candidates) {
    const exists = lstatIfPresent(toAbsolute(workspaceRoot, p)) !== undefined;
    // Gone: removed from the snapshot (a folder with everything in it); a no-op when it was not there.
    if (!exists || (await inSnapshot(p))) take.push(p);
    else fresh.push(p);
  }
  const excluded = await excludedNow(fresh);
  return [...take, ...fresh.filter((p) => !excluded.has(p))];
}

/** Files below a folder, without `.git` folders and nested repositories. */
async function filesBelow(
  workspaceRoot: string,
  rel: string,
  skipFolder: (repoPath: string, name: string) => boolean,
): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dirRel: string) => {
    const entries = await fs
      .readdir(path.join(workspaceRoot, ...dirRel.split("/")), { withFileTypes: true })
      .catch(() => []);
    if (entries.some((e) => e.name === ".git")) return;
    for (const e of entries) {
      const child = `${dirRel}/${e.name}`;
      if (e.isDirectory()) {
        if (!skipFolder(child, e.name)) await walk(child);
      } else out.push(child);
    }
  };
  await walk(rel);
  return out;
}
