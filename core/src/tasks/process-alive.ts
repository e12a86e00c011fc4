import * as fs from "node:fs";
import * as os from "node:os";

/**
 * True when a process with this pid runs (EPERM means it exists but is not ours). A zombie (a
 * killed process its parent has not reaped yet) has closed its files and sockets already: it
 * counts as gone, so that the sidecars following its tasks take them over at once.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !isZombie(pid);
}

/** Linux: the state letter of /proc/<pid>/stat (after the command name, which may hold ")"). */
function isZombie(pid: number): boolean {
  if (process.platform !== "linux") return false;
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return false; // gone meanwhile (the next check says so), or /proc is not mounted
  }
  const state = stat.charAt(stat.lastIndexOf(")") + 2);
  return state === "Z" || state === "X";
}

/**
 * What tells one process from a later one that got the same pid (after it died, or after a
 * reboot: pids restart low, so a container's sidecar often gets its predecessor's pid). Linux:
 * the boot's id and the process's start time in clock ticks since boot (/proc/<pid>/stat, field
 * 22). Elsewhere, or without /proc: empty, and a claim falls back to the pid alone.
 */
export interface ProcessIdentity {
  bootId?: string;
  startTicks?: number;
}

let ownIdentity: ProcessIdentity | undefined;

/** This process's identity, recorded in the claims it writes. */
export function currentProcessIdentity(): ProcessIdentity {
  if (!ownIdentity) {
    const bootId = readBootId();
    const startTicks = readStartTicks(process.pid);
    ownIdentity = {
      ...(bootId !== undefined ? { bootId } : {}),
      ...(startTicks !== undefined ? { startTicks } : {}),
    };
  }
  return ownIdentity;
}

function readBootId(): string | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    const id = fs.readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim();
    return id || undefined;
  } catch {
    return undefined;
  }
}

/** Linux: field 22 of /proc/<pid>/stat (start time after boot, in clock ticks). */
function readStartTicks(pid: number): number | undefined {
  if (process.platform !== "linux") return undefined;
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces and ")"): state is field 3.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[22 - 3]);
  return Number.isSafeInteger(ticks) ? ticks : undefined;
}

/**
 * A claim made by `pid` on `hostname` is live if that process still runs (another host: assume
 * it does). With the claimer's `identity` (recorded by this version), a process that merely got
 * the same pid does not count: a claim from an earlier boot is dead, and so is one whose pid now
 * belongs to a process that started at another time.
 */
export function isClaimLive(pid: number, hostname: string | undefined, identity?: ProcessIdentity): boolean {
  if (hostname && hostname !== os.hostname()) return true;
  const own = currentProcessIdentity();
  // This process's own pid: it runs, and its identity is known without reading /proc (a lock's
  // holder is checked this way at each take and release of the checkpoints' lock).
  if (pid === process.pid) return !identity || sameProcess(identity, own);
  if (!isProcessAlive(pid)) return false;
  if (!identity) return true;
  if (identity.bootId !== undefined && own.bootId !== undefined && identity.bootId !== own.bootId) return false;
  if (identity.startTicks !== undefined) {
    const ticks = readStartTicks(pid);
    if (ticks !== undefined && ticks !== identity.startTicks) return false;
  }
  return true;
}

/** Whether a recorded identity is this one's, as isClaimLive compares another pid's (fields both sides know). */
function sameProcess(identity: ProcessIdentity, own: ProcessIdentity): boolean {
  if (identity.bootId !== undefined && own.bootId !== undefined && identity.bootId !== own.bootId) return false;
  return identity.startTicks === undefined || own.startTicks === undefined || identity.startTicks === own.startTicks;
}

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
