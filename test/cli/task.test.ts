import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { recorded } from "../model-server/script.js";
import { makeTestRoots, repoRoot, sidecarBinary, startSidecar } from "../helpers/sidecar.js";
import { configureModel, makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { nth } from "../helpers/items.js";
import { cliOnTerminal } from "../helpers/terminal.js";
import { cliEnv, startCli } from "../helpers/cli-child.js";
import { taskRunningCommand } from "../helpers/cli-tasks.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function dline(env: NodeJS.ProcessEnv, args: string[]) {
  return run(cli, args, { env, maxBuffer: 16 * 1024 * 1024 });
}

describe("dline task (the CLI as a separate process)", () => {
  it("runs a task against a model from the environment, then lists, shows, compares and restores it", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        { text: "Reading.", toolCalls: [{ name: "read_file", input: { path: "src/app.txt" } }] },
        {
          toolCalls: [
            { name: "write_to_file", input: { path: "src/new.txt", content: "new\n" } },
            {
              name: "replace_in_file",
              input: { path: "src/app.txt", diff: "------- SEARCH\nhello\n=======\nbye\n+++++++ REPLACE" },
            },
          ],
        },
        { toolCalls: [{ name: "execute_command", input: { command: "echo from-command", requires_approval: true } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "All done." } }] },
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const { stdout, stderr } = await dline(env, [
      "--json",
      "task",
      "Change the greeting",
      "--workspace",
      workspace,
      "--yes",
    ]);
    const events = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events.map((e) => Number(e.seq))).toEqual(events.map((_, i) => Number(events[0].seq) + i));
    expect(events.some((e) => e.toolOutput?.chunk.includes("from-command"))).toBe(true);
    expect(events[events.length - 1].statusChanged.status).toBe("TASK_STATUS_COMPLETED");
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("bye\n");
    expect(fs.readFileSync(path.join(workspace, "src/new.txt"), "utf8")).toBe("new\n");
    expect(stdout + stderr).not.toContain(TEST_KEY);
    const taskId = events[0].taskId as string;

    const history = JSON.parse((await dline(env, ["--json", "history"])).stdout);
    expect(history.tasks.map((t: { id: string }) => t.id)).toEqual([taskId]);
    expect(history.tasks[0].title).toBe("Change the greeting");

    const shown = JSON.parse((await dline(env, ["--json", "show", taskId])).stdout);
    expect(shown.messages[shown.messages.length - 1].kind).toBe("completion");

    const checkpoints = JSON.parse((await dline(env, ["--json", "checkpoints", taskId])).stdout).checkpoints;
    const baseline = checkpoints.find((c: { kind: string }) => c.kind === "CHECKPOINT_KIND_BASELINE");
    expect(baseline).toBeDefined();
    const compared = JSON.parse((await dline(env, ["--json", "compare", taskId, baseline.id])).stdout).files;
    expect(compared.map((f: { path: string }) => f.path).sort()).toEqual(["src/app.txt", "src/new.txt"]);

    await dline(env, ["restore", taskId, baseline.id, "--mode", "files"]);
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("hello\n");
    expect(fs.existsSync(path.join(workspace, "src/new.txt"))).toBe(false);

    await dline(env, ["delete", taskId]);
    expect(JSON.parse((await dline(env, ["--json", "history"])).stdout).tasks).toEqual([]);
  });

  it("stops at a question nobody can answer (stdin not a terminal, no --yes): no denial in the person's name", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await spawnModelServer({
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "x.txt", content: "x" } }] },
        { text: "Understood: no file." },
      ],
    });
    servers.push(server);
    const env = { ...roots.env, DLINE_CORE: sidecarBinary, OPENAI_BASE_URL: server.url, OPENAI_MODEL: "m" };
    const failed = await dline(env, ["task", "write x", "--workspace", workspace]).then(
      () => undefined,
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toContain("write_to_file");
    const taskId = JSON.parse((await dline(env, ["--json", "history"])).stdout).tasks[0].id;
    expect(failed?.stderr).toContain("write_to_file needs approval, and nobody can answer it here");
    expect(failed?.stderr).toContain(`dline resume ${taskId}`);
    expect(fs.existsSync(path.join(workspace, "x.txt"))).toBe(false);
    // The model was not told the person denied it, and the chat holds no words they never said.
    expect(await server.requests()).toHaveLength(1);
    const shown = (await dline(env, ["show", taskId])).stdout;
    expect(shown).not.toMatch(/denied/i);
    expect(shown).not.toContain("Understood");
  });

  it("dline follow without a terminal leaves the question to the window that runs the task", async () => {
    const roots = makeTestRoots();
    const editor = await startSidecar({ roots });
    try {
      const { server, profileId } = await configureModel(editor.clients, "openai", {
        turns: [
          { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "from the editor\n" } }] },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Wrote it." } }] },
        ],
      });
      servers.push(server);
      const workspace = makeWorkspace(roots.base);
      const { taskId } = await editor.clients.tasks.newTask({ workspaceRoot: workspace, text: "write", profileId });
      await vi.waitFor(async () => expect((await editor.clients.tasks.getTask({ taskId })).pendingAsk).toBeDefined(), {
        timeout: 30_000,
      });
      const follower = startCli(["follow", taskId], { ...roots.env, DLINE_CORE: sidecarBinary }, "pipe");
      await vi.waitFor(() => expect(follower.output()).toContain("left to the window that runs it"), {
        timeout: 30_000,
      });
      // The follower did not answer: the question still waits in the editor.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { pendingAsk } = await editor.clients.tasks.getTask({ taskId });
      expect(pendingAsk).toBeDefined();
      await editor.clients.tasks.respond({ taskId, askId: pendingAsk!.askId, approve: true, text: "" });
      expect(await follower.exited).toBe(0);
      expect(follower.output()).toContain("(approved in another window)");
      expect(fs.readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe("from the editor\n");
    } finally {
      await editor.stop();
    }
  });
});

