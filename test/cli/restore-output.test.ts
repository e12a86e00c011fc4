import { execFile } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots, repoRoot } from "../helpers/sidecar.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { captured } from "../helpers/items.js";
import { cliEnv } from "../helpers/cli-child.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

const done = { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] };

async function checkpointsOf(env: NodeJS.ProcessEnv, taskId: string): Promise<{ id: string; kind: string }[]> {
  return (
    JSON.parse((await run(cli, ["--json", "checkpoints", taskId], { env })).stdout) as {
      checkpoints: { id: string; kind: string }[];
    }
  ).checkpoints;
}

describe("what restore prints", () => {
  it("a files-and-task restore says the conversation was restored, as a task restore does", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base, { "notes.md": "# notes\n" });
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [{ toolCalls: [{ name: "write_to_file", input: { path: "notes.md", content: "# edited\n" } }] }, done],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const task = await run(cli, ["task", "edit the notes", "--workspace", workspace, "--yes"], { env });
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    const checkpoints = await checkpointsOf(env, taskId);
    const baseline = checkpoints.find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;
    const turn = checkpoints.find((c) => c.kind !== "CHECKPOINT_KIND_BASELINE")!.id;
    const messages = async () =>
      (JSON.parse((await run(cli, ["--json", "show", taskId], { env })).stdout) as { messages: unknown[] }).messages
        .length;
    const before = await messages();

    const taskOnly = (await run(cli, ["restore", taskId, turn, "--mode", "task"], { env })).stdout;
    expect(taskOnly).toMatch(/^conversation restored\b.*\n$/);
    const cut = await messages();
    expect(cut).toBeLessThan(before);

    const both = (await run(cli, ["restore", taskId, baseline, "--mode", "files-and-task"], { env })).stdout;
    expect(both.split("\n")[0]).toBe(
      "restored 1 file(s), deleted 0; conversation restored (cut back to the checkpoint)",
    );
    expect(both).toContain("  restored: notes.md\n");
    expect(await messages()).toBeLessThan(cut);

    const filesOnly = (await run(cli, ["restore", taskId, baseline, "--mode", "files"], { env })).stdout;
    expect(filesOnly.split("\n")[0]).toBe("restored 0 file(s), deleted 0");
  });
});
