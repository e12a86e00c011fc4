/**
 * A turn whose run stopped (its sidecar killed, or stopped as an editor reload stops it) while
 * a call of it waited for approval, through real sidecars over the same roots: Resume asks that
 * call again without a new model request, and the calls that ended keep their real results; a
 * new message instead gives every call a result first (the APIs refuse a tool call without one);
 * a call that was running is reported interrupted, never run again.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import type { WireFormat } from "../model-server/script.js";
import { recorded } from "../model-server/script.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { configureModel, makeWorkspace, setAutoApproval } from "./harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

const NOTES = "the notes as they were\n";
const readThenWrite = {
  toolCalls: [
    { name: "read_file", input: { path: "notes.md" } },
    { name: "write_to_file", input: { path: "notes.md", content: "rewritten\n" } },
  ],
};

async function waitingTask(format: WireFormat, next: object[]) {
  const first = await startSidecar();
  cleanups.push(() => first.stop());
  const { server, profileId } = await configureModel(first.clients, format, { turns: [readThenWrite, ...next] });
  cleanups.push(() => server.stop());
  // Reads run unasked; the edit waits for approval.
  await setAutoApproval(first.clients, { readFiles: true, editFiles: false });
  const workspace = makeWorkspace(first.roots.base, { "notes.md": NOTES });
  const { taskId } = await first.clients.tasks.newTask({ workspaceRoot: workspace, text: "rewrite notes", profileId });
  await vi.waitFor(
    async () => expect((await first.clients.tasks.getTask({ taskId })).pendingAsk?.tool).toBe("write_to_file"),
    {
      timeout: 30_000,
    },
  );
  return { first, server, workspace, taskId };
}

async function reopen(first: RunningSidecar): Promise<RunningSidecar> {
  const second = await startSidecar({ roots: first.roots });
  cleanups.push(() => second.stop());
  return second;
}

async function statusOf(sidecar: RunningSidecar, taskId: string) {
  return (await sidecar.clients.tasks.getTask({ taskId })).task?.status;
}

describe.each<WireFormat>(["anthropic", "openai"])("a turn stopped while a call waited for approval (%s)", (format) => {
  it("Resume after the sidecar was killed asks the call again, with no new model request; the read keeps its result", async () => {
    const { first, server, workspace, taskId } = await waitingTask(format, [
      { toolCalls: [{ name: "attempt_completion", input: { result: "Rewritten." } }] },
    ]);
    first.process.child.kill("SIGKILL");
    await first.process.exited;
    const second = await reopen(first);
    await second.clients.tasks.resume({ taskId });
    // Before, Resume told the model both calls were interrupted and asked it again.
    await vi.waitFor(
      async () => expect((await second.clients.tasks.getTask({ taskId })).pendingAsk?.tool).toBe("write_to_file"),
      {
        timeout: 30_000,
      },
    );
    expect(await server.requests()).toHaveLength(1);
    // The row of the question that was pending says what happened to it; a new row asks again.
    const rows = (await second.clients.tasks.getTask({ taskId })).messages.filter((m) => m.tool === "write_to_file");
    expect(rows.map((r) => JSON.parse(r.detail).status)).toEqual(["interrupted", "pending"]);
    expect(JSON.parse(rows[0]!.detail).reason).toContain("waited for approval");
    const { pendingAsk } = await second.clients.tasks.getTask({ taskId });
    await second.clients.tasks.respond({ taskId, askId: pendingAsk!.askId, approve: true, text: "" });
    await vi.waitFor(async () => expect(await statusOf(second, taskId)).toBe(TaskStatus.COMPLETED), {
      timeout: 30_000,
    });
    expect(fs.readFileSync(path.join(workspace, "notes.md"), "utf8")).toBe("rewritten\n");
    const requests = await server.requests();
    expect(requests).toHaveLength(2);
    const told = JSON.stringify(recorded(requests, 1).body.messages);
    // The read's real result (the file's text), not "interrupted".
    expect(told).toContain("the notes as they were");
    expect(told).not.toContain("interrupted");
  });

  it("a new message after the sidecar stopped (an editor reload) gives every call a result first; the edit is not made", async () => {
    const { first, server, workspace, taskId } = await waitingTask(format, [
      { text: "It says: the notes as they were." },
    ]);
    await first.stop();
    const second = await reopen(first);
    await vi.waitFor(async () => expect(await statusOf(second, taskId)).toBe(TaskStatus.INTERRUPTED), {
      timeout: 30_000,
    });
    await second.clients.tasks.sendMessage({ taskId, text: "Never mind, just tell me what it says." });
    await vi.waitFor(async () => expect(await statusOf(second, taskId)).toBe(TaskStatus.COMPLETED), {
      timeout: 30_000,
    });
    // Before, the request held the calls without their results: the APIs refuse it (HTTP 400).
    const task = await second.clients.tasks.getTask({ taskId });
    expect(task.messages.some((m) => m.text === "It says: the notes as they were.")).toBe(true);
    const requests = await server.requests();
    expect(requests).toHaveLength(2);
    expect(requests[1]!.status).toBe(200);
    const told = JSON.stringify(recorded(requests, 1).body.messages);
    expect(told).toContain("the notes as they were");
    expect(told).toContain("waited for approval, and the user wrote a new message instead");
    expect(fs.readFileSync(path.join(workspace, "notes.md"), "utf8")).toBe(NOTES);
  });
});

describe("a turn stopped while a call ran", () => {
  it("Resume reports the running command interrupted and asks the model, never running it again", async () => {
    const first = await startSidecar();
    cleanups.push(() => first.stop());
    const { server, profileId } = await configureModel(first.clients, "anthropic", {
      turns: [
        {
          toolCalls: [
            {
              name: "execute_command",
              input: { command: "echo started >> runs.txt; sleep 30", requires_approval: false },
            },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "Stopped there." } }] },
      ],
    });
    cleanups.push(() => server.stop());
    await setAutoApproval(first.clients, { executeSafeCommands: true, executeAllCommands: true });
    const workspace = makeWorkspace(first.roots.base);
    const { taskId } = await first.clients.tasks.newTask({ workspaceRoot: workspace, text: "run it", profileId });
    const runs = path.join(workspace, "runs.txt");
    // Its line written, not only the file made: `>>` creates it first, and a kill between the two
    // (a loaded CI machine, once) left it empty.
    await vi.waitFor(() => expect(fs.existsSync(runs) && fs.readFileSync(runs, "utf8")).toBe("started\n"), {
      timeout: 30_000,
    });
    first.process.child.kill("SIGKILL");
    await first.process.exited;
    const second = await reopen(first);
    await second.clients.tasks.resume({ taskId });
    await vi.waitFor(async () => expect(await statusOf(second, taskId)).toBe(TaskStatus.COMPLETED), {
      timeout: 30_000,
    });
    expect(fs.readFileSync(runs, "utf8")).toBe("started\n");
    const requests = await server.requests();
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(recorded(requests, 1).body.messages)).toContain("This tool call was interrupted");
  });
});
