import { existsSync, statSync } from "node:fs";
import * as path from "node:path";
import lockfile from "proper-lockfile";
import { lockHolder, syncLockFs } from "./lock-fs.js";

/**
 * Held, across processes, while `git repack` runs on a shadow repository outside its repository
 * lock (pack-maintenance.ts). Repacking writes temporary pack files (`objects/pack/tmp_*`) that
 * cannot be told from those a failed save's git left: a step that removes such leftovers
 * (write-leftovers.ts) lists them, then asks whether a repack runs (`held`, which writes nothing:
 * it must answer on a full disk); when none does, a listed file is no running repack's. Never
 * waited for: a repack finding it held is not started; leftovers found while it is held stay
 * for the next garbage collection. A killed holder's lock is taken over at once (lock-fs.ts).
 */
export class PackingLock {
  private readonly lockFs: ReturnType<typeof syncLockFs>;
  private readonly lockDir: string;

  constructor(
    private readonly lockTarget: string,
    /** A lock of unknown holder not refreshed for this long is taken over. proper-lockfile's minimum is 2000. */
    private readonly staleMs = 10_000,
  ) {
    this.lockFs = syncLockFs(Math.max(2000, staleMs));
    this.lockDir = `${lockTarget}.lock`;
  }

  /**
   * Whether a packer holds the lock now (this process's own included), read without writing
   * anything: its folder, and the holder it names (a killed one's counts as free, as does one
   * of unknown holder not refreshed for the stale time).
   */
  held(): boolean {
    const st = statSync(this.lockDir, { throwIfNoEntry: false });
    if (!st) return false;
    const holder = lockHolder(this.lockDir);
    if (holder === "gone") return false;
    if (holder === "unknown") return st.mtimeMs >= Date.now() - Math.max(2000, this.staleMs);
    return true;
  }

  /**
   * Takes the lock unless another holder has it (this process's own packing included): then, or
   * when the repository's folder is gone, undefined. Answers the release.
   */
  async tryTake(): Promise<(() => Promise<void>) | undefined> {
    if (!existsSync(path.dirname(this.lockTarget))) return undefined;
    try {
      return await lockfile.lock(this.lockTarget, {
        stale: Math.max(2000, this.staleMs),
        update: Math.max(1000, Math.floor(this.staleMs / 2)),
        realpath: false,
        lockfilePath: this.lockDir,
        fs: this.lockFs,
        retries: 0,
        // Taken over while held (a holder judged stale): the repack goes on; it only adds packs.
        // proper-lockfile's default throws from a timer (taking the process down).
        onCompromised: () => undefined,
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ELOCKED" || code === "ENOENT") return undefined;
      throw err;
    }
  }
}
