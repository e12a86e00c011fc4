import { execFile } from "node:child_process";
import * as fs from "node:fs";
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

/** A project with an ignored `.env`, a `build/` output, an installed package and a source file. */
function project(base: string): string {
  const workspace = makeWorkspace(base, {
    ".gitignore": ".env\nnode_modules/\n",
    ".env": "SECRET=original\n",
    "build/out.txt": "old build\n",
    "node_modules/x/index.js": "module.exports = 1;\n",
    "node_modules/x/package.json": '{"name":"x"}\n',
    "src/app.js": "console.log('app');\n",
  });
  // Installed long before the task (an untouched ignored file must not be named).
  const old = new Date(Date.now() - 3_600_000);
  for (const f of ["node_modules/x/index.js", "node_modules/x/package.json"])
    fs.utimesSync(path.join(workspace, f), old, old);
  return workspace;
}

/** The command a task runs: changes files the checkpoints do not track, and one they do. */
const COMMAND =
  "printf 'SECRET=from-command\\n' > .env && printf 'new build\\n' > build/out.txt && printf 'changed\\n' >> src/app.js";

async function baselineOf(env: NodeJS.ProcessEnv, taskId: string): Promise<string> {
  const { checkpoints } = JSON.parse((await run(cli, ["--json", "checkpoints", taskId], { env })).stdout) as {
    checkpoints: { id: string; kind: string }[];
  };
  return checkpoints.find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;
}

