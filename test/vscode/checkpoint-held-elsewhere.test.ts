/**
 * Compare, Restore (and its Undo), Restore All and View Changes in VS Code wait while another
 * Dline window holds the workspace's checkpoint repository (its baseline of a large workspace, a
 * restore), up to two minutes: the person saw nothing happen. The chat controller runs each
 * action's checkpoint calls through HeldElsewhere (held-elsewhere.ts), which shows the core's
 * sentence, naming that window's process, once per action as a progress notification until the
 * call answers. Real sidecar process; the other window is a separate node process holding the
 * real repository lock (the checkpoint tests' driver).
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { HeldElsewhere } from "../../adapters/vscode/src/checkpoints/held-elsewhere.js";
import type { DlineClients } from "../../core/src/client/index.js";
import { buildDriver, holding, runDriver } from "../checkpoints/driver-process.js";
import type { Sandbox } from "../checkpoints/helpers.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { openWindows, watch } from "../tasks/follow-helpers.js";

const scope = scopedSidecars();
const holders: ReturnType<typeof runDriver>[] = [];
beforeAll(buildDriver);
afterEach(() => {
  for (const h of holders.splice(0)) h.child.kill("SIGKILL");
});

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** An action's HeldElsewhere as the controller makes it, with what it showed and whether that ended. */
function action(clients: DlineClients, taskId: string) {
  const shown: { sentence: string; ended: boolean }[] = [];
  const waiting = new HeldElsewhere(
    async () => (await clients.checkpoints.getStatus({ taskId })).waitingForPid,
    (sentence) => {
      const notice = { sentence, ended: false };
      shown.push(notice);
      return { end: () => (notice.ended = true) };
    },
  );
  return { waiting, shown };
}

describe("a VS Code checkpoint action while another window holds the checkpoint repository", () => {
  it("says once, until the calls answer, that it waits for that window by its process id; then goes on", async () => {
    const done = { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] };
    const { roots, sidecars, workspace, profileId } = await openWindows(scope, 1, [done]);
    const [{ clients }] = sidecars;
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "One", profileId });
    const events = watch(clients, taskId);
    await events.completedAfter(0n);
    await events.stop();
    const baseline = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints[0]!;

    // Another window over the same roots takes the repository's lock and keeps it.
    const holder = runDriver({ base: roots.base, home: roots.home, workspace } as Sandbox, "other-window", 0, [], {
      holdLock: true,
    });
    holders.push(holder);
    await holding(holder);

    // A restore's calls: its list, then the Compare of its question, both waiting.
    const restore = action(clients, taskId);
    const listing = restore.waiting.during(() => clients.checkpoints.listCheckpoints({ taskId }));
    const comparing = restore.waiting.during(() => clients.checkpoints.compare({ taskId, checkpointId: baseline.id }));
    await until(() => restore.shown.length > 0, "the wait to be shown");
    expect(restore.shown).toEqual([
      {
        sentence: `Checkpoints are waiting for another Dline window using this workspace's checkpoints (process ${holder.child.pid}).`,
        ended: false,
      },
    ]);

    // The other window goes (killed: its lock is taken over at once); the calls answer.
    holder.child.kill("SIGKILL");
    expect((await listing).checkpoints.map((c) => c.id)).toContain(baseline.id);
    expect((await comparing).files).toEqual([]);
    expect(restore.shown).toHaveLength(1);
    expect(restore.shown[0]!.ended).toBe(true);

    // Nothing holds it now: the status names no process, and the next action shows nothing.
    expect((await clients.checkpoints.getStatus({ taskId })).waitingForPid).toBe(0);
    const next = action(clients, taskId);
    await next.waiting.during(() => clients.checkpoints.compare({ taskId, checkpointId: baseline.id }));
    expect(next.shown).toEqual([]);
  });
});
