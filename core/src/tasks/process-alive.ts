import * as os from "node:os";

/** True when a process with this pid exists (EPERM means it exists but is not ours). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A claim made by `pid` on `hostname` is live if that process still runs (another host: assume it does). */
export function isClaimLive(pid: number, hostname: string | undefined): boolean {
  if (hostname && hostname !== os.hostname()) return true;
  return isProcessAlive(pid);
}

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
