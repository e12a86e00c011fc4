/**
 * An answer stopped midway (Ctrl-C, a Cancel from another window) shows where it was cut, in
 * every CLI view of it: live in `dline task`, then in `dline show` and in the conversation
 * `dline follow` prints first. Before, the text just stopped, and only "[cancelled]" said why.
 */
import { execFile } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MessageRole, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots, repoRoot, sidecarBinary, startSidecar } from "../helpers/sidecar.js";
import { configureModel, makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { cliOnTerminal } from "../helpers/terminal.js";
import { cliEnv, startCli } from "../helpers/cli-child.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const MARKER = "[answer cut off here]";
const LONG_ANSWER = Array.from({ length: 2000 }, (_, i) => `word${i}`).join(" ");
/** LONG_ANSWER streamed slowly: a few characters about every 25 ms, for a minute. */
const SLOW_ANSWER = { text: LONG_ANSWER, writeChunkBytes: 64, writeDelayMs: 25 };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

async function modelServer(turns: object[]): Promise<ModelServerProcess> {
  const server = await spawnModelServer({ apiKey: TEST_KEY, turns });
  cleanups.push(() => server.stop());
  return server;
}

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe("the CLI marks an answer that was cut off", () => {
  it("Ctrl-C in dline task: the marker under the text, then in dline show; the next answer is not marked", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await modelServer([SLOW_ANSWER, { text: "Going on." }]);
    const env = cliEnv(roots, server);
    const task = startCli(["task", "explain", "--workspace", workspace], env);
    await vi.waitFor(() => expect(task.stdout()).toContain("word60 "), { timeout: 30_000, interval: 20 });
    task.child.kill("SIGINT");
    expect(await task.exited).toBe(130);
    const out = task.stdout();
    const err = task.stderr();

    const lines = out.split("\n");
    const at = lines.indexOf(MARKER);
    expect(at, `the marker in:\n${out}`).toBeGreaterThan(0);
    expect(occurrences(out, MARKER)).toBe(1);
    // Right under the text the answer stopped at, before the status line.
    const cut = lines[at - 1]!;
    expect(cut.length).toBeGreaterThan(300);
    expect(LONG_ANSWER.startsWith(cut)).toBe(true);
    expect(cut.length).toBeLessThan(LONG_ANSWER.length);
    // The status, without a reason that only repeats it ("[cancelled: cancelled]").
    expect(lines[at + 1]).toBe("[cancelled]");
    const taskId = /task (\S+)/.exec(err)?.[1];
    expect(taskId, err).toBeDefined();

    // Stored: dline show marks it the same way.
    const shown = (await run(cli, ["show", taskId!], { env })).stdout;
    expect(shown).toContain(`[dline] ${cut}\n${MARKER}\n`);
    expect(occurrences(shown, MARKER)).toBe(1);

    // The next answer finishes: it is not marked, the cut one still is.
    const resumed = await run(cli, ["resume", taskId!, "--message", "go on"], { env });
    expect(resumed.stdout).toContain("Going on.");
    expect(resumed.stdout).not.toContain(MARKER);
    const again = (await run(cli, ["show", taskId!], { env })).stdout;
    expect(again).toContain(`[dline] ${cut}\n${MARKER}\n`);
    expect(again).toContain("[dline] Going on.\n");
    expect(again).not.toContain(`Going on.\n${MARKER}`);
    expect(occurrences(again, MARKER)).toBe(1);
  });

  it("Ctrl-C typed on a terminal cancels the task (its sidecar is not stopped with the CLI): the marker, live and stored", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await modelServer([SLOW_ANSWER]);
    const env = cliEnv(roots, server);
    const terminal = cliOnTerminal(env, ["task", "explain", "--workspace", workspace]);
    cleanups.push(() => terminal.kill());
    await vi.waitFor(() => expect(terminal.screen()).toContain("word60 "), { timeout: 30_000, interval: 20 });
    // The terminal sends SIGINT to its whole foreground process group: before, the sidecar too,
    // which stopped, leaving the task interrupted and the answer unmarked on the screen.
    terminal.type("\x03");
    expect(await terminal.exited).toBe(130);
    // The terminal echoes the Ctrl-C as "^C" where the text was.
    const screen = terminal.screen().replace(/\r|\^C/g, "");
    expect(screen).toMatch(/word\d+[^\n]*\n\[answer cut off here\]\n\[cancelled/);
    const history = JSON.parse((await run(cli, ["--json", "history"], { env })).stdout) as {
      tasks: { id: string; status: string }[];
    };
    expect(history.tasks[0]?.status).toBe("TASK_STATUS_CANCELLED");
    const shown = (await run(cli, ["show", history.tasks[0]!.id], { env })).stdout;
    const cut = /\n([^\n]*)\n\[answer cut off here\]\n\[cancelled/.exec(screen)![1]!;
    expect(shown).toContain(`${cut.slice(-40)}\n${MARKER}\n`);
  });

  it("dline follow prints the conversation so far with the cut answer marked", async () => {
    const roots = makeTestRoots();
    const editor = await startSidecar({ roots });
    cleanups.push(() => editor.stop());
    const { server, profileId } = await configureModel(editor.clients, "openai", {
      turns: [
        SLOW_ANSWER,
        { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "notes\n" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "Wrote it." } }] },
      ],
    });
    cleanups.push(() => server.stop());
    const workspace = makeWorkspace(roots.base);
    const { taskId } = await editor.clients.tasks.newTask({ workspaceRoot: workspace, text: "explain", profileId });
    const answer = async () =>
      (await editor.clients.tasks.getTask({ taskId })).messages.find(
        (m) => m.role === MessageRole.ASSISTANT && m.kind === "text",
      );
    // Part of the answer is stored (the streaming text is stored about once a second): cancel it.
    await vi.waitFor(async () => expect((await answer())?.text.length ?? 0).toBeGreaterThan(100), {
      timeout: 30_000,
    });
    await editor.clients.tasks.cancel({ taskId });
    await vi.waitFor(async () => expect((await answer())?.cutOff).toBe(true), { timeout: 30_000 });
    const cut = (await answer())!.text;
    // Going on, the task waits for an approval in the editor: dline follow shows it so far.
    await editor.clients.tasks.sendMessage({ taskId, text: "write notes" });
    await vi.waitFor(
      async () => expect((await editor.clients.tasks.getTask({ taskId })).task?.status).toBe(TaskStatus.WAITING),
      { timeout: 30_000 },
    );
    const follower = startCli(["follow", taskId], { ...roots.env, DLINE_CORE: sidecarBinary }, "pipe");
    cleanups.push(() => follower.stop());
    await vi.waitFor(() => expect(follower.output()).toContain("left to the window that runs it"), {
      timeout: 30_000,
    });
    expect(follower.output()).toContain(`> explain\n${cut}\n${MARKER}\n> write notes\n`);
    expect(occurrences(follower.output(), MARKER)).toBe(1);
    const { pendingAsk } = await editor.clients.tasks.getTask({ taskId });
    await editor.clients.tasks.respond({ taskId, askId: pendingAsk!.askId, approve: true, text: "" });
    expect(await follower.exited).toBe(0);
    expect(occurrences(follower.output(), MARKER)).toBe(1);
  });
});
