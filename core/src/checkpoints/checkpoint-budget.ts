import * as fs from "node:fs";
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
 * count is under budget. A repository not there counts 0. Synchronous, and only the fan-out
 * folders that exist: every task's completion asks (after a repack most are gone), and 257
 * thread-pool round trips cost more than the few hundred stats themselves.
 */
export function objectFileBytes(objectsDir: string): number {
  let total = 0;
  for (const name of readdirOrNone(objectsDir)) {
    if (!(name === "pack" || FAN_OUT.test(name))) continue;
    const folder = path.join(objectsDir, name);
    for (const file of readdirOrNone(folder)) {
      const st = fs.lstatSync(path.join(folder, file), { throwIfNoEntry: false });
      // Loose objects count by the blocks they take, as git counts them.
      if (st?.isFile()) total += Math.max(st.size, st.blocks * 512);
    }
  }
  return total;
}

const FAN_OUT = /^[0-9a-f]{2}$/;

function readdirOrNone(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
