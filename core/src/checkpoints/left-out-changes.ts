import { readdirSync, type Dirent, type Stats } from "node:fs";
import type { SkippedPath } from "./exclusions.js";
import { existedAt } from "./left-out.js";
import type { FileChange } from "./snapshot-diff.js";
import type { KeptPath } from "./snapshot-restore.js";
import { lstatIfPresent, toAbsolute } from "./workspace-paths.js";

/**
 * Entries looked at (one lstat each) inside one left-out folder, and in all of them. Measured on a
 * 25,000-file node_modules: cut at 1,000 entries 6-14 ms (22 ms cold), 5,000 in all 36-47 ms.
 */
export const FOLDER_LOOK_LIMIT = 1_000;
export const TOTAL_LOOK_LIMIT = 5_000;
/** Changed files of one folder named one by one; past it the folder is named instead ("build/"). */
export const FILES_NAMED_PER_FOLDER = 20;
/** Paths this look reports at most (a skip list holds up to 500 entries). */
export const CHANGES_NAMED = 100;

/** What the checkpoints saved after a restore's target left out; `cut`: one of their skip lists, or the target's, was cut at its limit. */
export interface LaterSkips {
  skipped: readonly SkippedPath[];
  cut: boolean;
  /**
   * One of them followed a command of the task: it may have made left-out files below the top
   * folder that no list names (`gen/out/a.txt`), which only a walk of the workspace finds.
   */
  commandRan?: boolean;
}

export interface LeftOutLook {
  /** Paths the checkpoints left out, changed (or created, or gone) after `since`. */
  changed: KeptPath[];
  /**
   * A change may not be named: a folder's look stopped at its limit, or a folder whose entries
   * were added since may have lost others too.
   */
  cut: boolean;
}

/**
 * What the checkpoints left out (`skipped`: files such as `.env`, collapsed folders such as
 * `build` or `node_modules`) that changed after `since` (a checkpoint's creation): a restore to
 * that checkpoint leaves those as they are, and its answer must say so. Bounded: a file costs
 * one lstat; a folder is walked breadth first up to FOLDER_LOOK_LIMIT entries (TOTAL_LOOK_LIMIT
 * in all), never into `.git`. A change is a status change time (ctime: content, mode, a
 * rename into place) after `since`. A folder born after `since` is named as one path ("dist/");
 * a folder whose own entries were added or removed since is named too when none of them is, or
 * only files changed in place (with a new entry named, a removal cannot be told: `cut`);
 * a folder of more than FILES_NAMED_PER_FOLDER changed files is named instead of its files.
 * `listedThen`: entries that existed at `since` (the checkpoint's own list): one gone now is
 * named (a file a command deleted stays deleted). Nothing is ever written.
 */
export function leftOutChangedSince(
  workspaceRoot: string,
  skipped: readonly SkippedPath[],
  since: number,
  listedThen: ReadonlySet<string>,
): LeftOutLook {
  const changed: KeptPath[] = [];
  let budget = TOTAL_LOOK_LIMIT;
  let cut = false;
  const seen = new Set<string>();
  const entries = skipped
    // A name that is not UTF-8 is listed escaped: no path to look at (nor to restore).
    .filter((s) => s.reason !== "name_not_utf8")
    // The outermost entries only: a folder's look covers what the list names inside it.
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const add = (p: string) => changed.push({ path: p, reason: "not_tracked" });
  for (const s of entries) {
    if (changed.length >= CHANGES_NAMED) {
      cut = true;
      break;
    }
    if (seen.has(s.path) || [...ancestors(s.path)].some((a) => seen.has(a))) continue;
    seen.add(s.path);
    const st = lstatIfPresent(toAbsolute(workspaceRoot, s.path));
    if (!st) {
      if (listedThen.has(s.path)) add(s.path);
      continue;
    }
    if (!st.isDirectory()) {
      if (changedAfter(st, since)) add(s.path);
      continue;
    }
    if (!existedAt(st.birthtimeMs, since)) {
      add(`${s.path}/`);
      continue;
    }
    const limit = Math.min(FOLDER_LOOK_LIMIT, budget);
    const look = lookInto(workspaceRoot, s.path, st, since, limit);
    budget -= look.looked;
    if (look.cut) cut = true;
    if (look.changed.length > FILES_NAMED_PER_FOLDER) add(`${s.path}/`);
    else for (const p of look.changed) add(p);
  }
  return { changed: changed.slice(0, CHANGES_NAMED), cut };
}

