import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PRIVATE_FILE_MODE } from "../storage/index.js";
import { isClaimLive } from "../tasks/index.js";

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

/**
 * Whether the lock folder names a holder that is gone: a process of this host that no longer
 * runs (killed with the lock held). Unknown (no owner file: a lock of an earlier version, or one
 * being taken this instant; another host; a pid in use again) is not gone: the lock then goes
 * stale by its age, as proper-lockfile decides.
 */
function holderIsGone(lockDir: string): boolean {
  const owner = readOwner(lockDir);
  if (!owner || owner.pid === process.pid) return false;
  return !isClaimLive(owner.pid, owner.hostname);
}

/** The holder a lock folder names; undefined when it names none (or not readably). */
function readOwner(lockDir: string): { pid: number; hostname: string | undefined } | undefined {
  let owner: { pid?: unknown; hostname?: unknown };
  try {
    owner = JSON.parse(fs.readFileSync(path.join(lockDir, OWNER_FILE), "utf8")) as typeof owner;
  } catch {
    return undefined;
  }
  if (typeof owner.pid !== "number") return undefined;
  return { pid: owner.pid, hostname: typeof owner.hostname === "string" ? owner.hostname : undefined };
}

/** Removes a lock folder and the owner file in it. */
function removeLockDir(lockDir: string): void {
  fs.rmSync(path.join(lockDir, OWNER_FILE), { force: true });
  fs.rmdirSync(lockDir);
}

/**
 * The file system calls proper-lockfile makes (mkdir, stat, utimes, rmdir on a lock folder),
 * done synchronously with the callback still called later. A checkpoint takes and releases the
 * repository lock every turn; each asynchronous call is a thread-pool round trip (0.3-1 ms on
 * these machines) where the synchronous one takes microseconds. One per lock: proper-lockfile
 * caches the file system's mtime precision on this object.
 *
 * The lock folder also names its holder (pid and host), so a lock whose holder was killed is
 * taken over at once instead of after `staleMs` (10 s): its stat then reads as long unrefreshed.
 */
export function syncLockFs(staleMs: number) {
  return {
    mkdir: (p: string, callback: Callback) =>
      settle(callback, () => {
        fs.mkdirSync(p);
        try {
          fs.writeFileSync(path.join(p, OWNER_FILE), JSON.stringify({ pid: process.pid, hostname: os.hostname() }), {
            mode: PRIVATE_FILE_MODE,
          });
        } catch {
          // Without it the lock still works; a killed holder's lock goes stale by its age.
        }
      }),
    stat: (p: string, callback: Callback<fs.Stats>) =>
      settle(callback, () => {
        const stat = fs.statSync(p);
        if (!holderIsGone(p)) return stat;
        return Object.assign(Object.create(Object.getPrototypeOf(stat) as object) as fs.Stats, stat, {
          mtime: new Date(0),
        });
      }),
    utimes: (p: string, atime: Date, mtime: Date, callback: Callback) =>
      settle(callback, () => fs.utimesSync(p, atime, mtime)),
    rmdir: (p: string, callback: Callback) =>
      settle(callback, () => {
        // Two processes may both have found the lock stale: the second must not remove the lock
        // the first has taken since (a live holder's, refreshed).
        const owner = readOwner(p)?.pid;
        const taken =
          owner !== undefined &&
          owner !== process.pid &&
          !holderIsGone(p) &&
          fs.statSync(p).mtimeMs >= Date.now() - staleMs;
        if (taken)
          throw Object.assign(new Error("The lock was taken by another process meanwhile."), { code: "ELOCKED" });
        removeLockDir(p);
      }),
    rmdirSync: (p: string) => removeLockDir(p),
    realpath: (p: string, callback: Callback<string>) => settle(callback, () => fs.realpathSync(p)),
  };
}
