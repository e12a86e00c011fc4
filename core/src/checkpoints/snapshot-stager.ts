import { isUtf8 } from "node:buffer";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { isWriteInProgressTemp } from "../storage/index.js";
import { reasonOfIgnoreSource, type SkippedPath } from "./exclusions.js";
import { splitNul, type ShadowGit } from "./git-process.js";
import { FEW_PATHS } from "./fast-commit.js";
import { recordableMode } from "./file-modes.js";
import { bothSettled } from "./both-settled.js";
import {
  BeyondLinkDetector,
  lstatIfPresent,
  mapLimit,
  NestedRepoDetector,
  toAbsolute,
  toRepoPath,
} from "./workspace-paths.js";

/** From this many paths on, update-index writes new objects into packs (bulk check-in)... */
const BULK_CHECKIN_PATHS = 500;
/** ...this many paths per process. */
const BULK_CHECKIN_CHUNK = 10_000;
/** Paths per write when the progress of a scan is reported. */
const PROGRESS_SLICE = 500;

/**
 * Status entries as text, apart from those whose names are not valid UTF-8 (a file named in
 * another encoding): decoded, such a name would stand for another file (its bytes replaced by
 * U+FFFD), which staging would miss silently and a restore could never write back. They are
 * returned apart, shown with the replacement character, to be reported as left out.
 */
function utf8Names(out: Buffer): { names: string[]; notUtf8: string[] } {
  // The usual case, checked at once: one decode and split (entry by entry is 4 times slower).
  if (isUtf8(out)) return { names: splitNul(out), notUtf8: [] };
  const names: string[] = [];
  const notUtf8: string[] = [];
  let start = 0;
  for (let end = out.indexOf(0); end !== -1; start = end + 1, end = out.indexOf(0, start)) {
    const entry = out.subarray(start, end);
    (isUtf8(entry) ? names : notUtf8).push(entry.toString("utf8"));
  }
  return { names, notUtf8 };
}

function nulJoined(paths: Buffer[]): Buffer {
  return Buffer.concat(paths.flatMap((b) => [b, Buffer.from([0])]));
}

/**
 * Brings the shadow index up to date with the workspace. Two ways (docs/checkpoints.md, "What a snapshot holds"):
 * recorded paths (force-added, cost follows the number of paths) or a status scan (git's
 * untracked cache and stat data keep it proportional to what changed where it can).
 * Files over the size limit and nested repositories are left out and reported.
 */
export interface StageResult {
  skipped: SkippedPath[];
  /** Paths given to update-index (added, changed or removed). */
  staged: number;
  /**
   * Every file path the status listed (differing between HEAD, the index and the work tree):
   * the index's tree after staging is HEAD's with these paths as they are now. Scans only.
   */
  listed?: string[];
  /**
   * The listed paths whose state the scan looked at (staged, deleted, or leaving the index), and
   * the permission bits a checkpoint records of those that are such files (file-modes.ts); and
   * the listed files it did not look at (staged before, by a compare's scan: only HEAD differs).
   * Scans only.
   */
  checked?: string[];
  modes?: Map<string, number>;
  notLooked?: string[];
}

/** How far a scan is: listing the workspace, then staging `done` of `total` files. */
export interface ScanProgress {
  phase: "scanning" | "staging";
  done: number;
  total: number;
}

export class SnapshotStager {
  /** The index changed since its cached trees were last written (see writeCachedTrees). */
  cachedTreesStale = false;

  constructor(
    private readonly git: ShadowGit,
    private readonly workspaceRoot: string,
    private readonly sizeLimitBytes: number,
  ) {}

  /**
   * Sorts recorded paths: inside a nested repository (skipped), over the size limit (skipped,
   * and dropped from the snapshot rather than kept stale), or to take as they are now
   * (present or missing). Folders are not paths a tool records; they are ignored.
   */
  async classifyPaths(paths: readonly string[]): Promise<{ take: string[]; drop: string[]; skipped: SkippedPath[] }> {
    const nested = new NestedRepoDetector(this.workspaceRoot);
    const links = new BeyondLinkDetector(this.workspaceRoot);
    const skipped: SkippedPath[] = [];
    const take: string[] = [];
    const drop: string[] = [];
    const unique = [...new Set(paths.map((p) => toRepoPath(this.workspaceRoot, p)).filter((p): p is string => !!p))];
    // A turn records a few paths: synchronous stats (microseconds each) beat thread-pool round
    // trips; a long list is checked asynchronously, so the event loop is not held up.
    const sync = unique.length <= FEW_PATHS;
    await mapLimit(unique, 16, async (rel) => {
      if (sync ? nested.containingSync(rel) : await nested.containing(rel)) {
        skipped.push({ path: rel, reason: "nested_repository" });
        return;
      }
      if (links.beyondLink(rel)) {
        drop.push(rel);
        return;
      }
      const abs = toAbsolute(this.workspaceRoot, rel);
      const st = sync ? lstatIfPresent(abs) : await fs.lstat(abs).catch(() => undefined);
      if (st?.isDirectory()) return;
      if (st && !st.isFile() && !st.isSymbolicLink()) {
        // A named pipe, socket or device: git cannot store it; it leaves the snapshot.
        drop.push(rel);
        return;
      }
      if (st && st.size > this.sizeLimitBytes) {
        skipped.push({ path: rel, reason: "size" });
        drop.push(rel);
        return;
      }
      take.push(rel);
    });
    return { take, drop, skipped };
  }

