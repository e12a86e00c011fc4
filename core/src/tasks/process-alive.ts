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

/** A claim made by `pid` on `hostname` is live if that process still runs (another host: assume it does). */
export function isClaimLive(pid: number, hostname: string | undefined): boolean {
  if (hostname && hostname !== os.hostname()) return true;
  return isProcessAlive(pid);
}

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
