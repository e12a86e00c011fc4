/**
 * The git processes the checkpoints of this sidecar started. Each runs in a process group of
 * its own (git gc and repack start children of their own), so that stopping one stops all of
 * it: on a task's cancel, when the sidecar stops (its stdin closed, SIGTERM, Shutdown) and when
 * the sidecar's process exits for any other reason (an uncaught error). A sidecar killed with
 * SIGKILL runs no code: what it had started is left to end on its own.
 */
export class GitChildren {
  private readonly groups = new Set<number>();
  private readonly onExit = () => this.killAll();

  /** A child started with `detached: true` (its pid is its process group). */
  add(pid: number): void {
    if (this.groups.size === 0) process.on("exit", this.onExit);
    this.groups.add(pid);
  }

  /** The child ended. */
  remove(pid: number): void {
    this.groups.delete(pid);
    if (this.groups.size === 0) process.off("exit", this.onExit);
  }

  /** Kills a child's whole process group (synchronous: also safe in an `exit` handler). */
  kill(pid: number): void {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }

  killAll(): void {
    for (const pid of this.groups) this.kill(pid);
  }

  /** How many children run now. */
  get running(): number {
    return this.groups.size;
  }
}
