/**
 * The turn loop tells the checkpoints when a command starts: a command that runs a while gets
 * the workspace watched, and scanned, while it runs, so the save after it stages only what
 * changed. Before, the save after a process's first command walked the workspace for the watch
 * and then scanned it (the shadow index restaged).
 *
 * The sidecar's app runs in this process, so the test knows when the checkpoints' background
 * work is over; the command waits for a file outside the workspace that the test writes then.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { indexWriteStamp } from "../helpers/shadow-index.js";
import { makeTestRoots } from "../helpers/sidecar.js";
import { spawnModelServer } from "../model-server/spawn.js";
import { TEST_KEY } from "./harness.js";
import { startAppInProcess } from "./in-process-app.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The last write of the workspace's shadow index (a scan restages into it). */
function shadowIndexTime(docsDir: string): string {
  const repos = fs.readdirSync(path.join(docsDir, "checkpoints")).filter((n) => /^[0-9a-f]+$/.test(n));
  expect(repos).toHaveLength(1);
  return indexWriteStamp(path.join(docsDir, "checkpoints", repos[0]!, ".git", "index"));
}

describe("a command that runs a while", () => {
  it("is watched while it runs: the save after it does not scan, and holds what it changed", async () => {
    const roots = makeTestRoots("dline-command-watch-");
    const go = path.join(roots.base, "go");
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        {
          toolCalls: [
            {
              name: "execute_command",
              input: {
                command: `while [ ! -e '${go}' ]; do sleep 0.02; done; echo changed >> src/app.txt; mkdir -p made && echo made > made/new.txt`,
                requires_approval: false,
              },
            },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] },
      ],
    });
    cleanups.push(() => server.stop());
    const { app, workspace, stop: stopApp } = await startAppInProcess(roots, server.url);
    cleanups.push(stopApp);
    const runtime = await app.runtime();
    const taskId = await runtime.newTask(workspace, "Build it", "env-openai");

    let indexBefore = "";
    const stop = new AbortController();
    for await (const e of runtime.subscribe(taskId, 0n, stop.signal)) {
      if (e.event.case === "toolStarted") {
        // The watch and its scan run while the command waits.
        await app.checkpoints.idle();
        indexBefore = shadowIndexTime(roots.docsDir);
        fs.writeFileSync(go, "");
      }
      if (e.event.case !== "statusChanged") continue;
      if (e.event.value.status === "waiting") runtime.respond(taskId, runtime.pendingAsk(taskId)!.askId, true, "");
      if (e.event.value.status === "completed") break;
    }
    stop.abort();

    const checkpoints = await app.checkpoints.list(taskId);
    const baseline = checkpoints.find((c) => c.kind === "baseline")!;
    const turn = checkpoints.find((c) => c.kind === "turn")!;
    // Before: that save walked the workspace for the watch, then scanned it (the index restaged).
    expect(shadowIndexTime(roots.docsDir)).toBe(indexBefore);
    // The turn's checkpoint holds what the command changed: the workspace differs from it in nothing.
    expect((await app.checkpoints.compare(taskId, turn.id)).files).toEqual([]);
    const { files } = await app.checkpoints.compare(taskId, baseline.id);
    expect(files.map((f) => [f.path, f.status]).sort()).toEqual([
      ["made/new.txt", "added"],
      ["src/app.txt", "modified"],
    ]);
  });
});
