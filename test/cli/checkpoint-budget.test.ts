/**
 * The shadow repository's size budget (setting checkpointRepoBudgetBytes) over short tasks: each
 * `dline task` is a process of its own with a handful of saves. The check ran every 25 saves of
 * a process, so such runs never checked: 12 tasks each writing 1 MB of data left 36 checkpoints
 * and 13 MB of objects under a 3 MB budget.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots } from "../helpers/sidecar.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { checkpointsOf, cliEnv, runCli } from "../helpers/cli-child.js";

const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

describe("the checkpoint size budget over short CLI tasks", () => {
  it("tasks of three saves each, every one writing 200 KB of fresh data: the oldest finished task's checkpoints go once the budget is passed", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    // Data that does not compress: each task's snapshot adds about as much to the repository.
    const command = "head -c 200000 /dev/urandom | base64 > data.txt";
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      loop: true,
      turns: [
        { toolCalls: [{ name: "execute_command", input: { command, requires_approval: false } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    await runCli(["settings", "set", "checkpointRepoBudgetBytes", "500000"], env);
    const tasks: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { stderr } = await runCli(["task", `write data ${i}`, "--workspace", workspace, "--yes"], env);
      tasks.push(/^task (\S+)$/m.exec(stderr)![1]!);
    }
    // The first task's snapshots hold data the later ones replaced: those went to keep the budget.
    expect(await checkpointsOf(env, tasks[0]!)).toEqual([]);
    // The last task is whole.
    expect((await checkpointsOf(env, tasks[3]!)).map((c) => c.kind)).toEqual([
      "CHECKPOINT_KIND_BASELINE",
      "CHECKPOINT_KIND_TURN",
      "CHECKPOINT_KIND_COMPLETION",
    ]);
    expect(fs.readFileSync(path.join(workspace, "data.txt"), "utf8").length).toBeGreaterThan(200_000);
  });
});
