import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots } from "../helpers/sidecar.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { captured } from "../helpers/items.js";
import { checkpointsOf, cliEnv, runCli } from "../helpers/cli-child.js";

const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

const done = { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] };

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
    const task = await runCli(["task", "edit the notes", "--workspace", workspace, "--yes"], env);
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    const checkpoints = await checkpointsOf(env, taskId);
    const baseline = checkpoints.find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;
    const turn = checkpoints.find((c) => c.kind !== "CHECKPOINT_KIND_BASELINE")!.id;
    const messages = async () =>
      (JSON.parse((await runCli(["--json", "show", taskId], env)).stdout) as { messages: unknown[] }).messages.length;
    const before = await messages();

    const taskOnly = (await runCli(["restore", taskId, turn, "--mode", "task"], env)).stdout;
    expect(taskOnly).toMatch(/^conversation restored\b.*\n$/);
    const cut = await messages();
    expect(cut).toBeLessThan(before);

    const both = (await runCli(["restore", taskId, baseline, "--mode", "files-and-task"], env)).stdout;
    expect(both.split("\n")[0]).toBe(
      "restored 1 file(s), deleted 0; conversation restored (cut back to the checkpoint)",
    );
    expect(both).toContain("  restored: notes.md\n");
    expect(await messages()).toBeLessThan(cut);

    const filesOnly = (await runCli(["restore", taskId, baseline, "--mode", "files"], env)).stdout;
    expect(filesOnly.split("\n")[0]).toBe("restored 0 file(s), deleted 0");
  });
});
