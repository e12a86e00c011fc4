import type { PathChange } from "./fast-commit.js";

/**
 * What a new task did while its baseline was being taken (a scan of a large workspace takes a
 * while), so that its edits need not wait for the scan:
 *
 * - each file an edit changed, kept as it was before (the baseline holds that instead of what its
 *   scan read, which may be the tool's write);
 * - the turn saves queued meanwhile. They run after the baseline and read their files from the
 *   work tree then, so a later edit of a file one of them will read would change what it saves:
 *   such an edit waits, as does every edit once a save that scans the workspace (after a
 *   command) or a save of another kind is queued.
 *
 * Paths are repository paths (workspace-relative, `/`-separated).
 */
export class BaselineWindow {
  /** Files edited during the scan, as they were before the task's first edit of each. */
  readonly kept = new Map<string, PathChange>();
  /** Files the queued turn saves will read from the work tree. */
  private readonly readBySaves = new Set<string>();
  /** A queued save will read more than recorded paths (it scans), or is not a turn's. */
  private scanQueued = false;

  /** A turn's save of these recorded paths was queued; `"scan"` for any other save. */
  saveQueued(paths: readonly string[] | "scan"): void {
    if (paths === "scan") this.scanQueued = true;
    else for (const p of paths) this.readBySaves.add(p);
  }

  /** Whether an edit of these files may go ahead without waiting for the baseline and the saves. */
  admits(paths: readonly string[]): boolean {
    return !this.scanQueued && !paths.some((p) => this.readBySaves.has(p));
  }
}
