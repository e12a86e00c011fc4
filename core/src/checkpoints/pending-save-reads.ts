/**
 * What each task's saves under way (queued or running) will read from the work tree: the paths a
 * turn's editing tools recorded, or "scan" for a save that reads more (after a command, a
 * completion, a compaction). An edit of a file none of them reads need not wait for them: what
 * they save of that file is what the task's newest checkpoint holds already.
 *
 * Paths are repository paths (workspace-relative, `/`-separated).
 */
export class PendingSaveReads {
  /** One entry per save (an object each: two saves that scan are two entries). */
  private readonly byTask = new Map<string, Set<{ reads: ReadonlySet<string> | "scan" }>>();

  /** A save was queued; call the answer when it has ended (whatever its outcome). */
  add(taskId: string, reads: readonly string[] | "scan"): () => void {
    const entry = { reads: reads === "scan" ? ("scan" as const) : new Set(reads) };
    let saves = this.byTask.get(taskId);
    if (!saves) this.byTask.set(taskId, (saves = new Set()));
    saves.add(entry);
    return () => {
      saves.delete(entry);
      if (!saves.size && this.byTask.get(taskId) === saves) this.byTask.delete(taskId);
    };
  }

  /** Whether no save of the task under way reads any of these paths or scans. */
  leaveAlone(taskId: string, paths: readonly string[]): boolean {
    for (const { reads } of this.byTask.get(taskId) ?? []) {
      if (reads === "scan" || paths.some((p) => reads.has(p))) return false;
    }
    return true;
  }
}
