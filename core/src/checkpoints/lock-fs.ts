import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PRIVATE_FILE_MODE } from "../storage/index.js";
import { currentProcessIdentity, isClaimLive, type ProcessIdentity } from "../tasks/index.js";

type Callback<T = void> = (err: NodeJS.ErrnoException | null, value?: T) => void;

function settle<T>(callback: Callback<T>, run: () => T): void {
  let value: T;
  try {
    value = run();
  } catch (err) {
    process.nextTick(callback, err);
    return;
  }
  process.nextTick(callback, null, value);
}

/** The file in a lock folder naming the process that holds the lock. */
const OWNER_FILE = "owner";

interface Owner {
  pid: number;
  hostname: string | undefined;
  /** Boot id and start time (Linux; empty elsewhere). Absent in a lock of an earlier version. */
  identity: ProcessIdentity | undefined;
}

/**
 * Who holds a lock folder, as far as this host can tell:
 * - self: this process;
 * - live: another process of this host that runs (the same pid, boot and start time);
 * - gone: a process of this host that no longer runs (killed with the lock held), or a pid now
 *   used by another process;
 * - unknown: no owner file (a lock being taken this instant, or of an earlier version, which
 *   recorded no start time), or another host. Such a lock goes stale by its age.
 */
export type LockHolder = "self" | "live" | "gone" | "unknown";

export function lockHolder(lockDir: string): LockHolder {
  const owner = readOwner(lockDir);
  if (!owner) return "unknown";
  if (owner.hostname && owner.hostname !== os.hostname()) return "unknown";
  if (!isClaimLive(owner.pid, owner.hostname, owner.identity)) return "gone";
  if (!owner.identity) return "unknown";
  return owner.pid === process.pid ? "self" : "live";
}

/**
 * The process on this host, not this one, that holds the lock in `lockDir` and since when (its
 * owner file's time: written when the lock was taken, never refreshed); undefined when none.
 */
export function otherLiveHolder(lockDir: string): { pid: number; since: number } | undefined {
  if (lockHolder(lockDir) !== "live") return undefined;
  const pid = lockHolderPid(lockDir);
  const since = fs.statSync(path.join(lockDir, OWNER_FILE), { throwIfNoEntry: false })?.mtimeMs;
  return pid === undefined || since === undefined ? undefined : { pid, since };
}

/** The pid a lock folder names (for messages), if any. */
export function lockHolderPid(lockDir: string): number | undefined {
  return readOwner(lockDir)?.pid;
}

function readOwner(lockDir: string): Owner | undefined {
  let owner: { pid?: unknown; hostname?: unknown; identity?: ProcessIdentity | null };
  try {
    owner = JSON.parse(fs.readFileSync(path.join(lockDir, OWNER_FILE), "utf8")) as typeof owner;
  } catch {
    return undefined;
  }
  if (typeof owner.pid !== "number") return undefined;
  return {
    pid: owner.pid,
    hostname: typeof owner.hostname === "string" ? owner.hostname : undefined,
    identity: typeof owner.identity === "object" && owner.identity ? owner.identity : undefined,
  };
}

/** Removes a lock folder and the owner file in it. */
function removeLockDir(lockDir: string): void {
  // One unlink (rmSync's force looked the file up twice first): this runs at every release.
  try {
    fs.unlinkSync(path.join(lockDir, OWNER_FILE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  fs.rmdirSync(lockDir);
}

const heldElsewhere = () =>
  Object.assign(new Error("The lock is held by another process."), { code: "ELOCKED" }) as NodeJS.ErrnoException;

/**
 * The file system calls proper-lockfile makes (mkdir, stat, utimes, rmdir on a lock folder),
 * done synchronously with the callback still called later. A checkpoint takes and releases the
 * repository lock every turn; each asynchronous call is a thread-pool round trip (0.3-1 ms on
 * these machines) where the synchronous one takes microseconds. One per lock: proper-lockfile
 * caches the file system's mtime precision on this object.
 *
 * The lock folder also names its holder (pid, host, boot id and start time). proper-lockfile
 * judges a lock by its folder's mtime (stale once not refreshed for `staleMs`); the holder's
 * name overrides that: a gone holder's lock reads as long unrefreshed (taken over at once), a
 * live one's as just refreshed, however long it was stopped (SIGSTOP, a loaded machine), so it
 * is never taken from a process that runs.
 */
export function syncLockFs(staleMs: number) {
  return {
    mkdir: (p: string, callback: Callback) =>
      settle(callback, () => {
        fs.mkdirSync(p);
        const owner = { pid: process.pid, hostname: os.hostname(), identity: currentProcessIdentity() };
        try {
          fs.writeFileSync(path.join(p, OWNER_FILE), JSON.stringify(owner), { mode: PRIVATE_FILE_MODE });
        } catch (err) {
          // A lock naming no holder could not be told from one being taken this instant.
          removeLockDir(p);
          throw err;
        }
      }),
    stat: (p: string, callback: Callback<fs.Stats>) =>
      settle(callback, () => {
        const stat = fs.statSync(p);
        const holder = lockHolder(p);
        if (holder === "self" || holder === "unknown") return stat;
        return Object.assign(Object.create(Object.getPrototypeOf(stat) as object) as fs.Stats, stat, {
          mtime: holder === "gone" ? new Date(0) : new Date(),
        });
      }),
    utimes: (p: string, atime: Date, mtime: Date, callback: Callback) =>
      settle(callback, () => fs.utimesSync(p, atime, mtime)),
    rmdir: (p: string, callback: Callback) =>
      settle(callback, () => {
        // Checked again here: two processes may both have found the lock stale, and the first
        // may have taken it since.
        const holder = lockHolder(p);
        if (holder === "live") throw heldElsewhere();
        if (holder === "unknown" && fs.statSync(p).mtimeMs >= Date.now() - staleMs) throw heldElsewhere();
        removeLockDir(p);
      }),
    rmdirSync: (p: string) => removeLockDir(p),
    realpath: (p: string, callback: Callback<string>) => settle(callback, () => fs.realpathSync(p)),
  };
}
