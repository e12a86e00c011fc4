import * as fs from "node:fs";

/**
 * Whether a process still runs. A zombie counts as gone: a killed orphan waits as one until
 * init reaps it, and kill(pid, 0) still succeeds on it.
 */
export function isRunning(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}