export function changedAfter(st: Stats, since: number): boolean {
  return Math.max(st.ctimeMs, st.mtimeMs) > since;
}

function* ancestors(p: string): Generator<string> {
  let i = p.lastIndexOf("/");
  while (i > 0) {
    p = p.slice(0, i);
    yield p;
    i = p.lastIndexOf("/");
  }
}

/** One left-out folder, breadth first, up to `limit` entries. */
function lookInto(
  workspaceRoot: string,
  folder: string,
  folderStat: Stats,
  since: number,
  limit: number,
): { changed: string[]; looked: number; cut: boolean } {
  const changed: string[] = [];
  let looked = 0;
  let unsure = false;
  const queue: { rel: string; st: Stats }[] = [{ rel: folder, st: folderStat }];
  for (let q = 0; q < queue.length; q++) {
    const { rel, st } = queue[q]!;
    let children: Dirent[];
    try {
      children = readdirSync(toAbsolute(workspaceRoot, rel), { withFileTypes: true });
    } catch {
      continue;
    }
    const before = changed.length;
    // A file or folder named here was made since (written anew: a new inode).
    let made = false;
    for (const child of children) {
      if (child.name === ".git") continue;
      if (looked >= limit) return { changed, looked, cut: true };
      looked++;
      const childRel = `${rel}/${child.name}`;
      const cst = lstatIfPresent(toAbsolute(workspaceRoot, childRel));
      if (!cst) continue;
      const born = !existedAt(cst.birthtimeMs, since);
      if (cst.isDirectory()) {
        // Made after the checkpoint: one path for all of it (an install's new package).
        if (born) changed.push(`${childRel}/`);
        else queue.push({ rel: childRel, st: cst });
        made ||= born;
      } else if (changedAfter(cst, since)) {
        changed.push(childRel);
        made ||= born;
      }
    }
    if (!changedAfter(st, since)) continue;
    // Entries added, removed or renamed here since. None named, or only files changed in place
    // (which leave the folder's own date alone): something went or was renamed, and the folder
    // is named. With a new entry named, that may be all of it or not: a file removed here
    // before cannot be told, so the look says more may have changed (a command's
    // `rm ign/a.txt && echo new > ign/new.txt` named only ign/new.txt).
    if (changed.length === before || !made) changed.push(`${rel}/`);
    else unsure = true;
  }
  return { changed, looked, cut: unsure };
}

/**
 * What a file restore to `target` leaves as it is although it changed after it: the paths the
 * checkpoints left out (`skipped`: the target's list and those of the checkpoints after it)
 * changed since, plus entries of the workspace's top folder made or changed since that the
 * exclusions leave out and no list names (a `build` folder a command made, or one an earlier list
 * missed). `excludedNow` runs only when such top-level entries exist (one git process).
 */
export async function leftOutChangedAfter(
  workspaceRoot: string,
  target: { createdAt: number; skipped: readonly SkippedPath[] },
  skipped: readonly SkippedPath[],
  excludedNow: (paths: string[]) => Promise<Set<string>>,
  /** The top-level names the target's snapshot holds; undefined when its tree cannot be read. */
  inTarget?: ReadonlySet<string>,
): Promise<LeftOutLook> {
  const known = new Set(skipped.map((s) => s.path));
  const fresh: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(workspaceRoot);
  } catch {
    // no workspace folder: nothing to look at
  }
  for (const name of names) {
    if (name === ".git" || known.has(name)) continue;
    const st = lstatIfPresent(toAbsolute(workspaceRoot, name));
    // Changed since; or a folder neither the snapshot nor a list names (a list carried from an
    // earlier scan may not know a `dist` made since, whose files change in place).
    if (st && (changedAfter(st, target.createdAt) || (inTarget && !inTarget.has(name)))) fresh.push(name);
  }
  const excluded = fresh.length ? await excludedNow(fresh) : new Set<string>();
  return leftOutChangedSince(
    workspaceRoot,
    [...skipped, ...[...excluded].map((p): SkippedPath => ({ path: p, reason: "excluded_type" }))],
    target.createdAt,
    new Set(target.skipped.map((s) => s.path)),
  );
}

