import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
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

describe("a restore of many files", () => {
  // It ended with "restored: and 10 more", which read as a file named "and 10 more".
  it("names the first 50 of each list, then says how many more", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        {
          toolCalls: [
            {
              name: "execute_command",
              input: { command: "for i in $(seq 1 60); do echo $i > made$i.txt; done", requires_approval: false },
            },
          ],
        },
        done,
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const task = await runCli(["task", "make sixty", "--workspace", workspace, "--yes"], env);
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    const baseline = (await checkpointsOf(env, taskId)).find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;
    const out = (await runCli(["restore", taskId, baseline, "--mode", "files"], env)).stdout;
    expect(out.split("\n")[0]).toBe("restored 0 file(s), deleted 60");
    expect(out.match(/^ {2}deleted: made\d+\.txt$/gm)).toHaveLength(50);
    expect(out).toContain("\n  and 10 more deleted\n");
  });
});

describe("a restore after the task moved the person's git history", () => {
  // Found in a bug hunt: a task's `git reset --hard HEAD~1` stayed after a restore, unsaid.
  it("prints a note that a restore puts files back, never commits, branches or the index", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base, { "a.txt": "one\n" });
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
        cwd: workspace,
        encoding: "utf8",
      }).trim();
    if (!fs.existsSync(path.join(workspace, ".git"))) git("init", "-q");
    git("add", "a.txt");
    git("commit", "-qm", "one");
    fs.writeFileSync(path.join(workspace, "a.txt"), "two\n");
    git("commit", "-qam", "two");
    const then = git("rev-parse", "HEAD");
    const branch = git("rev-parse", "--abbrev-ref", "HEAD");
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        {
          toolCalls: [
            { name: "execute_command", input: { command: "git reset -q --hard HEAD~1", requires_approval: false } },
          ],
        },
        done,
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const task = await runCli(["task", "reset", "--workspace", workspace, "--yes"], env);
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    const now = git("rev-parse", "HEAD");
    const baseline = (await checkpointsOf(env, taskId)).find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;
    const restored = (await runCli(["restore", taskId, baseline, "--mode", "files"], env)).stdout;
    expect(restored).toContain("  restored: a.txt\n");
    expect(restored).toContain(
      `note: Your git repository moved since this checkpoint (${branch} at ${then.slice(0, 8)} then, ${branch} at ${now.slice(0, 8)} now): a restore puts files back, never commits, branches or the index.\n`,
    );
    expect(fs.readFileSync(path.join(workspace, "a.txt"), "utf8")).toBe("two\n");
  });
});