describe("the CLI's approval prompt shows what is approved", () => {
  it("on a terminal, an edit of a file too large to send whole shows as its diff; a long diff is cut, and d pages all of it before the answer", async () => {
    const roots = makeTestRoots();
    const lines = Array.from({ length: 12_000 }, (_, i) => `export const line${i} = ${i};\n`);
    const workspace = makeWorkspace(roots.base, { "large.js": lines.join("") });
    // Every 20th line changed: 600 hunks, far over the 400 lines the terminal shows at first.
    const edited = lines.map((l, i) => (i % 20 === 0 ? l.replace(" = ", " = -") : l)).join("");
    const server = await spawnModelServer({
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "large.js", content: edited } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "Negated." } }] },
      ],
    });
    servers.push(server);
    const env = {
      ...roots.env,
      DLINE_CORE: sidecarBinary,
      OPENAI_BASE_URL: server.url,
      OPENAI_MODEL: "m",
      PAGER: "cat",
    };
    const terminal = cliOnTerminal(env, ["task", "negate every 20th", "--workspace", workspace]);
    try {
      await expect.poll(() => terminal.screen(), { timeout: 60_000 }).toContain("[y/N/d(iff, whole)/feedback]");
      const first = terminal.screen();
      expect(first).toContain(
        ["--- a/large.js", "+++ b/large.js", "@@ -1,4 +1,4 @@", "-export const line0 = 0;"].join("\r\n"),
      );
      expect(first).toMatch(/… \d+ more lines \(answer d to read them all\)/);
      expect(first).not.toContain("+export const line11980 = -11980;");
      terminal.type("d\n");
      // The pager shows every line, then the question comes again.
      await expect.poll(() => terminal.screen(), { timeout: 30_000 }).toContain("+export const line11980 = -11980;");
      await expect
        .poll(() => terminal.screen().split("[y/N/d(iff, whole)/feedback]").length - 1, { timeout: 30_000 })
        .toBe(2);
      expect(fs.readFileSync(path.join(workspace, "large.js"), "utf8")).toBe(lines.join(""));
      terminal.type("y\n");
      expect(await terminal.exited, terminal.screen().slice(-2000)).toBe(0);
      expect(fs.readFileSync(path.join(workspace, "large.js"), "utf8")).toBe(edited);
    } finally {
      await terminal.kill();
    }
  });

  it("an edit as a unified diff, and the exact command line with its folder", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const command = "printf 'x\\n' > out.txt\r\u001b[2K && echo ok";
    const server = await spawnModelServer({
      turns: [
        {
          toolCalls: [
            {
              name: "replace_in_file",
              input: { path: "src/app.txt", diff: "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
            },
          ],
        },
        { toolCalls: [{ name: "execute_command", input: { command, requires_approval: true } }] },
      ],
    });
    servers.push(server);
    const env = { ...roots.env, DLINE_CORE: sidecarBinary, OPENAI_BASE_URL: server.url, OPENAI_MODEL: "m" };
    // Not interactive and without --yes: the ask is shown, then the task stops. One task each.
    const shown = async (prompt: string) =>
      dline(env, ["task", prompt, "--workspace", workspace]).then(
        () => "",
        (err: { stdout: string }) => err.stdout,
      );
    expect(await shown("greet the world")).toContain(
      ["--- a/src/app.txt", "+++ b/src/app.txt", "@@ -1,1 +1,1 @@", "-hello", "+hello, world"].join("\n"),
    );
    // The command exactly as it runs, its control characters made visible, and where it runs.
    expect(await shown("now the command")).toContain(
      `  $ printf 'x\\n' > out.txt\\r\\e[2K && echo ok\n  (in ${workspace})`,
    );
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("hello\n");
  });
});