  /** Stages the paths editing tools recorded into the index: present files force-added, missing ones removed. */
  async stagePaths(paths: readonly string[], signal?: AbortSignal): Promise<StageResult> {
    const { take, drop, skipped } = await this.classifyPaths(paths);
    if (drop.length) {
      this.cachedTreesStale = true;
      await this.git.run(["update-index", "--force-remove", "-z", "--stdin"], {
        input: drop.join("\0") + "\0",
        signal,
      });
    }
    await this.updateIndex(take, signal);
    return { skipped, staged: take.length };
  }

  /**
   * Scans the workspace: status against the index, then stages every eligible change.
   * With `listIgnored` (or when it answers true, asked once git status has run), also lists
   * what the exclusions and ignore files left out (a second walk, so only for baselines and
   * explicit scans).
   */
  async stageScan(options: {
    listIgnored: boolean | (() => Promise<boolean>);
    signal?: AbortSignal;
    onProgress?: (p: ScanProgress) => void;
    /** Nobody waits for this scan at once (a baseline's): git status runs at a lower priority. */
    background?: boolean;
  }): Promise<StageResult> {
    const { signal, onProgress } = options;
    onProgress?.({ phase: "scanning", done: 0, total: 0 });
    // The status rewrites the index it refreshed (1 MB at 27,000 files, most of it the untracked
    // cache and the cached trees). git flushes it before its rename: otherwise the task's next
    // fsync of its own state waited for that data (8-30 ms at times, under 1.5 ms without
    // checkpoints), and the index did not survive a crash.
    //
    // A background scan stats the workspace in one thread: git's preload threads (up to 20, one
    // per 500 files) each weigh a tenth of the task's own at nice 10, so on two cores twenty of
    // them took about half a core from the sidecar and model round trips that run meanwhile
    // (a later task at 27,000 files, alternated: 1.15x-1.17x end to end against 1.21x-1.25x with
    // them on a busy machine, 1.19x against 1.21x-1.22x on a quiet one).
    const { stdout } = await this.git.run(
      [
        "-c",
        "core.fsync=index",
        ...(options.background ? ["-c", "core.preloadIndex=false"] : []),
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--no-renames",
        "--ignore-submodules=all",
      ],
      { signal, env: { GIT_OPTIONAL_LOCKS: "1" }, background: options.background },
    );
    const { names: out, notUtf8 } = utf8Names(stdout);
    const skipped: SkippedPath[] = notUtf8.map((name) => ({ path: name.slice(3), reason: "name_not_utf8" }));
    const update: string[] = [];
    const toCheckSize: string[] = [];
    const onlyInSnapshot = new Set<string>();
    const listed: string[] = [];
    const deleted: string[] = [];
    const notLooked: string[] = [];
    for (const entry of out) {
      const xy = entry.slice(0, 2);
      const rel = entry.slice(3);
      if (!rel) continue;
      if (!rel.endsWith("/")) listed.push(rel);
      if (xy === "??") {
        if (rel.endsWith("/")) skipped.push({ path: rel.slice(0, -1), reason: "nested_repository" });
        else toCheckSize.push(rel);
      } else if (xy[1] === "D") {
        deleted.push(rel);
      } else if (xy[1] !== " ") {
        toCheckSize.push(rel);
      } else if (xy[0] === "D") {
        // In the snapshot (a fast commit) but not in the index: take it from the work tree
        // if it is there (e.g. an ignored file an editing tool wrote).
        onlyInSnapshot.add(rel);
        toCheckSize.push(rel);
      } else if (!rel.endsWith("/")) {
        notLooked.push(rel);
      }
    }
    /** Paths that leave the index: over the size limit, or no longer a file git can store. */
    const leavingIndex: string[] = [];
    // A deleted file whose folder is a link now (a command swapped them) cannot be "removed" by
    // update-index; it leaves the index.
    const links = new BeyondLinkDetector(this.workspaceRoot);
    for (const rel of deleted) (links.beyondLink(rel) ? leavingIndex : update).push(rel);
    // Git already skips folders it recognises as repositories ("dir/" above); this also catches
    // a `.git` git would not recognise (a broken gitfile, a half-made repository).
    const nested = new NestedRepoDetector(this.workspaceRoot);
    const nestedSeen = new Set<string>();
    const modes = new Map<string, number>();
    // Synchronous lstat in slices: a baseline checks every file of the workspace, and 100,000
    // promise round trips through the thread pool cost seconds; between slices other work runs.
    for (let i = 0; i < toCheckSize.length; i += 2000) {
      if (i) await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
      for (const rel of toCheckSize.slice(i, i + 2000)) {
        const repo = nested.containingSync(rel);
        if (repo) {
          if (!nestedSeen.has(repo)) skipped.push({ path: repo, reason: "nested_repository" });
          nestedSeen.add(repo);
          continue;
        }
        // Beyond a link (a command replaced its folder by a link): git cannot stage it, and the
        // lstat below would read through the link. It leaves the index; the link is staged itself.
        if (links.beyondLink(rel)) {
          if (!onlyInSnapshot.has(rel)) leavingIndex.push(rel);
          continue;
        }
        const st = lstatIfPresent(toAbsolute(this.workspaceRoot, rel));
        if (onlyInSnapshot.has(rel) && (!st || st.isDirectory())) continue;
        if (st && !st.isDirectory() && !st.isFile() && !st.isSymbolicLink()) {
          // A named pipe, socket or device where a file was: git cannot store it (update-index
          // would fail on it); it leaves the index.
          leavingIndex.push(rel);
        } else if (st && !st.isDirectory() && st.size > this.sizeLimitBytes) {
          skipped.push({ path: rel, reason: "size" });
          leavingIndex.push(rel);
        } else {
          update.push(rel);
          // From the lstat done anyway: a first baseline learns every file's bits at no cost.
          const bits = recordableMode(st);
          if (bits !== undefined) modes.set(rel, bits);
        }
      }
    }
    if (leavingIndex.length) {
      this.cachedTreesStale = true;
      await this.git.run(["update-index", "--force-remove", "-z", "--stdin"], {
        input: leavingIndex.join("\0") + "\0",
        signal,
      });
    }
    // Listing ignored files only reads the index, and the paths being staged are not ignored
    // ones: both run at once.
    const staging = onProgress && ((done: number) => onProgress({ phase: "staging", done, total: update.length }));
    staging?.(0);
    const [, ignored] = await bothSettled(
      this.updateIndex(update, signal, staging),
      this.listIgnoredIf(options.listIgnored, signal),
    );
    skipped.push(...ignored);
    return { skipped, staged: update.length, listed, checked: [...update, ...leavingIndex], modes, notLooked };
  }

