import type { CheckpointLog } from "./checkpoint-log.js";
import type { CheckpointInfo } from "./checkpoint-record.js";
import type { ShadowRepo } from "./shadow-repo.js";

export type TaskState = "running" | "finished" | "deleted";

/**
 * The size budget of one shadow repository: while its objects exceed `budgetBytes`, deletes
 * the oldest checkpoints of deleted tasks, then of finished tasks, never a running task's,
 * pruning between rounds. Callers hold the repository lock. Returns the ids removed. Packing
 * under budget is not done here but in the background, outside the lock (pack-maintenance.ts).
 */
export async function enforceBudget(
  repo: ShadowRepo,
  log: CheckpointLog,
  budgetBytes: number,
  stateOf: (taskId: string) => Promise<TaskState>,
): Promise<string[]> {
  const removed: string[] = [];
  for (let round = 0; round < 12; round++) {
    if ((await repo.objectBytes()) <= budgetBytes) break;
    const all = await log.listAll();
    const states = new Map<string, TaskState>();
    for (const c of all) if (!states.has(c.task)) states.set(c.task, await stateOf(c.task));
    const byAge = (a: CheckpointInfo, b: CheckpointInfo) => a.createdAt - b.createdAt;
    const deleted = all.filter((c) => states.get(c.task) === "deleted").sort(byAge);
    const finished = all.filter((c) => states.get(c.task) === "finished").sort(byAge);
    const pool = deleted.length ? deleted : finished;
    if (!pool.length) break;
    const batch = pool.slice(0, Math.max(1, Math.ceil(pool.length / 4)));
    await log.deleteRefs(batch.map((c) => c.ref));
    removed.push(...batch.map((c) => c.id));
    await repo.git.command(["gc", "--prune=now", "--quiet"]);
  }
  return removed;
}
