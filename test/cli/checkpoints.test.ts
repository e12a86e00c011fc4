import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots, repoRoot, startSidecar } from "../helpers/sidecar.js";
import { EditMessageMode, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { captured } from "../helpers/items.js";
import { cliEnv, crashSidecar, startCli } from "../helpers/cli-child.js";
import { cliSandbox, taskRunningCommand } from "../helpers/cli-tasks.js";
import { gitShimBeforeStatus } from "../helpers/git-shim.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

/** A `dline task` whose command has started (and sleeps): its sidecar is then stopped by the test. */
async function taskInACommand() {
  const { roots, server, task, workspace } = await taskRunningCommand("echo started > started.txt; sleep 30", servers);
  while (!fs.existsSync(path.join(workspace, "started.txt"))) await new Promise((r) => setTimeout(r, 50));
  return { roots, server, task };
}

describe("checkpoints through the CLI and the real sidecar", () => {
  it("tools edit a tracked file under bin/ and an .env; a restore to the baseline brings both back; the baseline's progress is shown", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base, {
      "packages/cli/bin/run.js": "#!/usr/bin/env node\nrequire('../lib');\n",
      "packages/core/.env": "API_KEY=original-key\n",
    });
    fs.chmodSync(path.join(workspace, "packages/cli/bin/run.js"), 0o755);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        {
          toolCalls: [
            {
              name: "replace_in_file",
              input: {
                path: "packages/cli/bin/run.js",
                diff: "------- SEARCH\n#!/usr/bin/env node\n=======\n#!/usr/bin/env node\n// edited by the task\n+++++++ REPLACE",
              },
            },
            { name: "write_to_file", input: { path: "packages/core/.env", content: "API_KEY=task-key\n" } },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    // git's scan takes a second more: the scan of this small workspace starts with the sidecar
    // (serve --workspace) and could end before the CLI follows the task, which then hears only
    // "ready" (CI once).
    const slowScan = gitShimBeforeStatus(path.join(roots.base, "slow-bin"), "sleep 1");
    const task = await run(cli, ["task", "edit them", "--workspace", workspace, "--yes"], {
      env: { ...env, PATH: slowScan },
    });
    // Not a terminal: a line per phase of the first baseline, on stderr.
    expect(task.stderr).toMatch(/^checkpoints initializing: scanning the workspace$/m);
    expect(task.stderr).toMatch(/^checkpoints ready$/m);
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");

    const { checkpoints } = JSON.parse((await run(cli, ["--json", "checkpoints", taskId], { env })).stdout);
    const baseline = checkpoints.find((c: { kind: string }) => c.kind === "CHECKPOINT_KIND_BASELINE");
    // The person's own new file after the task: listed, and left alone by a files restore.
    fs.writeFileSync(path.join(workspace, "NOTES.md"), "the person's notes\n");
    const compared = JSON.parse((await run(cli, ["--json", "compare", taskId, baseline.id], { env })).stdout);
    const files: { path: string; status: string }[] = compared.files;
    expect(files.map((f) => [f.path, f.status]).sort()).toEqual([
      ["NOTES.md", "FILE_STATUS_ADDED"],
      ["packages/cli/bin/run.js", "FILE_STATUS_MODIFIED"],
      ["packages/core/.env", "FILE_STATUS_MODIFIED"],
    ]);
    expect([...compared.restorePaths].sort()).toEqual(["packages/cli/bin/run.js", "packages/core/.env"]);
    // What the snapshot left out is named, but not the .env listed above as changed: a tool's
    // edit of a left-out file keeps its earlier version, so it is compared and restored.
    const human = (await run(cli, ["compare", taskId, baseline.id], { env })).stdout;
    expect(human).toMatch(/^ {2}modified {2}packages\/core\/\.env\n/m);
    expect(human).toMatch(/^ {2}added {5}NOTES\.md {2}\(a files restore leaves it as it is\)\n/m);
    expect(human).toMatch(
      /^Not tracked by checkpoints \(excluded, ignored or too large; apart from the files listed above, changes there are not compared or restored\):\n {2}\S/m,
    );
    expect(human).not.toMatch(/^ {2}.*, packages\/core\/\.env|^ {2}packages\/core\/\.env,/m);
    const restored = JSON.parse(
      (await run(cli, ["--json", "restore", taskId, baseline.id, "--mode", "files"], { env })).stdout,
    );
    expect(restored.deletedPaths ?? []).toEqual([]);
    expect(fs.readFileSync(path.join(workspace, "NOTES.md"), "utf8")).toBe("the person's notes\n");
    expect(fs.readFileSync(path.join(workspace, "packages/cli/bin/run.js"), "utf8")).toBe(
      "#!/usr/bin/env node\nrequire('../lib');\n",
    );
    expect(fs.statSync(path.join(workspace, "packages/cli/bin/run.js")).mode & 0o777).toBe(0o755);
    expect(fs.readFileSync(path.join(workspace, "packages/core/.env"), "utf8")).toBe("API_KEY=original-key\n");

    // A task that does not exist is said to be so (not "has no checkpoints").
    const unknown = await run(cli, ["compare", "no-such-task", baseline.id], { env }).catch(
      (e: { stderr: string }) => e,
    );
    expect(unknown.stderr).toContain("not_found: Task no-such-task does not exist.");

    // A reader that stops early (`dline checkpoints ID | head -1`) ends the output quietly.
    const early = startCli(["checkpoints", taskId], env);
    early.child.stdout.destroy();
    expect(await early.exited).toBe(0);
    expect(early.stderr()).not.toMatch(/EPIPE|Error/);
  });

  it("a restore by the short id the task printed names the files it restored and deleted, and those it kept as they were (too large to snapshot)", async () => {
    const roots = makeTestRoots();
    // Over 4 times the 5 MB a checkpoint holds: the baseline leaves it out, and no pre-image is kept.
    const workspace = makeWorkspace(roots.base, { "notes.md": "# notes\n" });
    fs.mkdirSync(path.join(workspace, "assets"));
    fs.writeFileSync(path.join(workspace, "assets/big.bin"), Buffer.alloc(21 * 1024 * 1024, 7));
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        {
          toolCalls: [
            { name: "write_to_file", input: { path: "assets/big.bin", content: "now small\n" } },
            { name: "write_to_file", input: { path: "notes.md", content: "# notes, edited\n" } },
            { name: "write_to_file", input: { path: "made.txt", content: "new\n" } },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const task = await run(cli, ["task", "edit them", "--workspace", workspace, "--yes"], { env });
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    const { checkpoints } = JSON.parse((await run(cli, ["--json", "checkpoints", taskId], { env })).stdout) as {
      checkpoints: { id: string; kind: string }[];
    };
    const baseline = checkpoints.find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!;
    // The chat shows checkpoint ids cut to 12 digits; a restore takes them.
    const short = baseline.id.slice(0, 12);
    const restored = await run(cli, ["restore", taskId, short, "--mode", "files"], { env });
    expect(restored.stdout).toContain("restored 1 file(s), deleted 1, kept 1 as they were\n");
    // Each file by name: a deleted one may be the person's.
    expect(restored.stdout).toContain("  restored: notes.md\n  deleted: made.txt\n");
    expect(restored.stdout).toContain("  kept as is: too large to snapshot: assets/big.bin\n");
    expect(fs.readFileSync(path.join(workspace, "notes.md"), "utf8")).toBe("# notes\n");
    expect(fs.readFileSync(path.join(workspace, "assets/big.bin"), "utf8")).toBe("now small\n");

    // Two digits name a checkpoint when no other of the task starts so (before, any prefix under
    // four digits was refused as "not a checkpoint id"). Three ids: all but surely one has its own.
    const ids = checkpoints.map((c) => c.id);
    const two = ids.find((id) => ids.filter((other) => other.startsWith(id.slice(0, 2))).length === 1);
    expect(two).toBeDefined();
    const compared = await run(cli, ["--json", "compare", taskId, two!.slice(0, 2)], { env });
    expect(JSON.parse(compared.stdout)).toHaveProperty("files");
    // A prefix no checkpoint of the task has, and one too short to tell, are refused clearly.
    let unknown = "0000";
    while (checkpoints.some((c) => c.id.startsWith(unknown)))
      unknown = (Number.parseInt(unknown, 16) + 1).toString(16).padStart(4, "0");
    const none = await run(cli, ["compare", taskId, unknown], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((none as { code: number }).code).toBe(1);
    expect((none as { stderr: string }).stderr).toBe(
      `dline: not_found: No checkpoint of task ${taskId} starts with ${unknown}.\n`,
    );
    // A whole id is the core's to answer (one of a checkpoint whose objects are lost is data_loss).
    const whole = unknown.padEnd(40, "0");
    const notOfTask = await run(cli, ["compare", taskId, whole], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((notOfTask as { stderr: string }).stderr).toBe(
      `dline: not_found: Checkpoint ${whole} does not belong to task ${taskId}.\n`,
    );
  });

  it("a task an editor rewound to before its first message is listed and shown as an untitled task", async () => {
    const { roots, workspace, env } = await cliSandbox(
      [{ toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] }],
      servers,
    );
    const task = await run(cli, ["task", "Write the notes", "--workspace", workspace, "--yes"], { env });
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    // An editor's Restore All of the first message, edited (its text goes to the editor's input area).
    const editor = await startSidecar({ roots });
    try {
      const first = (await editor.clients.tasks.getTask({ taskId })).messages[0]!;
      await editor.clients.checkpoints.editMessage({
        taskId,
        messageId: first.id,
        text: "Write other notes",
        mode: EditMessageMode.RESTORE_ALL,
      });
    } finally {
      await editor.stop();
    }
    // Before, the old first message still named it (the core kept it as the title).
    const history = (await run(cli, ["history"], { env })).stdout;
    expect(history).toMatch(new RegExp(`${taskId} .*\\(untitled task\\)$`, "m"));
    expect(history).not.toMatch(/Write (the|other) notes/);
    const shown = (await run(cli, ["show", taskId], { env })).stdout;
    expect(shown.split("\n")[0]).toBe("(untitled task)");
  });

  it("a task an editor restored (task only) to its first message: dline show says why it stands interrupted", async () => {
    const { roots, workspace, env } = await cliSandbox(
      [
        { toolCalls: [{ name: "write_to_file", input: { path: "notes.md", content: "notes\n" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
      servers,
    );
    const task = await run(cli, ["task", "Write the notes", "--workspace", workspace, "--yes"], { env });
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    const editor = await startSidecar({ roots });
    try {
      const first = (await editor.clients.tasks.getTask({ taskId })).messages[0]!;
      const { checkpoints } = await editor.clients.checkpoints.listCheckpoints({ taskId });
      const atFirst = checkpoints.find((c) => c.messageId === first.id)!;
      await editor.clients.checkpoints.restore({ taskId, checkpointId: atFirst.id, mode: RestoreMode.TASK });
    } finally {
      await editor.stop();
    }
    // Before: "interrupted", and nothing said the person's own restore had put it there.
    const shown = (await run(cli, ["show", taskId], { env })).stdout;
    expect(shown.split("\n")[1]).toContain(" · interrupted (the conversation was restored to an earlier point) · ");
    const json = JSON.parse((await run(cli, ["--json", "show", taskId], { env })).stdout) as { statusReason: string };
    expect(json.statusReason).toBe("the conversation was restored to an earlier point");
  });

  it("a sidecar that dies during a command is named as such, not as 'aborted'", async () => {
    const { task } = await taskInACommand();
    // The CLI's own sidecar is its child process: kill it hard, as a crash would.
    expect(await crashSidecar(task)).toBe(1);
    const stderr = task.stderr();
    expect(stderr).toMatch(/dline: the sidecar \(dline-core\) stopped unexpectedly \(SIGKILL\)/);
    expect(stderr).not.toMatch(/aborted: aborted/);
  });

  it("a sidecar stopped by SIGTERM during a command is named too, with the way to continue the task, not a silent exit 1", async () => {
    const { roots, server, task } = await taskInACommand();
    // Stopped in order (a shutdown, a person's kill): the sidecar saves its state and exits 0.
    process.kill(task.sidecarPid(), "SIGTERM");
    expect(await task.exited).toBe(1);
    const stderr = task.stderr();
    const history = await run(cli, ["--json", "history"], { env: cliEnv(roots, server) });
    const taskId = (JSON.parse(history.stdout) as { tasks: { id: string }[] }).tasks[0]!.id;
    expect(stderr).toContain(
      `dline: the sidecar (dline-core) stopped unexpectedly (exit code 0); its log is dline-core.log in the logs folder "dline doctor" names. Task ${taskId} is interrupted: dline resume ${taskId} continues it`,
    );
  });
});
