import * as fs from "node:fs";
import * as path from "node:path";
import { execFileSync } from "node:child_process";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { toJsonString } from "@bufbuild/protobuf";
import { CheckpointKind, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { AskKind, MessageRole, TaskEventSchema, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import type { WireFormat } from "../model-server/script.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, eventCases, followUntilDone, makeWorkspace, setAutoApproval, TEST_KEY } from "./harness.js";
import { nth, lastOf } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";
import { isRunning } from "../helpers/processes.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

async function setup(format: WireFormat, turns: Parameters<typeof configureModel>[2]["turns"]) {
  const sidecar = await startSidecar();
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(sidecar.clients, format, { turns });
  cleanups.push(() => server.stop());
  const workspace = makeWorkspace(sidecar.roots.base);
  return { sidecar, server, profileId, workspace };
}

/** The full scenario of the issue: read, edit two files, run a command, ask a follow-up, complete. */
function fullScenario() {
  return [
    {
      text: "Let me look at the file.",
      toolCalls: [{ name: "read_file", input: { path: "src/app.txt" } }],
      usage: { input: 100, output: 20 },
    },
    {
      text: "Now I will edit two files.",
      toolCalls: [
        { name: "write_to_file", input: { path: "src/new.txt", content: "created by dline\n" } },
        {
          name: "replace_in_file",
          input: { path: "src/app.txt", diff: "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
        },
      ],
      usage: { input: 200, output: 40 },
    },
    {
      toolCalls: [
        {
          name: "execute_command",
          input: { command: "echo ran > out.log && cat src/app.txt", requires_approval: false },
        },
      ],
      usage: { input: 300, output: 10 },
    },
    {
      toolCalls: [
        { name: "ask_followup_question", input: { question: "Which greeting?", options: ["formal", "casual"] } },
      ],
    },
    {
      text: "Done.",
      toolCalls: [{ name: "attempt_completion", input: { result: "Edited app.txt and created new.txt." } }],
      usage: { input: 400, output: 5 },
    },
  ];
}

describe.each<WireFormat>(["openai", "anthropic"])("a task through the sidecar (%s wire format)", (format) => {
  it("reads, edits two files, runs a command, asks a follow-up and completes", async () => {
    const { sidecar, server, profileId, workspace } = await setup(format, fullScenario());
    const { clients } = sidecar;
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "Greet the world", profileId });
    const asks: AskKind[] = [];
    const events = await followUntilDone(clients, taskId, async (e) => {
      if (e.event.case !== "ask") return;
      asks.push(e.event.value.kind);
      const answer = e.event.value.kind === AskKind.FOLLOWUP ? "casual" : "";
      await clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: true, text: answer });
    });

    // Files in the workspace.
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("hello, world\n");
    expect(fs.readFileSync(path.join(workspace, "src/new.txt"), "utf8")).toBe("created by dline\n");
    expect(fs.readFileSync(path.join(workspace, "out.log"), "utf8")).toBe("ran\n");

    // Approvals were asked (nothing is auto-approved by default), then the follow-up.
    expect(asks).toEqual([
      AskKind.TOOL_APPROVAL, // read_file
      AskKind.TOOL_APPROVAL, // write_to_file
      AskKind.TOOL_APPROVAL, // replace_in_file
      AskKind.COMMAND_APPROVAL,
      AskKind.FOLLOWUP,
    ]);

    // Events: ordered by seq without gaps, streamed text, tools, checkpoints, usage, completion.
    const seqs = events.map((e) => Number(e.seq));
    expect(seqs).toEqual(seqs.map((_, i) => nth(seqs, 0, "seq") + i));
    const cases = eventCases(events);
    for (const c of [
      "messageAdded",
      "messageDelta",
      "messageFinalized",
      "toolStarted",
      "toolOutput",
      "toolFinished",
      "checkpointSaved",
      "usage",
      "ask",
      "askResolved",
    ]) {
      expect(cases, c).toContain(c);
    }
    const last = lastOf(events, "event");
    expect(last.event.case === "statusChanged" && last.event.value.status).toBe(TaskStatus.COMPLETED);
    const output = events.flatMap((e) => (e.event.case === "toolOutput" ? [e.event.value.chunk] : [])).join("");
    expect(output).toContain("hello, world");

    // The model saw the conversation rebuilt from the journal: the follow-up answer came back.
    const requests = await server.requests();
    expect(requests).toHaveLength(5);
    expect(JSON.stringify(recorded(requests, 4).body)).toContain("casual");
    expect(JSON.stringify(recorded(requests, 0).body)).toContain("Greet the world");

    // History row, messages, checkpoints.
    const task = await clients.tasks.getTask({ taskId });
    expect(task.task?.status).toBe(TaskStatus.COMPLETED);
    expect(task.task?.title).toBe("Greet the world");
    expect(Number(task.task?.tokensIn)).toBe(1000);
    expect(Number(task.task?.tokensOut)).toBe(75);
    expect(task.task?.cost).toBeCloseTo((1000 * 3 + 75 * 15) / 1e6, 8);
    const kinds = task.messages.map((m) => `${MessageRole[m.role]}:${m.kind}`);
    expect(kinds[0]).toBe("USER:text");
    expect(kinds).toContain("TOOL:command");
    expect(kinds).toContain("ASSISTANT:followup");
    expect(kinds[kinds.length - 1]).toBe("ASSISTANT:completion");
    // The row's last activity is the completion, not the task's creation (history lists sort by it).
    const completion = lastOf(task.messages, "message");
    expect(Number(completion.time)).toBeGreaterThan(Number(task.task?.createdAt));
    expect(Number(task.task?.updatedAt)).toBeGreaterThanOrEqual(Number(completion.time));
    const list = await clients.checkpoints.listCheckpoints({ taskId });
    expect(list.checkpoints.length).toBeGreaterThanOrEqual(3); // baseline, turns, completion
    const listed = await clients.history.listTasks({ workspaceRoot: workspace });
    expect(listed.tasks.map((t) => t.id)).toEqual([taskId]);

    // The key never reached the log.
    const log = fs.readFileSync(path.join(sidecar.roots.homeDir, "logs", "dline-core.log"), "utf8");
    expect(log).not.toContain(TEST_KEY);
  });
});

