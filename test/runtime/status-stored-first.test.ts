/**
 * A task's status is in the history before any stream announces it. A window that sees a task
 * end may at once ask another sidecar to restore files, and that sidecar reads the history row
 * to know no task runs there: announced first and stored a moment later, the restore was
 * refused now and then ("... is running in this workspace") although the task had ended.
 *
 * The sidecar's app runs in this process here, so a subscriber reads the row the very moment
 * the event reaches it; through RPC that moment cannot be held.
 */
import { afterEach, describe, expect, it } from "vitest";
import { makeTestRoots } from "../helpers/sidecar.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { TEST_KEY } from "./harness.js";
import { startAppInProcess } from "./in-process-app.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startInProcess(server: ModelServerProcess) {
  const started = await startAppInProcess(makeTestRoots("dline-status-first-"), server.url);
  cleanups.push(started.stop);
  return started;
}

describe("a task's status", () => {
  it("is in the history row when a subscriber hears of it, at each change", async () => {
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        { toolCalls: [{ name: "execute_command", input: { command: "echo hi", requires_approval: true } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] },
      ],
    });
    cleanups.push(() => server.stop());
    const { app, workspace } = await startInProcess(server);
    const runtime = await app.runtime();
    const { history } = await app.tasks();

    const taskId = await runtime.newTask(workspace, "Run it", "env-openai");
    const seen: { announced: string; stored: string | undefined }[] = [];
    const stop = new AbortController();
    for await (const e of runtime.subscribe(taskId, 0n, stop.signal)) {
      if (e.event.case !== "statusChanged") continue;
      const announced = e.event.value.status;
      seen.push({ announced, stored: history.get(taskId)?.status });
      if (announced === "waiting") runtime.respond(taskId, runtime.pendingAsk(taskId)!.askId, true, "");
      if (announced === "completed") break;
    }
    stop.abort();

    expect(seen.map((s) => s.announced)).toEqual(["running", "waiting", "running", "completed"]);
    for (const { announced, stored } of seen) expect(stored).toBe(announced);
  });
});
