/**
 * A task's status is in the history before any stream announces it. A window that sees a task
 * end may at once ask another sidecar to restore files, and that sidecar reads the history row
 * to know no task runs there: announced first and stored a moment later, the restore was
 * refused now and then ("... is running in this workspace") although the task had ended.
 *
 * The sidecar's app runs in this process here, so a subscriber reads the row the very moment
 * the event reaches it; through RPC that moment cannot be held.
 */
import * as fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../core/src/app.js";
import { Lifecycle } from "../../core/src/lifecycle.js";
import { createLogger } from "../../core/src/logging/logger.js";
import { getDlineDataDir, getDlineHomePath } from "../../core/src/storage/roots.js";
import { makeTestRoots } from "../helpers/sidecar.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeWorkspace, TEST_KEY } from "./harness.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startInProcess(server: ModelServerProcess) {
  const roots = makeTestRoots("dline-status-first-");
  const env = { ...roots.env, OPENAI_BASE_URL: server.url, OPENAI_API_KEY: TEST_KEY, OPENAI_MODEL: "scripted-model" };
  const logger = createLogger({ write: () => undefined, close: () => undefined });
  const lifecycle = new Lifecycle(logger, () => undefined);
  const app = await createApp({
    roots: { dataRoot: getDlineDataDir(env), homeRoot: getDlineHomePath(env), documentsRoot: roots.docsDir },
    logger,
    logFile: undefined,
    lifecycle,
    env,
  });
  cleanups.push(async () => {
    await lifecycle.stop("test over");
    fs.rmSync(roots.base, { recursive: true, force: true });
  });
  return { app, workspace: makeWorkspace(roots.base) };
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
