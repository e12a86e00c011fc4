/**
 * `dline-core acp` driven by an ACP client (the official SDK's client side) over the real
 * binary's stdio, against the scripted model server: a prompt with streamed updates, one
 * permission approved and one denied, a completion, cancel, session/list, session/load replay
 * in a new process, checkpoints through the `_dline/checkpoints/*` extension methods, and the
 * same task seen and resumed through TaskService of a `dline-core serve` sidecar.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as acp from "@agentclientprotocol/sdk";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import {
  assertBinaryBuilt,
  makeTestRoots,
  startSidecar,
  type RunningSidecar,
  type TestRoots,
} from "../helpers/sidecar.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, followUntilDone, makeWorkspace } from "../runtime/harness.js";
import {
  agentText,
  allowOnce,
  rejectOnce,
  startAcpAgent,
  updatesOf,
  waitFor,
  type RunningAcpAgent,
} from "./acp-harness.js";
import { nth, lastOf } from "../helpers/items.js";

const SLOW_TEXT = "thinking about it ".repeat(40);

let roots: TestRoots;
let sidecar: RunningSidecar;
let model: ModelServerProcess;
let workspace: string;
const agents: RunningAcpAgent[] = [];

async function start(offer = {}) {
  const a = await startAcpAgent(roots, offer);
  agents.push(a);
  return a;
}

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-");
  workspace = makeWorkspace(roots.base);
  sidecar = await startSidecar({ roots });
  ({ server: model } = await configureModel(sidecar.clients, "anthropic", {
    turns: [
      // prompt 1: a write (approved), then a command (denied): the model hears it and answers
      {
        text: "Writing the notes.",
        toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "first\n" } }],
      },
      {
        text: "Now cleaning up.",
        toolCalls: [{ name: "execute_command", input: { command: "rm README.md", requires_approval: true } }],
      },
      { text: "Understood, README.md stays." },
      // prompt 2: completion
      { text: "Finishing.", toolCalls: [{ name: "attempt_completion", input: { result: "All done." } }] },
      // prompt 3: slow text, cancelled by the client
      { text: SLOW_TEXT, textChunkChars: 6, writeChunkBytes: 100, writeDelayMs: 25 },
      // TaskService.Resume of the cancelled task
      { text: "Resumed and finished." },
    ],
  }));
});

afterAll(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
  await sidecar?.stop();
  await model?.stop();
  fs.rmSync(roots.base, { recursive: true, force: true });
});

describe("dline-core acp", () => {
  let sessionId = "";

  it("initializes with its capabilities and the model-profile auth method", async () => {
    const a = await start();
    expect(a.init.protocolVersion).toBe(1);
    expect(a.init.agentCapabilities?.loadSession).toBe(true);
    expect(a.init.agentCapabilities?.sessionCapabilities).toMatchObject({
      list: {},
      delete: {},
      resume: {},
      close: {},
    });
    expect(a.init.authMethods?.map((m) => m.id)).toEqual(["dline-model-profile"]);
    await a.agent.request("authenticate", { methodId: "dline-model-profile" });
  });

  it("runs a prompt: streamed text, tool calls with status, one permission approved and one denied", async () => {
    const a = nth(agents, 0, "agent");
    sessionId = (await a.agent.request("session/new", { cwd: workspace, mcpServers: [] })).sessionId;
    let asked = 0;
    a.setPermissionPolicy((req) => (asked++ === 0 ? allowOnce(req) : rejectOnce(req)));
    const res = await a.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Write the notes file" }],
    });
    expect(res.stopReason).toBe("end_turn");

    const updates = updatesOf(a, sessionId);
    expect(agentText(updates)).toBe("Writing the notes.\n\nNow cleaning up.\n\nUnderstood, README.md stays.");
    // Permission requests: the write, then the command, each for a pending tool call.
    expect(a.permissions.map((p) => p.toolCall.kind)).toEqual(["edit", "execute"]);
    expect(nth(a.permissions, 0, "permission request").options.map((o) => o.kind)).toEqual([
      "allow_once",
      "allow_always",
      "reject_once",
      "reject_always",
    ]);
    const writeId = nth(a.permissions, 0, "permission request").toolCall.toolCallId;
    const commandId = nth(a.permissions, 1, "permission request").toolCall.toolCallId;
    const statuses = (id: string) =>
      updates
        .filter(
          (u): u is Extract<acp.SessionUpdate, { toolCallId: string }> => "toolCallId" in u && u.toolCallId === id,
        )
        .map((u) => u.status)
        .filter(Boolean);
    expect(statuses(writeId)).toEqual(["pending", "in_progress", "completed"]);
    expect(statuses(commandId)).toEqual(["pending", "failed"]);
    const writeCall = updates.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === writeId) as acp.ToolCall;
    expect(writeCall.locations).toEqual([{ path: path.join(workspace, "notes.txt") }]);
    // The edit's diff is in the permission prompt and in the finished call.
    const diff = { type: "diff", path: path.join(workspace, "notes.txt"), oldText: null, newText: "first\n" };
    expect(nth(a.permissions, 0, "permission request").toolCall.content).toEqual([diff]);
    const finished = updates.filter(
      (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === writeId && u.status === "completed",
    );
    expect((finished[0] as acp.ToolCallUpdate).content).toEqual([diff]);
    // The approved write happened; the denied command did not run.
    expect(fs.readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe("first\n");
    expect(fs.existsSync(path.join(workspace, "README.md"))).toBe(true);
    // Context usage against the profile's window.
    const usage = updates.filter((u) => u.sessionUpdate === "usage_update");
    expect(usage.length).toBeGreaterThan(0);
    expect(usage.at(-1)).toMatchObject({ size: 100_000, cost: { currency: "USD" } });
    // The baseline (the files before the prompt: undoing all of it) and each turn's checkpoint,
    // the denied command's turn included (its snapshot reused), were announced through the
    // extension notification. Before, the baseline was not.
    const saved = await waitFor(() => {
      const kinds = a.extNotifications
        .filter((n) => n.method === "_dline/checkpoint_saved")
        .map((n) => n.params as { sessionId: string; kind: string });
      return kinds.filter((n) => n.kind === "turn").length >= 2 ? kinds : undefined;
    });
    expect(saved.map((n) => [n.sessionId, n.kind])).toEqual([
      [sessionId, "baseline"],
      [sessionId, "turn"],
      [sessionId, "turn"],
    ]);
  });

  it("continues the session: the next prompt completes the task", async () => {
    const a = nth(agents, 0, "agent");
    const before = a.updates.length;
    const res = await a.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Finish up" }] });
    expect(res.stopReason).toBe("end_turn");
    expect(
      agentText(
        a.updates
          .slice(before)
          .filter((u) => u.sessionId === sessionId)
          .map((u) => u.update),
      ),
    ).toBe("Finishing.\n\nAll done.");
  });

  it("cancels a running prompt with session/cancel; the turn stops with 'cancelled'", async () => {
    const a = nth(agents, 0, "agent");
    const before = a.updates.length;
    const prompt = a.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Think slowly" }] });
    await waitFor(() => a.updates.slice(before).some((u) => u.update.sessionUpdate === "agent_message_chunk"));
    await a.agent.notify("session/cancel", { sessionId });
    expect((await prompt).stopReason).toBe("cancelled");
    expect(agentText(a.updates.slice(before).map((u) => u.update)).length).toBeLessThan(SLOW_TEXT.length);
  });

  it("lists the session in session/list and in the shared history (TaskService / HistoryService)", async () => {
    const a = nth(agents, 0, "agent");
    const list = await a.agent.request("session/list", { cwd: workspace });
    const entry = list.sessions.find((s) => s.sessionId === sessionId);
    expect(entry).toMatchObject({ cwd: workspace, title: "Write the notes file" });
    const history = await sidecar.clients.history.listTasks({ workspaceRoot: workspace });
    expect(history.tasks.map((t) => t.id)).toContain(sessionId);
    const task = await waitFor(async () => {
      const t = await sidecar.clients.tasks.getTask({ taskId: sessionId });
      return t.task?.status === TaskStatus.CANCELLED && t;
    });
    expect(task.messages.filter((m) => m.kind === "completion").map((m) => m.text)).toEqual(["All done."]);
  });

  it("replays the session with session/load in a new process", async () => {
    await nth(agents, 0, "agent").stop();
    const b = await start();
    await b.agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
    const replay = updatesOf(b, sessionId);
    const users = replay
      .filter((u) => u.sessionUpdate === "user_message_chunk")
      .map((u) => (u.content.type === "text" ? u.content.text : ""));
    expect(users[0]).toBe("Write the notes file");
    expect(agentText(replay)).toContain("Writing the notes.");
    expect(replay.some((u) => u.sessionUpdate === "tool_call" && u.kind === "edit" && u.status === "completed")).toBe(
      true,
    );

    // Unknown sessions are "resource not found".
    await expect(
      b.agent.request("session/load", { sessionId: "1-nope", cwd: workspace, mcpServers: [] }),
    ).rejects.toMatchObject({ code: -32002 });
  });

  it("exposes checkpoints as _dline/checkpoints/* extension methods: list, compare, restore (three modes) and undo", async () => {
    const a = lastOf(agents, "agent");
    type Cp = { id: string; kind: string; hasFiles: boolean; undoAvailable: boolean; editedPaths: string[] };
    const list = async () =>
      (await a.agent.request<{ checkpoints: Cp[] }>("_dline/checkpoints/list", { sessionId })).checkpoints;
    const cps = await list();
    expect(cps.map((c) => c.kind)).toEqual(expect.arrayContaining(["baseline", "turn", "completion"]));
    const baseline = cps.find((c) => c.kind === "baseline")!;

    // View Changes of a named completion (by its checkpoint or its message); what is no
    // completion of the task is refused (before, the extra params were ignored: the latest shown).
    const completion = cps.find((c) => c.kind === "completion")! as Cp & { messageId: string };
    const viewChanges = (params: Record<string, unknown>) =>
      a.agent.request<{ files: { path: string }[]; toCheckpointId: string }>("_dline/checkpoints/view_changes", {
        sessionId,
        ...params,
      });
    for (const named of [{ checkpointId: completion.id }, { messageId: completion.messageId }]) {
      const changes = await viewChanges(named);
      expect(changes.toCheckpointId).toBe(completion.id);
      expect(changes.files.map((f) => f.path)).toContain("notes.txt");
    }
    const turnCp = cps.find((c) => c.kind === "turn")!;
    await expect(viewChanges({ checkpointId: turnCp.id })).rejects.toMatchObject({
      code: -32602,
      data: { dlineCode: "invalid_argument" },
    });
    await expect(viewChanges({ checkpointId: "f".repeat(40) })).rejects.toMatchObject({
      code: -32002,
      data: { dlineCode: "not_found" },
    });
    await expect(viewChanges({ messageId: "no-such-message" })).rejects.toMatchObject({ code: -32002 });
    await expect(viewChanges({ checkpointId: 7 })).rejects.toMatchObject({ code: -32602 });

    // The person makes README.md executable: Compare names the change of permissions.
    fs.chmodSync(path.join(workspace, "README.md"), 0o755);
    const compare = await a.agent.request<{
      files: { path: string; status: string; after: string; modeBefore?: string; modeAfter?: string }[];
    }>("_dline/checkpoints/compare", {
      sessionId,
      checkpointId: baseline.id,
    });
    fs.chmodSync(path.join(workspace, "README.md"), 0o644);
    expect(compare.files.map((f) => [f.path, f.status, f.after])).toContainEqual(["notes.txt", "added", "first\n"]);
    expect(compare.files.find((f) => f.path === "README.md")).toMatchObject({
      status: "modified",
      modeBefore: "644",
      modeAfter: "755",
    });
    expect(compare.files.find((f) => f.path === "notes.txt")).not.toHaveProperty("modeBefore");

    const restored = await a.agent.request<{
      filesRestored: boolean;
      deletedPaths: string[];
      undoCheckpointId: string;
      conversationRestored: boolean;
    }>("_dline/checkpoints/restore", { sessionId, checkpointId: baseline.id, mode: "files" });
    expect(restored).toMatchObject({ filesRestored: true, conversationRestored: false });
    expect(restored.deletedPaths).toContain("notes.txt");
    expect(fs.existsSync(path.join(workspace, "notes.txt"))).toBe(false);
    expect((await list()).at(-1)).toMatchObject({ id: restored.undoCheckpointId, undoAvailable: true });

    await a.agent.request("_dline/checkpoints/undo", { sessionId });
    expect(fs.readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe("first\n");
    // A second undo has nothing to undo: it does not put the restore back.
    await expect(a.agent.request("_dline/checkpoints/undo", { sessionId })).rejects.toMatchObject({
      data: { dlineCode: "failed_precondition" },
    });
    expect(fs.readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe("first\n");

    // Task only: the conversation goes back to the turn checkpoint, files stay.
    const turn = cps.find((c) => c.kind === "turn")!;
    const taskOnly = await a.agent.request<{ conversationRestored: boolean; filesRestored: boolean }>(
      "_dline/checkpoints/restore",
      {
        sessionId,
        checkpointId: turn.id,
        mode: "task",
      },
    );
    expect(taskOnly).toMatchObject({ conversationRestored: true, filesRestored: false });
    expect(fs.readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe("first\n");
    const messages = (await sidecar.clients.tasks.getTask({ taskId: sessionId })).messages;
    expect(messages.some((m) => m.kind === "completion")).toBe(false);

    // Files and task, back to the baseline.
    const both = await a.agent.request<{ conversationRestored: boolean; filesRestored: boolean }>(
      "_dline/checkpoints/restore",
      {
        sessionId,
        checkpointId: baseline.id,
        mode: "files_and_task",
      },
    );
    expect(both).toMatchObject({ conversationRestored: true, filesRestored: true });
    expect(fs.existsSync(path.join(workspace, "notes.txt"))).toBe(false);

    expect(await a.agent.request("_dline/checkpoints/status", { sessionId })).toMatchObject({
      state: "ready",
      canRetry: false,
    });

    // Bad input gets JSON-RPC errors, not a crash.
    await expect(
      a.agent.request("_dline/checkpoints/restore", { sessionId, checkpointId: baseline.id, mode: "everything" }),
    ).rejects.toMatchObject({
      code: -32602,
    });
    await expect(
      a.agent.request("_dline/checkpoints/compare", { sessionId, checkpointId: "nope" }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it("leaves the task to TaskService of another sidecar, which resumes it", async () => {
    const seq = (await sidecar.clients.tasks.getTask({ taskId: sessionId })).lastSeq;
    await sidecar.clients.tasks.resume({ taskId: sessionId });
    const events = await followUntilDone(sidecar.clients, sessionId, undefined, seq);
    expect(events.at(-1)?.event.case).toBe("statusChanged");
    const final = await sidecar.clients.tasks.getTask({ taskId: sessionId });
    expect(final.task?.status).toBe(TaskStatus.COMPLETED);
    expect(final.messages.at(-1)?.text).toBe("Resumed and finished.");
  });

  it("deletes the session from the shared history with session/delete", async () => {
    const b = nth(agents, 1, "agent");
    await b.agent.request("session/delete", { sessionId });
    const list = await b.agent.request("session/list", {});
    expect(list.sessions.map((s) => s.sessionId)).not.toContain(sessionId);
    await expect(sidecar.clients.tasks.getTask({ taskId: sessionId })).rejects.toThrow();
  });
});