describe("approvals, cancel and errors", () => {
  it("a denied approval leaves the file untouched, and the model hears the denial and the feedback at once", async () => {
    const { sidecar, server, profileId, workspace } = await setup("openai", [
      { toolCalls: [{ name: "write_to_file", input: { path: "src/app.txt", content: "overwritten\n" } }] },
      {
        text: "Understood, I will not.",
        toolCalls: [{ name: "attempt_completion", input: { result: "Nothing changed." } }],
      },
    ]);
    const { clients } = sidecar;
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "overwrite it", profileId });
    await followUntilDone(clients, taskId, async (e) => {
      if (e.event.case === "ask")
        await clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: false, text: "keep it" });
    });
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("hello\n");
    // The run went on: the model read the denial with the feedback and answered.
    const requests = await server.requests();
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(recorded(requests, 1).body)).toContain("denied");
    expect(JSON.stringify(recorded(requests, 1).body)).toContain("keep it");
  });

  it("Cancel stops a running command and kills its process group", async () => {
    const { sidecar, profileId, workspace } = await setup("openai", [
      {
        toolCalls: [
          {
            name: "execute_command",
            input: { command: "sleep 60 & echo $! > child.pid; wait", requires_approval: false },
          },
        ],
      },
    ]);
    const { clients } = sidecar;
    await setAutoApproval(clients, { executeSafeCommands: true, executeAllCommands: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "wait a minute", profileId });
    const pidFile = path.join(workspace, "child.pid");
    const follow = followUntilDone(clients, taskId);
    // The shell creates child.pid before it writes the number: wait for a whole pid, since
    // reading "" would give 0, and kill(0, 0) tests this very process group.
    let pid = 0;
    for (let i = 0; i < 200 && !(pid > 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      if (fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").endsWith("\n"))
        pid = Number(fs.readFileSync(pidFile, "utf8"));
    }
    expect(pid).toBeGreaterThan(0);
    await clients.tasks.cancel({ taskId });
    const events = await follow;
    const last = lastOf(events, "event");
    expect(last.event.case === "statusChanged" && last.event.value.status).toBe(TaskStatus.CANCELLED);
    let alive = true;
    for (let i = 0; i < 40 && alive; i++) {
      alive = isRunning(pid);
      if (alive) await new Promise((r) => setTimeout(r, 50));
    }
    expect(alive).toBe(false);
    expect((await clients.tasks.getTask({ taskId })).task?.status).toBe(TaskStatus.CANCELLED);
  });

  it("a running command and what it started die with a sidecar killed by SIGKILL; a command that ended leaves its background child alone", async () => {
    const { sidecar, profileId, workspace } = await setup("openai", [
      {
        toolCalls: [
          {
            name: "execute_command",
            input: { command: "sleep 61 & echo $! > done.pid; echo started", requires_approval: false },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: "execute_command",
            input: { command: "sleep 62 & echo $! > child.pid; echo $$ > shell.pid; wait", requires_approval: false },
          },
        ],
      },
    ]);
    const { clients } = sidecar;
    await setAutoApproval(clients, { executeSafeCommands: true, executeAllCommands: true });
    await clients.tasks.newTask({ workspaceRoot: workspace, text: "start and wait", profileId });
    const pidIn = async (name: string) => {
      const file = path.join(workspace, name);
      for (let i = 0; i < 200; i++) {
        if (fs.existsSync(file) && fs.readFileSync(file, "utf8").endsWith("\n"))
          return Number(fs.readFileSync(file, "utf8"));
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`${name} was never written`);
    };
    const [background, child, shell] = [await pidIn("done.pid"), await pidIn("child.pid"), await pidIn("shell.pid")];
    cleanups.push(async () => {
      for (const pid of [background, child, shell]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    });
    sidecar.process.child.kill("SIGKILL");
    await sidecar.process.exited;
    let running = true;
    for (let i = 0; i < 100 && running; i++) {
      running = isRunning(child) || isRunning(shell);
      if (running) await new Promise((r) => setTimeout(r, 50));
    }
    expect({ child: isRunning(child), shell: isRunning(shell) }).toEqual({ child: false, shell: false });
    // The first command had returned: a server it left in the background was meant to outlive it.
    expect(isRunning(background)).toBe(true);
  });

  it("a bad key is a clear task error, without the key", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const { server, profileId } = await configureModel(sidecar.clients, "anthropic", { turns: [{ text: "never" }] });
    cleanups.push(() => server.stop());
    await sidecar.clients.settings.setSecret({ profileId, name: "api_key", value: "sk-wrong-key-XYZ" });
    const workspace = makeWorkspace(sidecar.roots.base);
    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "hi", profileId });
    const events = await followUntilDone(sidecar.clients, taskId);
    const error = events.find((e) => e.event.case === "error");
    expect(error).toBeDefined();
    const text = toJsonString(TaskEventSchema, error!);
    expect(text).not.toContain("sk-wrong-key-XYZ");
    expect(error!.event.case === "error" && error!.event.value.code).toBe("auth");
    const last = lastOf(events, "event");
    expect(last.event.case === "statusChanged" && last.event.value.status).toBe(TaskStatus.FAILED);
  });

  it("NewTask without any model profile is failed_precondition", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const workspace = makeWorkspace(sidecar.roots.base);
    const err = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "hi" }).catch((e) => e);
    expect(ConnectError.from(err).code).toBe(Code.FailedPrecondition);
  });

  it("Subscribe resumes with after_seq without loss or duplicates, with several subscribers", async () => {
    const { sidecar, profileId, workspace } = await setup("openai", [
      { text: "a fairly long answer streamed in many small pieces to make many events", textChunkChars: 3 },
    ]);
    const { clients } = sidecar;
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "talk", profileId });
    const [all, other] = await Promise.all([followUntilDone(clients, taskId), followUntilDone(clients, taskId)]);
    expect(other.map((e) => e.seq)).toEqual(all.map((e) => e.seq));
    const middle = nth(all, Math.floor(all.length / 2), "event").seq;
    const rest = await followUntilDone(clients, taskId, undefined, middle);
    expect(rest.map((e) => e.seq)).toEqual(all.filter((e) => e.seq > middle).map((e) => e.seq));
  });
});

