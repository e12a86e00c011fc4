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

  it("compare names a change of permissions a command made: a private key opened to 644, a script made executable", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base, { "id.key": "private\n", "run.sh": "echo run\n" });
    fs.chmodSync(path.join(workspace, "id.key"), 0o600);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        {
          toolCalls: [
            {
              name: "execute_command",
              input: { command: "chmod 644 id.key && chmod +x run.sh", requires_approval: false },
            },
          ],
        },
        done,
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const task = await runCli(["task", "open them", "--workspace", workspace, "--yes"], env);
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    const baseline = (await checkpointsOf(env, taskId)).find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;

    const out = (await runCli(["compare", taskId, baseline], env)).stdout;
    expect(out).toMatch(/^ {2}modified {2}id\.key \(permissions 600 -> 644\)\n/m);
    expect(out).toMatch(/^ {2}modified {2}run\.sh \(permissions 644 -> 755\)\n/m);
    const { files, restorePaths } = JSON.parse((await runCli(["--json", "compare", taskId, baseline], env)).stdout) as {
      files: { path: string; modeBefore?: string; modeAfter?: string; before: string; after: string }[];
      restorePaths: string[];
    };
    expect(files.map((f) => [f.path, f.modeBefore, f.modeAfter, f.before === f.after]).sort()).toEqual([
      ["id.key", "600", "644", true],
      ["run.sh", "644", "755", true],
    ]);
    expect(restorePaths.sort()).toEqual(["id.key", "run.sh"]);
  });
});