/** A task that runs COMMAND, then completes, through the CLI. */
async function commandTask(roots: ReturnType<typeof makeTestRoots>, workspace: string) {
  const server = await spawnModelServer({
    apiKey: TEST_KEY,
    turns: [
      { toolCalls: [{ name: "execute_command", input: { command: COMMAND, requires_approval: false } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
    ],
  });
  servers.push(server);
  const env = cliEnv(roots, server);
  const task = await run(cli, ["task", "build it", "--workspace", workspace, "--yes"], { env });
  return { env, taskId: captured(/task (\S+)/.exec(task.stderr), "the task id on stderr") };
}

describe("a files restore names what the checkpoints do not track and a command changed", () => {
  it("a command changed .env and build/out.txt: Restore Files Only to the baseline lists both as not tracked, not node_modules, and leaves their bytes", async () => {
    const roots = makeTestRoots();
    const workspace = project(roots.base);
    const { env, taskId } = await commandTask(roots, workspace);
    const baseline = await baselineOf(env, taskId);

    const restored = JSON.parse(
      (await run(cli, ["--json", "restore", taskId, baseline, "--mode", "files"], { env })).stdout,
    ) as { restoredPaths: string[]; keptPaths: { path: string; reason: string }[] };
    expect(restored.restoredPaths).toContain("src/app.js");
    // Connect JSON: the reason by its enum value's name.
    expect(restored.keptPaths.map((k) => [k.path, k.reason]).sort()).toEqual([
      [".env", "KEPT_REASON_NOT_TRACKED"],
      ["build/out.txt", "KEPT_REASON_NOT_TRACKED"],
    ]);
    // Never touched: the command's versions stay.
    expect(fs.readFileSync(path.join(workspace, ".env"), "utf8")).toBe("SECRET=from-command\n");
    expect(fs.readFileSync(path.join(workspace, "build/out.txt"), "utf8")).toBe("new build\n");
    expect(fs.readFileSync(path.join(workspace, "node_modules/x/index.js"), "utf8")).toBe("module.exports = 1;\n");
    expect(fs.readFileSync(path.join(workspace, "src/app.js"), "utf8")).toBe("console.log('app');\n");
  });

  it("a tool edit and a command: Restore Files & Task in the terminal says, a line each, that .env, build/out.txt and a new dist/ were kept as is", async () => {
    const roots = makeTestRoots();
    const workspace = project(roots.base);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "src/app.js", content: "console.log('edited');\n" } }] },
        {
          toolCalls: [
            {
              name: "execute_command",
              input: {
                command: `${COMMAND} && mkdir dist && printf 'bundle\\n' > dist/app.js`,
                requires_approval: false,
              },
            },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const task = await run(cli, ["task", "edit and build", "--workspace", workspace, "--yes"], { env });
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    const baseline = await baselineOf(env, taskId);

    const out = (await run(cli, ["restore", taskId, baseline, "--mode", "files-and-task"], { env })).stdout;
    expect(out).toMatch(
      /^restored 1 file\(s\), deleted 0, kept 3 as they were; conversation restored \(cut back to the checkpoint\)\n/,
    );
    expect(out).toContain("  restored: src/app.js\n");
    expect(out).toContain("  kept as is: not tracked by checkpoints: .env\n");
    expect(out).toContain("  kept as is: not tracked by checkpoints: build/out.txt\n");
    // The new folder as one path (where the file system records birth times), else its file.
    expect(out).toMatch(/^ {2}kept as is: not tracked by checkpoints: dist\/(app\.js)?\n/m);
    expect(out).not.toContain("node_modules");
    expect(fs.readFileSync(path.join(workspace, ".env"), "utf8")).toBe("SECRET=from-command\n");
    expect(fs.readFileSync(path.join(workspace, "build/out.txt"), "utf8")).toBe("new build\n");
    expect(fs.readFileSync(path.join(workspace, "dist/app.js"), "utf8")).toBe("bundle\n");
    expect(fs.readFileSync(path.join(workspace, "src/app.js"), "utf8")).toBe("console.log('app');\n");
  });
  it("a command changed .env in a project whose node_modules is too large to look through: the restore names .env and says more may have changed", async () => {
    const roots = makeTestRoots();
    const workspace = project(roots.base);
    // More entries than the look takes in one folder (FOLDER_LOOK_LIMIT), installed before the task.
    const old = new Date(Date.now() - 3_600_000);
    for (let i = 0; i < 1_100; i++) {
      const file = path.join(workspace, "node_modules", `p${i}.js`);
      fs.writeFileSync(file, "module.exports = 1;\n");
      fs.utimesSync(file, old, old);
    }
    const { env, taskId } = await commandTask(roots, workspace);
    const out = (await run(cli, ["restore", taskId, await baselineOf(env, taskId), "--mode", "files"], { env })).stdout;
    expect(out).toContain("  kept as is: not tracked by checkpoints: .env\n");
    expect(out).toContain("  kept as is: more files the checkpoints do not track may have changed too\n");
    expect(out).not.toContain("node_modules/p");
  });

  it("a later task's command rewrites, in place, a dist/ file an earlier task made and restored past: the restore names it", async () => {
    const roots = makeTestRoots();
    const workspace = project(roots.base);
    const command = (n: number) => ({
      toolCalls: [
        {
          name: "execute_command",
          input: { command: `mkdir -p dist && printf 'bundle ${n}\\n' > dist/app.js`, requires_approval: false },
        },
      ],
    });
    const done = { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] };
    const server = await spawnModelServer({ apiKey: TEST_KEY, turns: [command(1), done, command(2), done] });
    servers.push(server);
    const env = cliEnv(roots, server);
    const first = await run(cli, ["task", "build", "--workspace", workspace, "--yes"], { env });
    // Restored to its baseline (dist/ stays: new and left out): the newest snapshot is now one
    // whose skip list, carried from before the build, does not name dist.
    const firstId = captured(/task (\S+)/.exec(first.stderr), "the first task's id");
    await run(cli, ["restore", firstId, await baselineOf(env, firstId), "--mode", "files"], { env });
    const task = await run(cli, ["task", "build again", "--workspace", workspace, "--yes"], { env });
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    const out = (await run(cli, ["restore", taskId, await baselineOf(env, taskId), "--mode", "files"], { env })).stdout;
    expect(out).toContain("  kept as is: not tracked by checkpoints: dist/app.js\n");
    expect(out).not.toContain("node_modules");
    expect(fs.readFileSync(path.join(workspace, "dist/app.js"), "utf8")).toBe("bundle 2\n");
  });
});