describe("crash and resume", () => {
  it("a task whose sidecar was SIGKILLed mid-turn reopens interrupted and resumes correctly", async () => {
    const sidecarA = await startSidecar();
    const { server, profileId } = await configureModel(sidecarA.clients, "openai", {
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "first.txt", content: "1\n" } }] },
        // The second request stalls: the sidecar is killed while it waits.
        { text: "slow", interrupt: { afterFrames: 1, mode: "stall" } },
        { text: "Resumed.", toolCalls: [{ name: "attempt_completion", input: { result: "Finished after resume." } }] },
      ],
    });
    cleanups.push(() => server.stop());
    const workspace = makeWorkspace(sidecarA.roots.base);
    await setAutoApproval(sidecarA.clients, { editFiles: true, readFiles: true });
    const { taskId } = await sidecarA.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "write files",
      profileId,
    });
    for (let i = 0; i < 200 && (await server.requests()).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(fs.readFileSync(path.join(workspace, "first.txt"), "utf8")).toBe("1\n");
    sidecarA.process.child.kill("SIGKILL");
    await sidecarA.process.exited;

    const sidecarB = await startSidecar({ roots: sidecarA.roots });
    cleanups.push(() => sidecarB.stop());
    const before = await sidecarB.clients.tasks.getTask({ taskId });
    expect(before.task?.status).toBe(TaskStatus.INTERRUPTED);
    await sidecarB.clients.tasks.resume({ taskId });
    const events = await followUntilDone(
      sidecarB.clients,
      taskId,
      undefined,
      before.lastSeq,
      (s) => s === TaskStatus.COMPLETED || s === TaskStatus.FAILED,
    );
    const last = lastOf(events, "event");
    expect(last.event.case === "statusChanged" && last.event.value.status).toBe(TaskStatus.COMPLETED);
    // seq continued after the restart instead of starting over.
    expect(Number(nth(events, 0, "event").seq)).toBeGreaterThan(Number(before.lastSeq));
    const requests = await server.requests();
    expect(requests).toHaveLength(3);
    // The resumed request carries the first turn's tool call and its result.
    expect(JSON.stringify(recorded(requests, 2).body)).toContain("first.txt");
    const after = await sidecarB.clients.tasks.getTask({ taskId });
    expect(lastOf(after.messages, "message").kind).toBe("completion");
    execFileSync("git", ["status"], { cwd: workspace }); // the project's git is intact
  });
});

