/**
 * `dline resume T --message M` while T runs in another window: two `dline` processes, each with
 * its own sidecar over the same roots, the scripted model server. The message goes to the
 * sidecar that runs the task (it is queued there), and both commands follow the task until it
 * has answered it: neither takes the completion of the run before the message for the end.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots, repoRoot } from "../helpers/sidecar.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { cliEnv, startCli, type CliChild } from "../helpers/cli-child.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
const children: CliChild[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.stop()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

interface ShownMessage {
  role: string;
  kind: string;
  text: string;
}

describe("dline resume --message on a task another dline runs", () => {
  it("the message is queued for the window running the task, which answers it; both commands follow to that answer", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        { toolCalls: [{ name: "attempt_completion", input: { result: "first done" } }] },
        // The run of "msg one": a command that holds the run until the test lets it go.
        {
          toolCalls: [
            {
              name: "execute_command",
              input: { command: "touch holding; while [ ! -e go ]; do sleep 0.05; done", requires_approval: false },
            },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "one done" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "two done" } }] },
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const first = await run(cli, ["--json", "task", "first", "--workspace", workspace, "--yes"], { env });
    const taskId = JSON.parse(first.stdout.split("\n")[0]!).taskId as string;

    const owner = startCli(["resume", taskId, "--message", "msg one", "--yes"], env);
    children.push(owner);
    await expect.poll(() => fs.existsSync(path.join(workspace, "holding")), { timeout: 60_000 }).toBe(true);

    // A second window (its own sidecar) sends a message while the first one runs the task.
    const other = startCli(["resume", taskId, "--message", "msg two", "--yes"], env);
    children.push(other);
    const stateFile = path.join(roots.docsDir, "tasks", taskId, "state.json");
    const queued = () => (JSON.parse(fs.readFileSync(stateFile, "utf8")) as { inputQueue: string[] }).inputQueue;
    await expect.poll(queued, { timeout: 60_000 }).toEqual(["msg two"]);
    fs.writeFileSync(path.join(workspace, "go"), "");

    expect(await other.exited, other.output()).toBe(0);
    expect(await owner.exited, owner.output()).toBe(0);
    // The second command shows the answer to its message, and no earlier completion as its end.
    expect(other.stdout()).toContain("two done");
    expect(other.stdout().match(/\[completed/g), other.stdout()).toHaveLength(1);
    expect(owner.stdout()).toContain("two done");

    const shown = JSON.parse((await run(cli, ["--json", "show", taskId], { env })).stdout) as {
      messages: ShownMessage[];
    };
    const said = shown.messages
      .filter((m) => (m.role === "MESSAGE_ROLE_USER" && m.kind === "text") || m.kind === "completion")
      .map((m) => m.text);
    expect(said).toEqual(["first", "first done", "msg one", "one done", "msg two", "two done"]);
    const history = JSON.parse((await run(cli, ["--json", "history"], { env })).stdout) as {
      tasks: { id: string; status: string }[];
    };
    expect(history.tasks.find((t) => t.id === taskId)?.status).toBe("TASK_STATUS_COMPLETED");
  });
});
