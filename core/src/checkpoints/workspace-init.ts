import type { Logger } from "../logging/logger.js";
import { tmpdir } from "node:os";
import { makeStatus, type CheckpointState, type CheckpointStatus } from "./checkpoint-status.js";
import type { SkippedPath } from "./exclusions.js";
import type { ScanProgress } from "./snapshot-stager.js";
import { DISK_FULL_MESSAGE, isDiskFull } from "../errors.js";
import { GitError, ShadowGit } from "./git-process.js";
import { MESSAGES } from "./workspace-guard.js";
import type { LockWaitEvents } from "./repo-lock.js";
import type { WorkspaceCheckpoints } from "./workspace-checkpoints.js";

const PROGRESS_EVERY_MS = 250;

export interface InitTiming {
  /** This long after the repository lock is held, report that the repository may be large (15 s by default). */
  slowInitMs: number;
  /** Give up (and kill git) this long after the repository lock is held, reporting a timeout. */
  initTimeoutMs: number;
}

/**
 * Opens a workspace's shadow repository and scans the workspace, reporting each state as the
 * docs/checkpoints.md describes it: initializing (waiting for another window's lock, if so),
 * slow `slowInitMs` after the lock is held, then ready, or failed (timeout, other
 * error: Retry and Disable offered) or unavailable (no git).
 */
export async function initializeWorkspace(
  engine: WorkspaceCheckpoints,
  timing: InitTiming,
  report: (state: CheckpointState, message: string, skipped?: SkippedPath[], progress?: ScanProgress) => void,
  logger: Logger,
): Promise<void> {
  report("initializing", MESSAGES.initializing);
  const abort = new AbortController();
  let state: "initializing" | "slow" = "initializing";
  // At most a few progress reports a second (each is an event on every task of the workspace).
  let last: ScanProgress | undefined;
  let slow: NodeJS.Timeout | undefined;
  let timeout: NodeJS.Timeout | undefined;
  // The clocks start once the repository lock is held: waiting for another window is not this
  // scan being slow, and is bounded by the lock's own wait (repo-lock.ts).
  let waited = false;
  const lockEvents: LockWaitEvents = {
    waiting: (pid) => {
      waited = true;
      report("initializing", MESSAGES.waitingForLock(pid));
    },
    acquired: () => {
      if (waited) report("initializing", MESSAGES.initializing);
      // Slow keeps the progress so far: a client must not lose the count when the message changes.
      slow = setTimeout(() => report((state = "slow"), MESSAGES.slowInit, undefined, last), timing.slowInitMs);
      timeout = setTimeout(() => abort.abort(), timing.initTimeoutMs);
    },
  };
  let lastAt = 0;
  const onProgress = (p: ScanProgress) => {
    const now = Date.now();
    const phaseChanged = p.phase !== last?.phase;
    if (!phaseChanged && p.done === last?.done) return;
    if (!phaseChanged && p.done !== p.total && now - lastAt < PROGRESS_EVERY_MS) return;
    last = p;
    lastAt = now;
    report(state, state === "slow" ? MESSAGES.slowInit : MESSAGES.initializing, undefined, p);
  };
  try {
    const skipped = await engine.prepare(abort.signal, onProgress, lockEvents);
    report("ready", engine.recoveryNote() ?? MESSAGES.ready, skipped);
  } catch (err) {
    if (abort.signal.aborted) report("failed", MESSAGES.initTimeout);
    else if (err instanceof GitError && err.missing) report("unavailable", MESSAGES.gitMissing);
    else report("failed", isDiskFull(err) ? DISK_FULL_MESSAGE : (err as Error).message);
    logger.error("checkpoint initialization failed", { workspace: engine.workspaceRoot, error: String(err) });
  } finally {
    clearTimeout(slow);
    clearTimeout(timeout);
  }
}

/**
 * The status of a workspace this process has not opened: no git -> unavailable; else ready,
 * with what the existing repository (if any) records. Never scans.
 */
export async function statusBeforeInit(
  engine: WorkspaceCheckpoints,
  env: NodeJS.ProcessEnv,
  taskId?: string,
): Promise<CheckpointStatus> {
  const probe = new ShadowGit({ gitDir: "/nonexistent", workTree: tmpdir(), emptyHooksDir: tmpdir(), baseEnv: env });
  const missing = await probe.run(["--version"]).then(
    () => false,
    (e) => e instanceof GitError && e.missing,
  );
  if (missing) return makeStatus("unavailable", MESSAGES.gitMissing);
  if (!(await engine.repo.exists())) return makeStatus("ready", MESSAGES.ready);
  const cps = taskId ? await engine.list(taskId).catch(() => []) : [];
  // A query may have repaired the repository (its HEAD) in this process: the status says so.
  return makeStatus("ready", engine.recoveryNote() ?? MESSAGES.ready, {
    skipped: cps.at(-1)?.skipped ?? [],
    repositorySizeBytes: await engine.repo.objectBytes().catch(() => 0),
  });
}