describe("several sidecars", () => {
  it("a message sent to another sidecar reaches the one running the task; once idle, the other continues it", async () => {
    const a = await startSidecar();
    cleanups.push(() => a.stop());
    const { server, profileId } = await configureModel(a.clients, "openai", {
      turns: [
        { toolCalls: [{ name: "ask_followup_question", input: { question: "Go on?" } }] },
        { text: "ok", toolCalls: [{ name: "attempt_completion", input: { result: "first run done" } }] },
        { text: "second", toolCalls: [{ name: "attempt_completion", input: { result: "continued in B" } }] },
      ],
    });
    cleanups.push(() => server.stop());
    const workspace = makeWorkspace(a.roots.base);
    const { taskId } = await a.clients.tasks.newTask({ workspaceRoot: workspace, text: "start", profileId });
    const b = await startSidecar({ roots: a.roots });
    cleanups.push(() => b.stop());
    // A waits on the follow-up: it owns the task.
    let askId = "";
    for (let i = 0; i < 200 && !askId; i++) {
      askId = (await a.clients.tasks.getTask({ taskId })).pendingAsk?.askId ?? "";
      if (!askId) await new Promise((r) => setTimeout(r, 50));
    }
    // A runs the task: B's message is forwarded there, where it answers the pending follow-up.
    await b.clients.tasks.sendMessage({ taskId, text: "from B" });
    await followUntilDone(a.clients, taskId);
    expect(JSON.stringify(recorded(await server.requests(), 1).body)).toContain("from B");
    // Idle now: B continues it, and sees A's conversation.
    await b.clients.tasks.sendMessage({ taskId, text: "continue from B" });
    const events = await followUntilDone(
      b.clients,
      taskId,
      undefined,
      (await b.clients.tasks.getTask({ taskId })).lastSeq - 1n,
    );
    expect(
      events.some((e) => e.event.case === "messageAdded" && e.event.value.message?.text === "continued in B"),
    ).toBe(true);
    const requests = await server.requests();
    expect(JSON.stringify(recorded(requests, 2).body)).toContain("first run done");
  });
});

describe("tasks of an earlier version", () => {
  it("imports api_conversation_history.jsonl into the journal the first time the task is continued", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const { server, profileId } = await configureModel(sidecar.clients, "anthropic", {
      turns: [
        { text: "Seeded.", toolCalls: [{ name: "attempt_completion", input: { result: "seeded" } }] },
        { text: "Continuing.", toolCalls: [{ name: "attempt_completion", input: { result: "continued" } }] },
      ],
    });
    cleanups.push(() => server.stop());
    const workspace = makeWorkspace(sidecar.roots.base);
    // An earlier version's task: a history row (through the task store) and its legacy files.
    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "seed", profileId });
    await followUntilDone(sidecar.clients, taskId);
    await sidecar.stop();
    const dir = path.join(sidecar.roots.docsDir, "tasks", taskId);
    for (const f of ["journal.db", "journal.db-wal", "journal.db-shm"]) fs.rmSync(path.join(dir, f), { force: true });
    const legacy = [
      { role: "user", content: [{ type: "text", text: "<task>legacy question about llamas</task>" }] },
      { role: "assistant", content: [{ type: "text", text: "legacy answer" }] },
    ];
    fs.writeFileSync(
      path.join(dir, "api_conversation_history.jsonl"),
      legacy.map((l) => JSON.stringify(l)).join("\n") + "\n",
    );
    const again = await startSidecar({ roots: sidecar.roots });
    cleanups.push(() => again.stop());
    await again.clients.tasks.sendMessage({ taskId, text: "and now?" });
    const events = await followUntilDone(
      again.clients,
      taskId,
      undefined,
      (await again.clients.tasks.getTask({ taskId })).lastSeq - 1n,
    );
    const last = lastOf(events, "event");
    expect(last.event.case === "statusChanged" && last.event.value.status).toBe(TaskStatus.COMPLETED);
    const requests = await server.requests();
    expect(requests).toHaveLength(2);
    const body = JSON.stringify(recorded(requests, 1).body);
    expect(body).toContain("legacy question about llamas");
    expect(body).toContain("legacy answer");
    expect(body).toContain("and now?");
    // The legacy file is left unchanged.
    expect(fs.existsSync(path.join(dir, "api_conversation_history.jsonl"))).toBe(true);
  });
});

