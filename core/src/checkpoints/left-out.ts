import type { CheckpointInfo } from "./checkpoint-record.js";
import type { SkippedPath } from "./exclusions.js";
import { lstatIfPresent, toAbsolute } from "./workspace-paths.js";

/**
 * Whether a checkpoint left `repoPath` out: named in its skip list exactly, or inside a folder
 * the list names (ignored and excluded folders are listed collapsed, e.g. `build`).
 */
export function leftOutBy(skipped: readonly SkippedPath[], repoPath: string): SkippedPath | undefined {
  return skipped.find((s) => repoPath === s.path || repoPath.startsWith(`${s.path}/`));
}

/** The checkpoint's skip list was cut at its limit: a path missing from it may still have been left out. */
export function skipListTruncated(cp: Pick<CheckpointInfo, "skipped" | "skippedTotal">): boolean {
  return cp.skippedTotal > cp.skipped.length;
}

/**
 * Whether a file or folder already existed at `time`, from its birth time (creation of its
 * inode). Unknown birth times (0: the file system does not record them) answer true: when in
 * doubt, what the user has is kept.
 */
export function existedAt(birthtimeMs: number, time: number): boolean {
  return birthtimeMs <= 0 || birthtimeMs <= time;
}

/**
 * The file is there and nothing changed it after `since`: its status change time (which no
 * program can set back) and its modification time are older. As it was then, whatever the
 * checkpoints hold of it.
 */
export function unchangedOnDiskSince(workspaceRoot: string, rel: string, since: number): boolean {
  const st = lstatIfPresent(toAbsolute(workspaceRoot, rel));
  return !!st && !st.isDirectory() && Math.max(st.ctimeMs, st.mtimeMs) <= since;
}
