/**
 * Every change seen before and after it happens, through the real sidecar: an edit approval
 * carries the exact change (and what is approved is what is written, even when the file
 * changes meanwhile), a command approval the exact command line and folder; a denial with
 * feedback continues the run; every tool call shows on its row with its status (done, failed,
 * denied, interrupted), also after a reopen and after a sidecar death.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FileStatus } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { AskKind, TaskStatus, ToolCallStatus, type Ask, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import type { ScriptTurn } from "../model-server/script.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "./harness.js";
import { nth, lastOf, firstOf } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

async function setup(turns: ScriptTurn[], files: Record<string, string> = {}) {
  const sidecar = await startSidecar();
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(sidecar.clients, "openai", { turns });
  cleanups.push(() => server.stop());
  const workspace = makeWorkspace(sidecar.roots.base, files);
  return { sidecar, server, profileId, workspace, clients: sidecar.clients };
}

const asks = (events: TaskEvent[]): Ask[] => events.flatMap((e) => (e.event.case === "ask" ? [e.event.value] : []));
const statuses = (events: TaskEvent[]) =>
  events.flatMap((e) => (e.event.case === "statusChanged" ? [e.event.value] : []));
const finished = (events: TaskEvent[]) =>
  events.flatMap((e) => (e.event.case === "toolFinished" ? [e.event.value] : []));
const done = (s: TaskStatus) =>
  s === TaskStatus.COMPLETED || s === TaskStatus.FAILED || s === TaskStatus.CANCELLED || s === TaskStatus.INTERRUPTED;

describe("proposed changes travel with the ask", () => {
  it("an edit approval carries the exact change, the file becomes exactly the proposed text, and the finished call carries the applied edit", async () => {
    const { clients, profileId, workspace } = await setup(
      [
        {
          toolCalls: [
            {
              name: "replace_in_file",
              input: { path: "src/app.txt", diff: "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
            },
            { name: "write_to_file", input: { path: "docs/new.md", content: "# New\n" } },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "edited" } }] },
      ],
      { "src/app.txt": "first\nhello\nlast\n" },
    );
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "edit", profileId });
    const seenOnDisk: string[] = [];
    const events = await followUntilDone(clients, taskId, async (e) => {
      const ask = e.event.value as Ask;
      // Nothing is written before the approval.
      seenOnDisk.push(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8"));
      await clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
    });
    const [replace, write] = firstOf(asks(events), 2, "ask");
    expect(replace.kind).toBe(AskKind.TOOL_APPROVAL);
    expect(replace.edits).toHaveLength(1);
    expect(replace.edits[0]).toMatchObject({
      path: "src/app.txt",
      status: FileStatus.MODIFIED,
      originalText: "first\nhello\nlast\n",
      proposedText: "first\nhello, world\nlast\n",
      truncated: false,
    });
    expect(write.edits[0]).toMatchObject({
      path: "docs/new.md",
      status: FileStatus.ADDED,
      originalText: "",
      proposedText: "# New\n",
    });
    expect(seenOnDisk[0]).toBe("first\nhello\nlast\n");
    // What was approved is what was written.
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe(
      nth(replace.edits, 0, "edit").proposedText,
    );
    expect(fs.readFileSync(path.join(workspace, "docs/new.md"), "utf8")).toBe(nth(write.edits, 0, "edit").proposedText);
    // The event ending each edit carries the applied change; the ask names the row's call.
    const ends = finished(events);
    expect(ends.map((f) => [f.toolCallId, f.status, f.edits.map((x) => x.path)])).toEqual([
      [replace.toolCallId, ToolCallStatus.DONE, ["src/app.txt"]],
      [write.toolCallId, ToolCallStatus.DONE, ["docs/new.md"]],
    ]);
    expect(nth(nth(ends, 0, "tool call end").edits, 0, "edit").proposedText).toBe("first\nhello, world\nlast\n");
    // The reopened task shows the same: each row with its call, status and edits.
    const task = await clients.tasks.getTask({ taskId });
    const calls = task.messages.flatMap((m) => (m.toolCall ? [m.toolCall] : []));
    expect(calls.map((c) => [c.tool, c.status, c.toolCallId])).toEqual([
      ["replace_in_file", ToolCallStatus.DONE, replace.toolCallId],
      ["write_to_file", ToolCallStatus.DONE, write.toolCallId],
    ]);
    expect(nth(calls, 0, "tool call").edits[0]).toMatchObject({
      path: "src/app.txt",
      originalText: "first\nhello\nlast\n",
      proposedText: "first\nhello, world\nlast\n",
    });
    expect(nth(calls, 0, "tool call").output).toContain("Applied 1 block");
  });

  it("an edit of a file too large to send whole carries its unified diff, which git applies onto the file as exactly what is written", async () => {
    const large = Array.from({ length: 12_000 }, (_, i) => `export const line${i} = ${i};\n`).join("");
    const rewrite = Array.from({ length: 12_000 }, (_, i) => `export let other${i} = ${i};\n`).join("");
    const { clients, profileId, workspace } = await setup(
      [
        {
          toolCalls: [
            {
              name: "replace_in_file",
              input: {
                path: "src/large.js",
                diff: "------- SEARCH\nexport const line2000 = 2000;\n=======\nexport const line2000 = 2001;\nexport const added = 1;\n+++++++ REPLACE",
              },
            },
            // Every line changed: a diff as large as the file, which no preview can carry.
            { name: "write_to_file", input: { path: "src/rewritten.js", content: rewrite } },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "edited" } }] },
      ],
      { "src/large.js": large, "src/rewritten.js": large },
    );
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "edit", profileId });
    const events = await followUntilDone(clients, taskId, async (e) => {
      const ask = e.event.value as Ask;
      await clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
    });
    const [replace, write] = firstOf(asks(events), 2, "ask");
    const edit = nth(replace.edits, 0, "edit");
    expect(edit).toMatchObject({ path: "src/large.js", truncated: true, originalText: "", proposedText: "" });
    expect(edit.diff.split("\n").slice(0, 3)).toEqual([
      "--- a/src/large.js",
      "+++ b/src/large.js",
      "@@ -1998,7 +1998,8 @@",
    ]);
    expect(edit.diff.length).toBeLessThan(1000);
    // git reads it as a patch of the file, and applying it gives what the approval wrote.
    const copy = path.join(workspace, "..", "patched");
    fs.mkdirSync(path.join(copy, "src"), { recursive: true });
    fs.writeFileSync(path.join(copy, "src/large.js"), large);
    fs.writeFileSync(path.join(copy, "change.diff"), edit.diff);
    execFileSync("git", ["apply", "change.diff"], { cwd: copy });
    expect(fs.readFileSync(path.join(copy, "src/large.js"), "utf8")).toBe(
      fs.readFileSync(path.join(workspace, "src/large.js"), "utf8"),
    );
    expect(fs.readFileSync(path.join(workspace, "src/large.js"), "utf8")).toContain(
      "export const line2000 = 2001;\nexport const added = 1;\n",
    );
    // A rewrite of every line: no diff could be shown whole, so none is sent.
    expect(nth(write.edits, 0, "edit")).toMatchObject({ path: "src/rewritten.js", truncated: true, diff: "" });
    // The row keeps the diff: the reopened task shows it, and so does the finished event.
    const task = await clients.tasks.getTask({ taskId });
    const call = task.messages.flatMap((m) => (m.toolCall ? [m.toolCall] : []))[0];
    expect(call?.edits[0]?.diff).toBe(edit.diff);
    expect(nth(finished(events), 0, "finished tool call").edits[0]?.diff).toBe(edit.diff);
  });

  it("an edit of a binary file tells its sizes, and shows the text it writes", async () => {
    const { clients, profileId, workspace } = await setup([
      { toolCalls: [{ name: "write_to_file", input: { path: "blob.bin", content: "now text\n" } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "edited" } }] },
    ]);
    fs.writeFileSync(path.join(workspace, "blob.bin"), Buffer.alloc(2000, 0));
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "edit", profileId });
    const events = await followUntilDone(clients, taskId, async (e) => {
      const ask = e.event.value as Ask;
      await clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
    });
    const expected = {
      path: "blob.bin",
      truncated: true,
      originalText: "",
      proposedText: "now text\n",
      originalSize: 2000n,
      proposedSize: 9n,
      originalBinary: true,
    };
    expect(nth(nth(asks(events), 0, "ask").edits, 0, "edit")).toMatchObject(expected);
    // The same on the row a reopened task shows.
    const task = await clients.tasks.getTask({ taskId });
    const call = task.messages.flatMap((m) => (m.toolCall ? [m.toolCall] : []))[0];
    expect(call?.edits[0]).toMatchObject(expected);
  });

  it("an auto-approved edit's finished event carries the applied change", async () => {
    const { clients, profileId, workspace } = await setup([
      { toolCalls: [{ name: "write_to_file", input: { path: "src/app.txt", content: "replaced\n" } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
    ]);
    await setAutoApproval(clients, { editFiles: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "replace", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(asks(events)).toHaveLength(0);
    const end = nth(finished(events), 0, "finished tool call");
    expect(
      end.edits.map((e) => ({
        path: e.path,
        status: e.status,
        originalText: e.originalText,
        proposedText: e.proposedText,
      })),
    ).toEqual([
      { path: "src/app.txt", status: FileStatus.MODIFIED, originalText: "hello\n", proposedText: "replaced\n" },
    ]);
  });

  it("when the file changes while the approval is pending, the edit is computed again and asked again; the new change is what is written", async () => {
    const { clients, profileId, workspace } = await setup([
      {
        toolCalls: [
          {
            name: "replace_in_file",
            input: { path: "src/app.txt", diff: "------- SEARCH\nhello\n=======\nHELLO\n+++++++ REPLACE" },
          },
        ],
      },
      { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "shout", profileId });
    const file = path.join(workspace, "src/app.txt");
    let first = true;
    const events = await followUntilDone(clients, taskId, async (e) => {
      const ask = e.event.value as Ask;
      // The person (or their editor) changes the file before answering the first ask.
      if (first) fs.writeFileSync(file, "hello\nadded meanwhile\n");
      first = false;
      await clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
    });
    const [stale, again] = firstOf(asks(events), 2, "ask");
    expect(nth(stale.edits, 0, "edit").proposedText).toBe("HELLO\n");
    expect(again.toolCallId).toBe(stale.toolCallId);
    // The question asked again says why, for every client to show with it; the first one does not.
    expect(stale.askedAgainBecause).toBe("");
    expect(again.askedAgainBecause).toBe(
      "src/app.txt changed on disk while this approval waited, so nothing was written. The change shown is now made from the file as it is: approve again to write it.",
    );
    expect(again.edits[0]).toMatchObject({
      originalText: "hello\nadded meanwhile\n",
      proposedText: "HELLO\nadded meanwhile\n",
    });
    // The first proposal (which would have dropped the new line) was never written.
    expect(fs.readFileSync(file, "utf8")).toBe("HELLO\nadded meanwhile\n");
    expect(nth(nth(finished(events), 0, "finished tool call").edits, 0, "edit").proposedText).toBe(
      "HELLO\nadded meanwhile\n",
    );
  });

  it("an edit that cannot be applied any more after a change is refused and shown as failed, without asking", async () => {
    const { clients, server, profileId, workspace } = await setup([
      {
        toolCalls: [
          {
            name: "replace_in_file",
            input: { path: "src/app.txt", diff: "------- SEARCH\nhello\n=======\nHELLO\n+++++++ REPLACE" },
          },
        ],
      },
      { text: "I will read it again." },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "shout", profileId });
    const file = path.join(workspace, "src/app.txt");
    const events = await followUntilDone(clients, taskId, async (e) => {
      fs.writeFileSync(file, "goodbye\n"); // the SEARCH text is gone
      await clients.tasks.respond({ taskId, askId: (e.event.value as Ask).askId, approve: true, text: "" });
    });
    expect(asks(events)).toHaveLength(1);
    expect(fs.readFileSync(file, "utf8")).toBe("goodbye\n");
    const task = await clients.tasks.getTask({ taskId });
    const call = task.messages.find((m) => m.toolCall)!.toolCall!;
    expect(call.status).toBe(ToolCallStatus.FAILED);
    expect(call.reason).toMatch(/replace_in_file/);
    expect(JSON.stringify(recorded(await server.requests(), 1).body)).toMatch(/SEARCH|not found|does not match/i);
  });

  it("a command approval carries the exact command line and its working folder", async () => {
    const command = "printf 'a\\tb' > out.txt && echo done";
    const { clients, profileId, workspace } = await setup([
      { toolCalls: [{ name: "execute_command", input: { command, requires_approval: true } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "ran" } }] },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "run", profileId });
    const events = await followUntilDone(clients, taskId, (e) =>
      clients.tasks.respond({ taskId, askId: (e.event.value as Ask).askId, approve: true, text: "" }).then(() => {}),
    );
    const ask = nth(asks(events), 0, "ask");
    expect(ask.kind).toBe(AskKind.COMMAND_APPROVAL);
    expect(ask.command).toMatchObject({ command, workingDirectory: workspace });
    const started = events.find((e) => e.event.case === "toolStarted")!.event.value as {
      command?: { command: string; workingDirectory: string };
    };
    expect(started.command).toMatchObject({ command, workingDirectory: workspace });
    const row = (await clients.tasks.getTask({ taskId })).messages.find((m) => m.kind === "command")!;
    expect(row.toolCall).toMatchObject({
      status: ToolCallStatus.DONE,
      command: { command, workingDirectory: workspace },
    });
    expect(row.toolCall!.output).toContain("done");
  });
});

describe("what a one-line summary and a failed row say", () => {
  it("a path or command with line breaks is named in full on one line; a failed command's row says how it ended", async () => {
    const path1 = "new\nline.js";
    const command = "echo first\nrm -rf ./gone && printf 'oops\\n' >&2; exit 3";
    const { clients, profileId, workspace } = await setup(
      [
        { toolCalls: [{ name: "write_to_file", input: { path: path1, content: "x\n" } }] },
        { toolCalls: [{ name: "execute_command", input: { command, requires_approval: true } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "ran" } }] },
      ],
      { new: "a file named like the path's first line\n" },
    );
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "run", profileId });
    const events = await followUntilDone(clients, taskId, (e) =>
      clients.tasks.respond({ taskId, askId: (e.event.value as Ask).askId, approve: true, text: "" }).then(() => {}),
    );
    const [edit, run] = asks(events);
    // Not "write_to_file new": a different file, which exists.
    expect(edit?.summary).toBe("write_to_file new\\nline.js");
    expect(run?.summary).toBe("execute_command echo first\\nrm -rf ./gone && printf 'oops\\n' >&2; exit 3");
    const row = (await clients.tasks.getTask({ taskId })).messages.find((m) => m.kind === "command")!;
    expect(row.toolCall?.status).toBe(ToolCallStatus.FAILED);
    // Not "Output:", the first line of the result; the stream's toolFinished says the same (the CLI prints it).
    expect(row.toolCall?.reason).toBe("Exit code: 3");
    expect(finished(events).find((f) => !f.ok)?.reason).toBe("Exit code: 3");
  });
});

describe("a rejection with feedback continues the task", () => {
  it("the model gets the denial and the feedback and answers; the status never says completed for the denial; denied and failed calls are on their rows", async () => {
    const { clients, server, profileId, workspace } = await setup([
      {
        toolCalls: [
          { name: "no_such_tool", input: {} },
          { name: "write_to_file", input: { path: "src/app.txt", content: "overwritten\n" } },
          { name: "execute_command", input: { command: "touch never.txt", requires_approval: true } },
        ],
      },
      { text: "Sorry: I will keep the file and use a new one instead." },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "change it", profileId });
    const events = await followUntilDone(clients, taskId, (e) =>
      clients.tasks
        .respond({
          taskId,
          askId: (e.event.value as Ask).askId,
          approve: false,
          text: "keep app.txt, write a new file",
        })
        .then(() => {}),
    );
    expect(asks(events)).toHaveLength(1); // the command after the denial is not proposed
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("hello\n");
    expect(fs.existsSync(path.join(workspace, "never.txt"))).toBe(false);
    // The run went on to the model's answer: no "completed" until the model ended its turn.
    const seen = statuses(events);
    const firstCompleted = seen.findIndex((s) => s.status === TaskStatus.COMPLETED);
    expect(seen.slice(0, firstCompleted).map((s) => s.status)).not.toContain(TaskStatus.COMPLETED);
    expect(nth(seen, firstCompleted, "status").reason).toBe("the model ended its turn");
    const requests = await server.requests();
    expect(requests).toHaveLength(2);
    const second = JSON.stringify(recorded(requests, 1).body);
    expect(second).toContain("The user denied this operation");
    expect(second).toContain("keep app.txt, write a new file");
    const task = await clients.tasks.getTask({ taskId });
    expect(task.task?.status).toBe(TaskStatus.COMPLETED);
    const calls = task.messages.flatMap((m) => (m.toolCall ? [m.toolCall] : []));
    expect(calls.map((c) => [c.tool, c.status])).toEqual([
      ["no_such_tool", ToolCallStatus.FAILED],
      ["write_to_file", ToolCallStatus.DENIED],
    ]);
    expect(nth(calls, 0, "tool call").reason).toContain('Unknown tool "no_such_tool"');
    expect(nth(calls, 1, "tool call").feedback).toBe("keep app.txt, write a new file");
    expect(nth(calls, 1, "tool call").edits[0]).toMatchObject({ path: "src/app.txt", proposedText: "overwritten\n" });
    const last = lastOf(task.messages, "message");
    expect(last.text).toBe("Sorry: I will keep the file and use a new one instead.");
  });
});

describe("a reopened task looks like the live one", () => {
  it("tool call ids stay unique when the model repeats its ids", async () => {
    const { clients, profileId, workspace } = await setup([
      { toolCalls: [{ id: "call_1", name: "read_file", input: { path: "README.md" } }] },
      { toolCalls: [{ id: "call_1", name: "read_file", input: { path: "src/app.txt" } }] },
      { text: "read both" },
    ]);
    await setAutoApproval(clients, { readFiles: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "read", profileId });
    const events = await followUntilDone(clients, taskId);
    const ids = events.flatMap((e) => (e.event.case === "toolStarted" ? [e.event.value.toolCallId] : []));
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    const rows = (await clients.tasks.getTask({ taskId })).messages.flatMap((m) =>
      m.toolCall ? [m.toolCall.toolCallId] : [],
    );
    expect(rows).toEqual(ids);
  });

  it("a call cancelled while it waits for approval is interrupted on its row, and its ask is resolved as dropped", async () => {
    const { clients, profileId, workspace } = await setup([
      { toolCalls: [{ name: "write_to_file", input: { path: "x.txt", content: "x\n" } }] },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "write", profileId });
    const events = await followUntilDone(clients, taskId, () => clients.tasks.cancel({ taskId }).then(() => {}));
    const ask = nth(asks(events), 0, "ask");
    const resolved = events.find((e) => e.event.case === "askResolved")!.event.value as {
      askId: string;
      dropped: boolean;
      approved: boolean;
    };
    expect(resolved).toMatchObject({ askId: ask.askId, dropped: true, approved: false });
    expect(statuses(events).pop()?.status).toBe(TaskStatus.CANCELLED);
    const row = (await clients.tasks.getTask({ taskId })).messages.find((m) => m.toolCall)!;
    expect(row.toolCall?.status).toBe(ToolCallStatus.INTERRUPTED);
    expect(fs.existsSync(path.join(workspace, "x.txt"))).toBe(false);
  });

  it("a call cancelled while it runs is interrupted on its row", async () => {
    const { clients, profileId, workspace } = await setup([
      {
        toolCalls: [
          { name: "execute_command", input: { command: "echo started; sleep 30", requires_approval: false } },
        ],
      },
    ]);
    await setAutoApproval(clients, { executeSafeCommands: true, executeAllCommands: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "wait", profileId });
    const events: TaskEvent[] = [];
    const follow = (async () => {
      for await (const r of clients.tasks.subscribe({ taskId })) {
        events.push(r.event!);
        if (r.event!.event.case === "toolOutput") void clients.tasks.cancel({ taskId });
        if (r.event!.event.case === "statusChanged" && done(r.event!.event.value.status)) break;
      }
    })();
    await follow;
    const row = (await clients.tasks.getTask({ taskId })).messages.find((m) => m.kind === "command")!;
    expect(row.partial).toBe(false);
    expect(row.toolCall?.status).toBe(ToolCallStatus.INTERRUPTED);
    expect(row.toolCall?.reason).toMatch(/cancelled/);
  });

  it("a sidecar killed the moment an auto-approved command starts: the reopened task still has the call's row, interrupted", async () => {
    const a = await startSidecar();
    const { server, profileId } = await configureModel(a.clients, "openai", {
      turns: [
        {
          text: "Running it.",
          toolCalls: [{ name: "execute_command", input: { command: "sleep 30", requires_approval: false } }],
        },
      ],
    });
    cleanups.push(() => server.stop());
    await setAutoApproval(a.clients, { executeSafeCommands: true, executeAllCommands: true });
    const workspace = makeWorkspace(a.roots.base);
    const { taskId } = await a.clients.tasks.newTask({ workspaceRoot: workspace, text: "run", profileId });
    for await (const r of a.clients.tasks.subscribe({ taskId })) {
      if (r.event?.event.case === "toolStarted") break;
    }
    a.process.child.kill("SIGKILL");
    await a.process.exited;

    const b = await startSidecar({ roots: a.roots });
    cleanups.push(() => b.stop());
    const row = (await b.clients.tasks.getTask({ taskId })).messages.find((m) => m.kind === "command");
    expect(row?.toolCall?.command?.command).toBe("sleep 30");
    expect(row?.toolCall?.status).toBe(ToolCallStatus.INTERRUPTED);
  });

  it("after a sidecar death, a client subscribing again gets INTERRUPTED at once, the pending ask dropped and the call interrupted", async () => {
    const a = await startSidecar();
    const { server, profileId } = await configureModel(a.clients, "openai", {
      turns: [{ toolCalls: [{ name: "write_to_file", input: { path: "pending.txt", content: "never\n" } }] }],
    });
    cleanups.push(() => server.stop());
    const workspace = makeWorkspace(a.roots.base);
    const { taskId } = await a.clients.tasks.newTask({ workspaceRoot: workspace, text: "write", profileId });
    // Follow until the approval is pending, as a client would, then the sidecar dies.
    const seen = await followUntilDone(a.clients, taskId, undefined, 0n, (s) => s === TaskStatus.WAITING);
    const ask = nth(asks(seen), 0, "ask");
    const lastSeq = lastOf(seen, "event").seq;
    a.process.child.kill("SIGKILL");
    await a.process.exited;

    const b = await startSidecar({ roots: a.roots });
    cleanups.push(() => b.stop());
    // The reopened task: the call that waited for approval is interrupted.
    const reopened = await b.clients.tasks.getTask({ taskId });
    expect(reopened.task?.status).toBe(TaskStatus.INTERRUPTED);
    expect(reopened.messages.find((m) => m.toolCall)?.toolCall?.status).toBe(ToolCallStatus.INTERRUPTED);
    // The client subscribes again where it was: the news comes at once, no new run needed.
    const events = await followUntilDone(b.clients, taskId, undefined, lastSeq);
    const dropped = events.find((e) => e.event.case === "askResolved")!.event.value as {
      askId: string;
      dropped: boolean;
    };
    expect(dropped).toMatchObject({ askId: ask.askId, dropped: true });
    const row = events.find((e) => e.event.case === "messageFinalized")!.event.value as {
      message?: { toolCall?: { status: ToolCallStatus } };
    };
    expect(row.message?.toolCall?.status).toBe(ToolCallStatus.INTERRUPTED);
    const last = lastOf(events, "event");
    expect(last.event.case === "statusChanged" && last.event.value.status).toBe(TaskStatus.INTERRUPTED);
    expect(fs.existsSync(path.join(workspace, "pending.txt"))).toBe(false);
    // A second client, behind too, gets the status at once as well, after the events it
    // missed before the death (the dead sidecar left its newest ones in the task's state).
    const other = await followUntilDone(b.clients, taskId, undefined, lastSeq - 3n);
    const missed = seen.filter((e) => e.seq > lastSeq - 3n);
    expect(missed).toHaveLength(3);
    expect(other.map((e) => e.seq)).toEqual([...missed, ...events].map((e) => e.seq));
    expect(other.slice(0, 3).map((e) => e.event.case)).toEqual(missed.map((e) => e.event.case));
  });
});