describe("subagents", () => {
  it("new_subagent runs a subagent stored under subagents/<id>/ and returns its result", async () => {
    const { sidecar, server, profileId, workspace } = await setup("openai", [
      {
        text: "Delegating.",
        toolCalls: [{ name: "new_subagent", input: { prompt: "SUBTASK-41: create sub.txt saying sub" } }],
      },
      { toolCalls: [{ name: "write_to_file", input: { path: "sub.txt", content: "sub\n" } }] }, // the subagent
      { toolCalls: [{ name: "attempt_completion", input: { result: "SUB-RESULT-9: sub.txt created" } }] }, // the subagent
      { text: "All good.", toolCalls: [{ name: "attempt_completion", input: { result: "parent done" } }] },
    ]);
    const { clients } = sidecar;
    await setAutoApproval(clients, { editFiles: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "delegate the file", profileId });
    const events = await followUntilDone(clients, taskId);
    const last = lastOf(events, "event");
    expect(last.event.case === "statusChanged" && last.event.value.status).toBe(TaskStatus.COMPLETED);
    expect(fs.readFileSync(path.join(workspace, "sub.txt"), "utf8")).toBe("sub\n");
    const requests = await server.requests();
    expect(requests).toHaveLength(4);
    // The subagent saw only its prompt; the parent got the subagent's result back.
    expect(JSON.stringify(recorded(requests, 1).body)).toContain("SUBTASK-41");
    expect(JSON.stringify(recorded(requests, 1).body)).not.toContain("delegate the file");
    expect(JSON.stringify(recorded(requests, 3).body)).toContain("SUB-RESULT-9");
    const subDir = path.join(sidecar.roots.docsDir, "tasks", taskId, "subagents");
    const subId = nth(fs.readdirSync(subDir), 0, "subagent folder");
    expect(subId).toMatch(/^sub-/);
    for (const f of ["messages.db", "journal.db", "task_metadata.json"])
      expect(fs.existsSync(path.join(subDir, subId, f)), f).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(subDir, subId, "task_metadata.json"), "utf8")).outcome).toBe(
      "completed",
    );
  });
});

describe("restores and deletion through the runtime", () => {
  it("Restore Files & Task to the baseline keeps the task's first message; deleting a task ends its streams", async () => {
    const { sidecar, profileId, workspace } = await setup("openai", [
      { toolCalls: [{ name: "write_to_file", input: { path: "made.txt", content: "made\n" } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "made it" } }] },
    ]);
    const { clients } = sidecar;
    await setAutoApproval(clients, { editFiles: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "make a file", profileId });
    await followUntilDone(clients, taskId);
    expect(fs.existsSync(path.join(workspace, "made.txt"))).toBe(true);
    const { checkpoints } = await clients.checkpoints.listCheckpoints({ taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    const res = await clients.checkpoints.restore({
      taskId,
      checkpointId: baseline.id,
      mode: RestoreMode.FILES_AND_TASK,
    });
    expect(res.fileError).toBe("");
    expect(fs.existsSync(path.join(workspace, "made.txt"))).toBe(false);
    const after = await clients.tasks.getTask({ taskId });
    expect(after.messages.map((m) => m.text)).toEqual(["make a file"]);

    // A subscriber of a task that gets deleted sees its stream end.
    const stream = (async () => {
      const seen: string[] = [];
      for await (const r of clients.tasks.subscribe({ taskId, afterSeq: after.lastSeq }))
        seen.push(r.event!.event.case ?? "");
      return seen;
    })();
    await new Promise((r) => setTimeout(r, 200));
    await clients.tasks.deleteTasks({ taskIds: [taskId], mode: 1 });
    await expect(stream).resolves.toBeDefined();
  });
});