describe("the task scenarios through the CLI", () => {
  function waitFor(check: () => boolean, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const tick = () => {
        if (check()) return resolve();
        if (Date.now() - started > 30_000) return reject(new Error(`timed out waiting for ${what}`));
        setTimeout(tick, 50);
      };
      tick();
    });
  }

  it("Ctrl-C cancels the task and kills its running command", async () => {
    const { task, workspace, env } = await taskRunningCommand("sleep 60 & echo $! > child.pid; wait", servers);
    const pidFile = path.join(workspace, "child.pid");
    await waitFor(
      () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").trim() !== "",
      "the command to start",
    );
    const commandPid = Number(fs.readFileSync(pidFile, "utf8"));
    task.child.kill("SIGINT");
    expect(await task.exited).toBe(130);
    await waitFor(() => {
      try {
        process.kill(commandPid, 0);
        return false;
      } catch {
        return true;
      }
    }, "the command's process to be gone");
    const history = JSON.parse((await dline(env, ["--json", "history"])).stdout);
    expect(history.tasks[0].status).toBe("TASK_STATUS_CANCELLED");
    // dline show says how the command ended (before, its row read like one that ran).
    const shown = (await dline(env, ["show", history.tasks[0].id])).stdout;
    expect(shown).toMatch(/\[tool command\] execute_command sleep 60 .* \(interrupted: The task was cancelled/);
  });

  it("a reader that goes away mid-task (dline task … | head -1): the task is interrupted and the exit is no success", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        {
          text: "Starting.",
          toolCalls: [{ name: "execute_command", input: { command: "sleep 30", requires_approval: false } }],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    servers.push(server);
    const task = startCli(["task", "wait for it", "--workspace", workspace, "--yes"], cliEnv(roots, server));
    // The reader takes the first line and goes (head -1).
    await new Promise<void>((resolve) => task.child.stdout.once("data", () => resolve()));
    task.child.stdout.destroy();
    // Before, 0: a script with pipefail took the stopped task for a finished one.
    expect(await task.exited).toBe(141);
    const stderr = task.stderr();
    expect(stderr).toContain("the output was closed before the task ended; it is interrupted");
    expect(stderr).not.toMatch(/EPIPE|at .*\.js/);
    // The sidecar marks it when it sees the CLI gone (stdin closed).
    let status = "";
    for (let i = 0; i < 100 && status !== "TASK_STATUS_INTERRUPTED"; i++) {
      status = JSON.parse((await dline(cliEnv(roots, server), ["--json", "history"])).stdout).tasks[0]?.status;
      if (status !== "TASK_STATUS_INTERRUPTED") await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe("TASK_STATUS_INTERRUPTED");
  });

  it("a task whose sidecar was killed is resumed with dline resume", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "first.txt", content: "1\n" } }] },
        { text: "slow", interrupt: { afterFrames: 1, mode: "stall" } },
        { text: "Resumed.", toolCalls: [{ name: "attempt_completion", input: { result: "finished after resume" } }] },
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const task = startCli(["--json", "task", "write it", "--workspace", workspace, "--yes"], env);
    await waitFor(() => fs.existsSync(path.join(workspace, "first.txt")), "the first turn");
    for (let i = 0; i < 200 && (await server.requests()).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    // The CLI's own sidecar is its child process: kill it hard, as a crash would.
    process.kill(task.sidecarPid(), "SIGKILL");
    expect(await task.exited).not.toBe(0);
    const taskId = JSON.parse(nth(task.stdout().trim().split("\n"), 0, "JSON line")).taskId as string;
    const resumed = await dline(env, ["--json", "resume", taskId, "--yes"]);
    const events = resumed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events[events.length - 1].statusChanged.status).toBe("TASK_STATUS_COMPLETED");
    const shown = JSON.parse((await dline(env, ["--json", "show", taskId])).stdout);
    expect(shown.messages[shown.messages.length - 1].text).toBe("finished after resume");
  });

  it("words a command does not take are refused, not dropped: dline resume ID go on runs nothing and names --message", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [{ text: "First answer." }, { text: "Second answer." }, { text: "Third answer." }],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    await dline(env, ["task", "hello", "--workspace", workspace]);
    const taskId = JSON.parse((await dline(env, ["--json", "history"])).stdout).tasks[0].id as string;
    // Before, the words were dropped: the task went on without them (exit 0, a model request).
    const refused = await dline(env, ["resume", taskId, "go", "on"]).catch((e: { code: number; stderr: string }) => e);
    expect("code" in refused && refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'dline: unexpected arguments "go" "on"; to send a message, use --message "go on".',
    );
    expect(await server.requests()).toHaveLength(1);
    for (const args of [
      ["show", taskId, "extra"],
      ["history", "hello"],
      ["checkpoints", taskId, "x"],
      ["version", "x"],
    ]) {
      const e = await dline(env, args).catch((err: { code: number; stderr: string }) => err);
      expect("code" in e && e.code, args.join(" ")).toBe(2);
      expect(e.stderr).toContain("unexpected argument");
    }
    // With --message, the words go to the model.
    await dline(env, ["resume", taskId, "--message", "go on"]);
    const requests = await server.requests();
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(recorded(requests, 1).body.messages)).toContain("go on");
  });

  it("a tool that fails says why in a whole sentence, not cut mid-word; what it tells the model is not shown as the reason", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    // Over the 16 MiB the file tools edit: the reason says how to change it instead.
    fs.writeFileSync(path.join(workspace, "big.log"), "a line of a long log\n".repeat(900_000));
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        {
          toolCalls: [
            {
              name: "replace_in_file",
              input: { path: "big.log", diff: "------- SEARCH\na line\n=======\nthe line\n+++++++ REPLACE" },
            },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "Could not." } }] },
      ],
    });
    servers.push(server);
    const { stdout } = await dline(cliEnv(roots, server), ["task", "Edit the log", "--workspace", workspace, "--yes"]);
    const failed = stdout.split("\n").find((l) => l.startsWith("  ✗ "));
    // Before, the line stopped after 300 characters, mid-word, in the advice meant for the model.
    expect(failed).toBe(
      '  ✗ replace_in_file: "big.log" is larger than the 16777216 bytes (16 MiB) the file tools edit, so it cannot be edited with replace_in_file or rewritten with write_to_file.',
    );
    // The model reads all of it, the command it may run instead included.
    const requests = await server.requests();
    expect(JSON.stringify(recorded(requests, 1).body.messages)).toContain("sed -i '120s/old/new/' big.log");
  });

  it("runs a subagent and a compaction", async () => {
    const roots = makeTestRoots();
    const big = (seed: string) =>
      Array.from(
        { length: 1500 },
        (_, i) => `const ${seed}${i} = compute(${i}, "${seed}"); // line ${i} of ${seed}`,
      ).join("\n");
    const workspace = makeWorkspace(roots.base, {
      "src/one.ts": big("one"),
      "src/two.ts": big("two"),
      "src/three.ts": big("three"),
    });
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      // A 16k window: three large reads do not fit it together, so the context is trimmed.
      contextWindow: 16_000,
      responders: [{ systemIncludes: "compact summaries", turn: { text: "SUMMARY: three files were read." } }],
      turns: [
        { text: "Reading.", toolCalls: [{ name: "read_file", input: { path: "src/one.ts" } }] },
        { toolCalls: [{ name: "read_file", input: { path: "src/two.ts" } }] },
        { toolCalls: [{ name: "read_file", input: { path: "src/three.ts" } }] },
        { toolCalls: [{ name: "new_subagent", input: { prompt: "create sub.txt" } }] },
        { toolCalls: [{ name: "write_to_file", input: { path: "sub.txt", content: "sub\n" } }] }, // the subagent
        { toolCalls: [{ name: "attempt_completion", input: { result: "sub done" } }] }, // the subagent
        { toolCalls: [{ name: "attempt_completion", input: { result: "all done" } }] },
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server, { OPENAI_CONTEXT_WINDOW: "16000" });
    const { stdout } = await dline(env, ["--json", "task", "read then delegate", "--workspace", workspace, "--yes"]);
    const events = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events[events.length - 1].statusChanged.status).toBe("TASK_STATUS_COMPLETED");
    expect(events.some((e) => e.checkpointSaved?.kind === "CHECKPOINT_KIND_COMPACTION")).toBe(true);
    expect(fs.readFileSync(path.join(workspace, "sub.txt"), "utf8")).toBe("sub\n");
    const taskId = events[0].taskId as string;
    expect(fs.readdirSync(path.join(roots.docsDir, "tasks", taskId, "subagents"))).toHaveLength(1);
  });
});
