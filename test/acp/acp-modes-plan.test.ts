/**
 * `dline-core acp` beyond the basics, against the real binary and the scripted model server:
 * plan updates from update_plan (live and replayed), session modes (plan mode refuses
 * workspace changes, shown as failed tool calls; the mode is the task's `mode` setting),
 * permission answers "always" (for the session only, never the global setting), and the stop
 * reasons max_tokens and refusal from both wire formats.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as acp from "@agentclientprotocol/sdk";
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import {
  assertBinaryBuilt,
  makeTestRoots,
  startSidecar,
  type RunningSidecar,
  type TestRoots,
} from "../helpers/sidecar.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, makeWorkspace } from "../runtime/harness.js";
import { agentText, startAcpAgent, updatesOf, type PermissionPolicy, type RunningAcpAgent } from "./acp-harness.js";
import { nth } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";

const PLAN = [
  { step: "Read the code", status: "completed" },
  { step: "Fix the bug", status: "in_progress", priority: "high" },
  { step: "Run the tests", status: "pending", priority: "low" },
];
const PLAN_ENTRIES = [
  { content: "Read the code", status: "completed", priority: "medium" },
  { content: "Fix the bug", status: "in_progress", priority: "high" },
  { content: "Run the tests", status: "pending", priority: "low" },
];

let roots: TestRoots;
let sidecar: RunningSidecar;
let anthropic: ModelServerProcess;
let openai: { server: ModelServerProcess; profileId: string };
let workspace: string;
let a: RunningAcpAgent;

const choose =
  (kind: acp.PermissionOptionKind): PermissionPolicy =>
  (req) => ({ outcome: { outcome: "selected", optionId: req.options.find((o) => o.kind === kind)!.optionId } });

async function prompt(sessionId: string, text: string) {
  return (await a.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] })).stopReason;
}

async function resolved(key: string, taskId = "") {
  const r = await sidecar.clients.settings.resolveSetting({ key, workspaceRoot: workspace, taskId });
  return r.value ? toJson(ValueSchema, r.value) : undefined;
}

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-modes-");
  workspace = makeWorkspace(roots.base);
  sidecar = await startSidecar({ roots });
  ({ server: anthropic } = await configureModel(sidecar.clients, "anthropic", {
    turns: [
      // plan mode, prompt 1: a plan, and a write that plan mode refuses; then the answer
      {
        text: "Planning.",
        toolCalls: [
          { name: "update_plan", input: { plan: PLAN } },
          { name: "write_to_file", input: { path: "fix.txt", content: "x\n" } },
        ],
      },
      { text: "Here is the plan." },
      // act mode, prompt 2: a write answered "allow always", then a second write that runs unasked
      { toolCalls: [{ name: "write_to_file", input: { path: "fix.txt", content: "fixed\n" } }] },
      {
        toolCalls: [
          {
            name: "replace_in_file",
            input: { path: "fix.txt", diff: "------- SEARCH\nfixed\n=======\nfixed twice\n+++++++ REPLACE" },
          },
        ],
      },
      { text: "Both edits done." },
      // another session, prompt 1: an edit is asked again there (the "always" stayed in the first session)
      { toolCalls: [{ name: "write_to_file", input: { path: "other.txt", content: "other\n" } }] },
      { text: "Other session done." },
      // prompt 3: a command answered "reject always"; the model hears the rejection and answers
      { toolCalls: [{ name: "execute_command", input: { command: "echo one > one.txt", requires_approval: true } }] },
      { text: "I will not run it." },
      // prompt 4: another command, rejected without asking; then the model answers
      { toolCalls: [{ name: "execute_command", input: { command: "echo two > two.txt", requires_approval: true } }] },
      { text: "Still not running it." },
      // stop reasons (a new session)
      { text: "The answer was cut", stopReason: "max_tokens" },
      { text: "I can't help with that.", stopReason: "refusal" },
    ],
  }));
  openai = await configureModel(sidecar.clients, "openai", {
    turns: [
      { text: "Cut short", stopReason: "max_tokens" },
      { refusal: "I must decline." },
      { text: "Filtered", stopReason: "refusal" },
    ],
  });
  // The default profile is the Anthropic one.
  await sidecar.clients.settings.updateSettings({
    scope: SettingsScope.GLOBAL,
    patch: { defaultProfileId: "scripted-anthropic" },
  });
  a = await startAcpAgent(roots);
});

afterAll(async () => {
  await a?.stop();
  await sidecar?.stop();
  await anthropic?.stop();
  await openai?.server.stop();
  fs.rmSync(roots.base, { recursive: true, force: true });
});

describe("dline-core acp: plans, modes, always-answers, stop reasons", () => {
  let sessionId = "";

  it("advertises act and plan modes; plan mode (the task's mode setting) refuses workspace changes; update_plan becomes a plan update", async () => {
    const created = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    sessionId = created.sessionId;
    expect(created.modes?.currentModeId).toBe("act");
    expect(created.modes?.availableModes.map((m) => m.id)).toEqual(["act", "plan"]);
    await expect(a.agent.request("session/set_mode", { sessionId, modeId: "yolo" })).rejects.toMatchObject({
      code: -32602,
    });
    await a.agent.request("session/set_mode", { sessionId, modeId: "plan" });
    expect(updatesOf(a, sessionId)).toContainEqual({ sessionUpdate: "current_mode_update", currentModeId: "plan" });

    a.setPermissionPolicy(choose("allow_once"));
    expect(await prompt(sessionId, "Plan the fix")).toBe("end_turn");
    const updates = updatesOf(a, sessionId);
    expect(updates.filter((u) => u.sessionUpdate === "plan")).toEqual([
      { sessionUpdate: "plan", entries: PLAN_ENTRIES },
    ]);
    // The write was refused without a permission request, did not happen, and shows as a failed tool call.
    expect(a.permissions).toHaveLength(0);
    const refused = updates.find((u) => u.sessionUpdate === "tool_call" && u.kind === "edit") as acp.ToolCall;
    expect(refused).toMatchObject({ status: "failed", title: "write_to_file fix.txt" });
    expect(JSON.stringify(refused.content)).toContain("plan mode");
    // What happened, for the person; what the model is told to do instead is the model's.
    expect(JSON.stringify(refused.content)).not.toContain("Present the change");
    expect(fs.existsSync(path.join(workspace, "fix.txt"))).toBe(false);
    expect(agentText(updates)).toBe("Planning.\n\nHere is the plan.");
    const requests = await anthropic.requests();
    expect(recorded(requests, 0).body.system[0].text).toContain("# Plan mode");
    expect(JSON.stringify(recorded(requests, 1).body.messages.at(-1))).toContain("plan mode");
    // The mode is the task's setting, as every client reads it.
    const taskSettings = await sidecar.clients.settings.getSettings({ scope: SettingsScope.TASK, taskId: sessionId });
    expect(taskSettings.settings).toMatchObject({ mode: "plan" });
    expect(await resolved("mode", sessionId)).toBe("plan");
    // The plan is a message of the task's history.
    const messages = (await sidecar.clients.tasks.getTask({ taskId: sessionId })).messages;
    expect(messages.find((m) => m.kind === "plan")?.text).toBe(
      "- [x] Read the code\n- [-] Fix the bug\n- [ ] Run the tests",
    );
  });

  it("switches back to act mode; 'allow always' applies to the session: its next edit runs unasked, the global setting is unchanged", async () => {
    await a.agent.request("session/set_mode", { sessionId, modeId: "act" });
    expect(updatesOf(a, sessionId).at(-1)).toEqual({ sessionUpdate: "current_mode_update", currentModeId: "act" });
    expect(await resolved("mode", sessionId)).toBe("act");

    a.setPermissionPolicy(choose("allow_always"));
    expect(await prompt(sessionId, "Now fix it")).toBe("end_turn");
    expect(a.permissions).toHaveLength(1);
    expect(nth(a.permissions, 0, "permission request").options.map((o) => o.kind)).toEqual([
      "allow_once",
      "allow_always",
      "reject_once",
      "reject_always",
    ]);
    expect(nth(a.permissions, 0, "permission request").options.find((o) => o.kind === "allow_always")?.name).toBe(
      "Always allow editing files",
    );
    expect(fs.readFileSync(path.join(workspace, "fix.txt"), "utf8")).toBe("fixed twice\n");
    // Not stored where every editor and project reads it.
    expect(await resolved("autoApprovalSettings")).toMatchObject({ enabled: false, editFiles: false });
  });

  it("another session keeps asking for edits", async () => {
    const { sessionId: other } = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    a.setPermissionPolicy(choose("allow_once"));
    expect(await prompt(other, "Write the other file")).toBe("end_turn");
    expect(a.permissions).toHaveLength(2);
    expect(nth(a.permissions, 1, "permission request").toolCall.kind).toBe("edit");
    expect(fs.readFileSync(path.join(workspace, "other.txt"), "utf8")).toBe("other\n");
  });

  it("'reject always' rejects that kind of call from then on in the session, without asking", async () => {
    a.setPermissionPolicy(choose("reject_always"));
    expect(await prompt(sessionId, "Clean up")).toBe("end_turn");
    expect(a.permissions).toHaveLength(3);
    expect(nth(a.permissions, 2, "permission request").toolCall.kind).toBe("execute");

    const before = a.updates.length;
    expect(await prompt(sessionId, "Try again")).toBe("end_turn");
    expect(a.permissions).toHaveLength(3);
    const later = a.updates.slice(before).map((u) => u.update);
    const call = later.find((u) => u.sessionUpdate === "tool_call") as acp.ToolCall;
    expect(call).toMatchObject({ kind: "execute" });
    const failed = later.find(
      (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId && u.status === "failed",
    ) as acp.ToolCallUpdate;
    expect(JSON.stringify(failed.content)).toContain("always reject all commands");
    expect(agentText(later)).toBe("Still not running it.");
    expect(fs.existsSync(path.join(workspace, "one.txt"))).toBe(false);
    expect(fs.existsSync(path.join(workspace, "two.txt"))).toBe(false);
    expect(await resolved("autoApprovalSettings")).toMatchObject({ enabled: false, executeAllCommands: false });
  });

  it("replays the plan and announces the mode on session/load in a new process", async () => {
    const b = await startAcpAgent(roots);
    try {
      const loaded = await b.agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
      expect(loaded.modes?.currentModeId).toBe("act");
      expect(updatesOf(b, sessionId).filter((u) => u.sessionUpdate === "plan")).toEqual([
        { sessionUpdate: "plan", entries: PLAN_ENTRIES },
      ]);
      // The session's "reject always" rule is not replayed as words the person wrote.
      const userWords = updatesOf(b, sessionId)
        .filter((u) => u.sessionUpdate === "user_message_chunk")
        .map((u) => JSON.stringify(u));
      expect(userWords.length).toBeGreaterThan(0);
      expect(userWords.join("\n")).not.toContain("always reject");
    } finally {
      await b.stop();
    }
  });

  it("forgets a mode chosen before a first prompt that failed: nothing is left in the task folders", async () => {
    const gone = path.join(roots.base, "gone");
    fs.mkdirSync(gone);
    const { sessionId: id } = await a.agent.request("session/new", { cwd: gone, mcpServers: [] });
    await a.agent.request("session/set_mode", { sessionId: id, modeId: "plan" });
    fs.rmSync(gone, { recursive: true });
    await expect(prompt(id, "Hello")).rejects.toMatchObject({ code: -32602 });
    expect(fs.existsSync(path.join(roots.docsDir, "tasks", sessionId, "settings.json"))).toBe(true);
    expect(fs.existsSync(path.join(roots.docsDir, "tasks", id))).toBe(false);
  });

  it("ends a turn with max_tokens and refusal as the Anthropic stream says", async () => {
    const { sessionId: id } = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    expect(await prompt(id, "Write a long essay")).toBe("max_tokens");
    // A mode set elsewhere (here: the task's setting through SettingsService) is announced with the next prompt.
    await sidecar.clients.settings.updateSettings({ scope: SettingsScope.TASK, taskId: id, patch: { mode: "plan" } });
    const before = updatesOf(a, id).length;
    expect(await prompt(id, "Something forbidden")).toBe("refusal");
    expect(updatesOf(a, id)[before]).toEqual({ sessionUpdate: "current_mode_update", currentModeId: "plan" });
    expect(agentText(updatesOf(a, id))).toBe("The answer was cutI can't help with that.");
  });

  it("ends a turn with max_tokens (finish_reason length) and refusal (refusal field, content_filter) from OpenAI-compatible streams", async () => {
    const { sessionId: id } = await a.agent.request("session/new", {
      cwd: workspace,
      mcpServers: [],
      _meta: { dline: { profileId: openai.profileId } },
    });
    expect(await prompt(id, "Write a long essay")).toBe("max_tokens");
    expect(await prompt(id, "Something forbidden")).toBe("refusal");
    expect(await prompt(id, "Something filtered")).toBe("refusal");
    expect(agentText(updatesOf(a, id))).toBe("Cut shortI must decline.Filtered");
  });
});
