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

describe("what compare prints", () => {
  it("compare marks a changed file the checkpoints do not track, and its skip list leaves out what is listed as changed", async () => {
    const roots = makeTestRoots();
    // build/ and .env are left out by the built-in exclusions: a tool's edit of .env keeps its
    // earlier version (compared and restored); a command's change to build/out.txt does not.
    const workspace = makeWorkspace(roots.base, {
      "build/out.txt": "old build\n",
      ".env": "SECRET=original\n",
      "src/app.js": "console.log('app');\n",
    });
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: ".env", content: "SECRET=task\n" } }] },
        {
          toolCalls: [
            {
              name: "execute_command",
              input: { command: "printf 'changed by a command\\n' > build/out.txt", requires_approval: false },
            },
          ],
        },
        done,
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const task = await runCli(["task", "edit them", "--workspace", workspace, "--yes"], env);
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    const baseline = (await checkpointsOf(env, taskId)).find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;

    const { files, skipped } = JSON.parse((await runCli(["--json", "compare", taskId, baseline], env)).stdout) as {
      files: { path: string; status: string; notTracked?: boolean }[];
      skipped: { path: string }[];
    };
    expect(files.map((f) => [f.path, f.status, f.notTracked ?? false]).sort()).toEqual([
      [".env", "FILE_STATUS_MODIFIED", false],
      ["build/out.txt", "FILE_STATUS_MODIFIED", true],
    ]);
    expect(skipped.map((k) => k.path)).toContain(".env");

    const out = (await runCli(["compare", taskId, baseline], env)).stdout;
    expect(out).toMatch(/^ {2}modified {2}\.env\n/m);
    expect(out).toMatch(/^ {2}modified {2}build\/out\.txt {2}\(not tracked by checkpoints: not restored\)\n/m);
    // The skip list does not name again what is listed above, nor say that nothing there is compared.
    const header = /^Not tracked by checkpoints \((.*)\):\n {2}(.*)\n/m.exec(out);
    expect(header?.[1]).toBe(
      "excluded, ignored or too large; apart from the files listed above, changes there are not compared or restored",
    );
    expect(header?.[2]?.split(", ") ?? []).not.toContain(".env");
    expect(header?.[2]?.split(", ") ?? []).toContain("build");
  });
});
