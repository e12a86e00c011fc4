/**
 * Follow-up questions over ACP (options offered as permission choices; a question without
 * options ends the turn and the next prompt answers it), a local command's output streamed
 * into its tool call, and session/close and session/resume.
 */
import * as fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as acp from "@agentclientprotocol/sdk";
import { assertBinaryBuilt, makeTestRoots, startSidecar, type TestRoots } from "../helpers/sidecar.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, makeWorkspace } from "../runtime/harness.js";
import { agentText, allowOnce, startAcpAgent, updatesOf, type RunningAcpAgent } from "./acp-harness.js";
import { nth } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";

let roots: TestRoots;
let model: ModelServerProcess;
let workspace: string;
let agent: RunningAcpAgent | undefined;

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-ask-");
  workspace = makeWorkspace(roots.base);
  const sidecar = await startSidecar({ roots });
  ({ server: model } = await configureModel(sidecar.clients, "anthropic", {
    turns: [
      { toolCalls: [{ name: "ask_followup_question", input: { question: "Which color?", options: ["red", "blue"] } }] },
      { toolCalls: [{ name: "ask_followup_question", input: { question: "Name the file?" } }] },
      {
        toolCalls: [
          { name: "execute_command", input: { command: "printf 'line1\\nline2\\n'", requires_approval: false } },
        ],
      },
      { text: "Done." },
      { text: "Resumed." },
      { toolCalls: [{ name: "write_to_file", input: { path: "home-note.txt", content: "x\n" } }] },
      { text: "Written." },
      { status: 400, errorMessage: "prompt is malformed" },
      { text: "Recovered." },
    ],
  }));
  await sidecar.stop();
});

afterAll(async () => {
  await agent?.stop();
  await model?.stop();
  fs.rmSync(roots.base, { recursive: true, force: true });
});

describe("dline-core acp questions and session lifecycle", () => {
  it("offers a question's options as permission choices, and takes a free answer from the next prompt", async () => {
    agent = await startAcpAgent(roots);
    const a = agent;
    const { sessionId } = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    a.setPermissionPolicy((req) => {
      const blue = req.options.find((o) => o.name === "blue");
      return blue ? { outcome: { outcome: "selected", optionId: blue.optionId } } : allowOnce(req);
    });
    const first = await a.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Make a file" }],
    });
    // The second question has no options: the turn ends and waits for the user's words.
    expect(first.stopReason).toBe("end_turn");
    expect(nth(a.permissions, 0, "permission request").options.map((o) => [o.name, o.kind])).toEqual([
      ["red", "allow_once"],
      ["blue", "allow_once"],
      ["Answer in the chat", "reject_once"],
    ]);
    expect(agentText(updatesOf(a, sessionId))).toBe("Which color?\n\nName the file?");

    const before = a.updates.length;
    const second = await a.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "call it colors.txt" }],
    });
    expect(second.stopReason).toBe("end_turn");
    const requests = await model.requests();
    expect(JSON.stringify(recorded(requests, 1).body)).toContain("blue");
    expect(JSON.stringify(recorded(requests, 2).body)).toContain("call it colors.txt");

    // The local command's output reached its tool call, then the call completed.
    const updates = a.updates.slice(before).map((u) => u.update);
    const command = updates.find((u) => u.sessionUpdate === "tool_call" && u.kind === "execute") as acp.ToolCall;
    const calls = updates.filter(
      (u): u is acp.ToolCallUpdate & { sessionUpdate: "tool_call_update" } =>
        u.sessionUpdate === "tool_call_update" && u.toolCallId === command.toolCallId,
    );
    expect(calls.at(-1)?.status).toBe("completed");
    const shown = calls
      .flatMap((c) => c.content ?? [])
      .map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : ""));
    expect(shown.join("\n")).toContain("line1\nline2");
    expect(agentText(updates)).toBe("Done.");
  });

  it("closes a session (prompts then get 'not found') and resumes it without replay", async () => {
    const a = agent!;
    const sessionId = nth(a.updates, 0, "update").sessionId;
    await a.agent.request("session/close", { sessionId });
    await expect(
      a.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "still there?" }] }),
    ).rejects.toMatchObject({ code: -32002 });
    const before = a.updates.length;
    await a.agent.request("session/resume", { sessionId, cwd: workspace });
    expect(a.updates.length).toBe(before);
    const res = await a.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "again" }] });
    expect(res.stopReason).toBe("end_turn");
    expect(agentText(a.updates.slice(before).map((u) => u.update))).toBe("Resumed.");
  });

  it("runs a session in the home folder, where checkpoints are unavailable, and says so", async () => {
    const a = agent!;
    const { sessionId } = await a.agent.request("session/new", { cwd: roots.home, mcpServers: [] });
    a.setPermissionPolicy(allowOnce);
    const res = await a.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "note it" }] });
    expect(res.stopReason).toBe("end_turn");
    expect(fs.readFileSync(`${roots.home}/home-note.txt`, "utf8")).toBe("x\n");
    expect(await a.agent.request("_dline/checkpoints/status", { sessionId })).toMatchObject({
      state: "unavailable",
      message: "Cannot use checkpoints in home directory",
      canRetry: false,
    });
    await expect(a.agent.request("_dline/checkpoints/list", { sessionId })).rejects.toMatchObject({
      code: -32603,
      data: { dlineCode: "failed_precondition" },
    });
  });

  it("answers a failed model request with a JSON-RPC error; the session goes on", async () => {
    const a = agent!;
    const { sessionId } = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    const failed = await a.agent
      .request("session/prompt", { sessionId, prompt: [{ type: "text", text: "fail please" }] })
      .catch((err) => err);
    expect(failed).toMatchObject({ code: -32603, data: { sessionId } });
    expect(failed.message).toContain("prompt is malformed");
    const res = await a.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "try again" }] });
    expect(res.stopReason).toBe("end_turn");
    expect(agentText(updatesOf(a, sessionId))).toBe("Recovered.");
  });
});