/**
 * The restore's kept files with those `look` found, but for paths the restore itself wrote or
 * deleted (a tool's edit of a left-out file, put back from its pre-image) or found already as
 * the checkpoint had them (`unchanged`), each path once; and but for a folder the look named
 * ("node_modules/", made after the checkpoint) whose every file the restore deletes: nothing
 * there is left as it is (`workspaceRoot`: where to look, after the restore or before a dry run).
 */
export function withLeftOutChanges(
  workspaceRoot: string,
  result: { restored: readonly string[]; deleted: readonly string[]; kept: readonly KeptPath[] },
  look: LeftOutLook,
  unchanged: Iterable<string> = [],
): KeptPath[] {
  const handled = new Set([...result.restored, ...result.deleted, ...result.kept.map((k) => k.path), ...unchanged]);
  const deleted = new Set(result.deleted);
  // A folder the restore emptied (it deleted every file in it) is not kept; one a command
  // emptied, in which the restore deleted nothing, is (a `dist/` whose bundle.js a command removed).
  const moot = (k: KeptPath) =>
    folderWithin(
      workspaceRoot,
      k.path,
      deleted,
      result.deleted.some((d) => d.startsWith(k.path)),
    );
  return [...result.kept, ...look.changed.filter((k) => !handled.has(k.path) && !moot(k))];
}

/**
 * For a folder entry of a look ("dist/"): whether every file below it now is in `set` (when
 * none is left: `whenEmpty`). False for a file's entry, or past the look's limit of entries.
 */
function folderWithin(workspaceRoot: string, entry: string, set: ReadonlySet<string>, whenEmpty: boolean): boolean {
  if (!entry.endsWith("/")) return false;
  const files = filesBelow(workspaceRoot, entry.slice(0, -1), FOLDER_LOOK_LIMIT);
  if (files === undefined) return false;
  return files.length ? files.every((f) => set.has(f)) : whenEmpty;
}

/** Files (and links) below a folder, `.git` left out; none when it is gone; undefined past `limit`. */
function filesBelow(workspaceRoot: string, folder: string, limit: number): string[] | undefined {
  const files: string[] = [];
  const queue = [folder];
  for (let q = 0; q < queue.length; q++) {
    let children: Dirent[];
    try {
      children = readdirSync(toAbsolute(workspaceRoot, queue[q]!), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const child of children) {
      if (child.name === ".git") continue;
      if (files.length + queue.length > limit) return undefined;
      const rel = `${queue[q]}/${child.name}`;
      if (child.isDirectory()) queue.push(rel);
      else files.push(rel);
    }
  }
  return files;
}

/**
 * The left-out changes a look found, as Compare lists them beside the snapshot's changes: not
 * tracked (no earlier content to show, and a restore leaves them as they are); "added" when born
 * after `since` and not known to have been there then (`existedThen`: a restore writes a new
 * file in its place), "deleted" when gone, else "modified"; a folder keeps its trailing "/".
 * Paths Compare lists already (`shown`) are not repeated.
 */
export function notTrackedChanges(
  workspaceRoot: string,
  look: LeftOutLook,
  since: number,
  shown: ReadonlySet<string>,
  existedThen: ReadonlySet<string> = new Set(),
): FileChange[] {
  // A folder whose every file Compare lists already (a tool's new files in a new node_modules/) says nothing more.
  const covered = (k: KeptPath) => folderWithin(workspaceRoot, k.path, shown, false);
  return look.changed
    .filter((k) => !shown.has(k.path) && !covered(k))
    .map((k) => {
      const st = lstatIfPresent(toAbsolute(workspaceRoot, k.path.replace(/\/$/, "")));
      const status = !st
        ? "deleted"
        : existedThen.has(k.path) || existedAt(st.birthtimeMs, since)
          ? "modified"
          : "added";
      return { path: k.path, status, before: "", after: "", binary: false, tooLarge: false, notTracked: true };
    });
}
