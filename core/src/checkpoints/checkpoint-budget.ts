import * as fs from "node:fs/promises";
import * as path from "node:path";
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

/**
 * The bytes of a repository's object files (loose and packs, with their indexes), read without
 * git: never less than what `git count-objects` reports, so a repository under budget by this
 * count is under budget. A repository not there counts 0.
 */
export async function objectFileBytes(objectsDir: string): Promise<number> {
  const sizesIn = async (dir: string): Promise<number> => {
    const names = await fs.readdir(dir).catch(() => [] as string[]);
    const sizes = await Promise.all(
      names.map((n) =>
        fs.lstat(path.join(dir, n)).then(
          // Loose objects count by the blocks they take, as git counts them.
          (st) => (st.isFile() ? Math.max(st.size, st.blocks * 512) : 0),
          () => 0,
        ),
      ),
    );
    return sizes.reduce((a, b) => a + b, 0);
  };
  const fanOut = Array.from({ length: 256 }, (_, i) => path.join(objectsDir, i.toString(16).padStart(2, "0")));
  const totals = await Promise.all([path.join(objectsDir, "pack"), ...fanOut].map(sizesIn));
  return totals.reduce((a, b) => a + b, 0);
}