  /**
   * Writes the index's cached trees (git's cache-tree) once staging changed the index. A scan's
   * `git status` compares HEAD with the index folder by folder; where the cache says a folder
   * is HEAD's tree it skips reading it: 28 of 80 ms of a later task's status at 27,000 files
   * read the 13,600 trees otherwise. Staging invalidates only the folders along its paths, and
   * write-tree recomputes only those (20-30 ms for all of them). The caller holds the lock.
   */
  async writeCachedTrees(signal?: AbortSignal): Promise<void> {
    if (!this.cachedTreesStale) return;
    this.cachedTreesStale = false;
    await this.git.run(["write-tree"], { signal });
  }

  /**
   * `--replace`: a file where the index has a folder (or the other way round: the user replaced
   * one by the other) replaces the index entries it conflicts with, instead of failing the save.
   */
  private async updateIndex(paths: string[], signal?: AbortSignal, onStaged?: (done: number) => void): Promise<void> {
    if (!paths.length) return;
    this.cachedTreesStale = true;
    // In git's (byte) order: update-index inserts each entry into its sorted array, so paths
    // out of order cost a move of the array per path (82 s instead of seconds at 100,000).
    const sorted = paths.map((p) => Buffer.from(p, "utf8")).sort((a, b) => Buffer.compare(a, b));
    if (sorted.length < BULK_CHECKIN_PATHS) {
      await this.git.run(["update-index", "--add", "--remove", "--replace", "-z", "--stdin"], {
        input: nulJoined(sorted),
        signal,
      });
      return;
    }
    // Many new files (a baseline): stream them into packs (bulk check-in) instead of one loose
    // object file each; creating 20,000 small files costs more than hashing them. Git checks
    // each new object against the pack being written one by one (quadratic), so one process
    // takes at most BULK_CHECKIN_CHUNK paths. Few paths stay loose: turns leave no pack each.
    for (let i = 0; i < sorted.length; i += BULK_CHECKIN_CHUNK) {
      const args = ["-c", "core.bigFileThreshold=1", "update-index", "--add", "--remove", "--replace", "-z", "--stdin"];
      const chunk = sorted.slice(i, i + BULK_CHECKIN_CHUNK);
      if (onStaged) await this.updateReporting(args, chunk, (n) => onStaged(i + n), signal);
      else await this.git.run(args, { input: nulJoined(chunk), signal });
    }
    onStaged?.(sorted.length);
  }

  /**
   * update-index fed in slices, reporting how many paths git has taken from its stdin so far (a
   * slice's write completes once it is in the pipe, at most a pipe's buffer ahead of git).
   * `--verbose` would say it exactly, but makes a bulk check-in a hundred times slower.
   */
  private async updateReporting(
    args: string[],
    paths: Buffer[],
    onCount: (n: number) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const proc = this.git.spawn(args, { signal });
    proc.stdout.resume();
    for (let i = 0; i < paths.length; i += PROGRESS_SLICE) {
      const end = Math.min(paths.length, i + PROGRESS_SLICE);
      proc.stdin.write(nulJoined(paths.slice(i, end)), () => onCount(end));
    }
    proc.stdin.end();
    await proc.exit;
  }

  /**
   * Which of these paths a scan would leave out now: ignored or excluded (the exclusions and the
   * project's ignore files, whether or not the path is in the index), inside a nested
   * repository, or over the size limit.
   */
  async excludedNow(paths: string[], signal?: AbortSignal): Promise<Set<string>> {
    const result = new Set<string>();
    if (!paths.length) return result;
    const nested = new NestedRepoDetector(this.workspaceRoot);
    for (const p of paths) {
      const st = lstatIfPresent(toAbsolute(this.workspaceRoot, p));
      if (nested.containingSync(p) || (st && !st.isDirectory() && st.size > this.sizeLimitBytes)) result.add(p);
    }
    const out = await this.git.run(["check-ignore", "-z", "--no-index", "--stdin"], {
      input: paths.join("\0") + "\0",
      okCodes: [1],
      signal,
      env: { GIT_LITERAL_PATHSPECS: "0" },
    });
    for (const p of splitNul(out.stdout)) result.add(p);
    return result;
  }

  /** `listIgnored` when `wanted` is, or answers, true (stageScan); nothing otherwise. */
  private async listIgnoredIf(
    wanted: boolean | (() => Promise<boolean>),
    signal?: AbortSignal,
  ): Promise<SkippedPath[]> {
    return (typeof wanted === "function" ? await wanted() : wanted) ? this.listIgnored(signal) : [];
  }

  /**
   * The paths the exclusions and ignore files leave out now, folders collapsed ("dist/"), at most
   * 5,000: one walk of the workspace.
   */
  async ignoredNow(signal?: AbortSignal): Promise<string[]> {
    return splitNul(
      await this.git.text(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], { signal }),
    ).slice(0, 5000);
  }

  /** Ignored paths (folders collapsed), each with why: built-in exclusion, LFS, or .gitignore. */
  private async listIgnored(signal?: AbortSignal): Promise<SkippedPath[]> {
    const listed = await this.ignoredNow(signal);
    if (!listed.length) return [];
    const out = await this.git.run(["check-ignore", "-z", "-v", "--no-index", "--stdin"], {
      input: listed.join("\0") + "\0",
      okCodes: [1],
      signal,
      // check-ignore refuses the literal pathspec magic; the names come from ls-files anyway.
      env: { GIT_LITERAL_PATHSPECS: "0" },
    });
    const fields = splitNul(out.stdout);
    const result: SkippedPath[] = [];
    for (let i = 0; i + 3 < fields.length; i += 4) {
      const [source, line, pattern, p] = fields.slice(i, i + 4);
      if (!source || p === undefined) continue;
      // A negated pattern decided it: not left out (a folder none of whose files are taken is
      // listed too, and meets the exclude file's any-folder pattern, or a .gitignore's "!keep/").
      if (pattern?.startsWith("!")) continue;
      // A tool's edit writing its file meanwhile (a baseline's scan runs beside a first edit):
      // its temporary file is gone a moment later, and must not be named as a left-out file.
      if (isWriteInProgressTemp(path.posix.basename(p))) continue;
      result.push({ path: p.replace(/\/$/, ""), reason: reasonOfIgnoreSource(source, Number(line)) });
    }
    return result;
  }
}
