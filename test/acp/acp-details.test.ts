/**
 * ACP details through the official SDK's client side (and raw stdio where the SDK would hide
 * the case): the model chosen from the editor (session config options, session/set_model), a
 * model from the agent's environment, session/cancel while the client's terminal ignores the
 * kill, unique tool call ids when the model repeats its ids, a message over the transport
 * limit, and a last request line without a newline before the end of input.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as acp from "@agentclientprotocol/sdk";
import {
  assertBinaryBuilt,
  makeTestRoots,
  sidecarBinary,
  startSidecar,
  type RunningSidecar,
  type TestRoots,
} from "../helpers/sidecar.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { agentText, startAcpAgent, updatesOf, waitFor, type RunningAcpAgent } from "./acp-harness.js";
import { nth } from "../helpers/items.js";

let roots: TestRoots;
let workspace: string;
let sidecar: RunningSidecar;
let anthropic: { server: ModelServerProcess; profileId: string };
let openai: { server: ModelServerProcess; profileId: string };
const agents: RunningAcpAgent[] = [];
const servers: ModelServerProcess[] = [];

async function start(offer: Parameters<typeof startAcpAgent>[1] = {}) {
  const a = await startAcpAgent(roots, offer);
  agents.push(a);
  return a;
}

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-details-");
  workspace = makeWorkspace(roots.base);
  sidecar = await startSidecar({ roots });
  anthropic = await configureModel(sidecar.clients, "anthropic", {
    turns: [
      { text: "Anthropic answers." },
      // the cancel test: a command in the client's terminal that ignores the kill
      {
        toolCalls: [
          {
            name: "execute_command",
            input: { command: "trap '' TERM; echo started; exec sleep 30", requires_approval: false },
          },
        ],
      },
      // the repeated ids test
      { toolCalls: [{ id: "call_1", name: "read_file", input: { path: "README.md" } }] },
      { toolCalls: [{ id: "call_1", name: "read_file", input: { path: "src/app.txt" } }] },
      { text: "Read both." },
    ],
  });
  openai = await configureModel(sidecar.clients, "openai", {
    turns: [{ text: "OpenAI answers." }, { text: "OpenAI again." }],
  });
  await sidecar.clients.settings.updateSettings({ scope: 1, patch: { defaultProfileId: anthropic.profileId } });
});

afterAll(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
  await sidecar?.stop();
  await Promise.all([anthropic?.server.stop(), openai?.server.stop(), ...servers.map((s) => s.stop())]);
  fs.rmSync(roots.base, { recursive: true, force: true });
});

type SelectOption = Extract<acp.SessionConfigOption, { type: "select" }>;

describe("dline-core acp: choosing the model from the editor", () => {
  it("lists the profiles as the session's model config option; set_config_option and set_model switch them, before and after the first prompt", async () => {
    const a = await start();
    const created = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    const model = created.configOptions?.find((o) => o.id === "model") as SelectOption;
    expect(model).toMatchObject({ category: "model", type: "select", currentValue: anthropic.profileId });
    expect((model.options as acp.SessionConfigSelectOption[]).map((o) => o.value).sort()).toEqual(
      [anthropic.profileId, openai.profileId].sort(),
    );

    // Before the first prompt: the session's choice creates the task with that model.
    const set = await a.agent.request("session/set_config_option", {
      sessionId: created.sessionId,
      configId: "model",
      value: openai.profileId,
    });
    expect((set.configOptions.find((o) => o.id === "model") as SelectOption).currentValue).toBe(openai.profileId);
    await a.agent.request("session/prompt", {
      sessionId: created.sessionId,
      prompt: [{ type: "text", text: "hello" }],
    });
    expect(agentText(updatesOf(a, created.sessionId))).toBe("OpenAI answers.");

    // After it: the task's profile, which its next run uses (the earlier model API's method).
    await a.agent.request("session/set_model", { sessionId: created.sessionId, modelId: anthropic.profileId });
    const before = updatesOf(a, created.sessionId).length;
    await a.agent.request("session/prompt", {
      sessionId: created.sessionId,
      prompt: [{ type: "text", text: "and now?" }],
    });
    expect(agentText(updatesOf(a, created.sessionId).slice(before))).toBe("Anthropic answers.");
    expect(await openai.server.requests()).toHaveLength(1);
    // Every client sees the task's model: a session/resume elsewhere reports it.
    const b = await start();
    const resumed = await b.agent.request("session/resume", { sessionId: created.sessionId, cwd: workspace });
    expect((resumed.configOptions?.find((o) => o.id === "model") as SelectOption).currentValue).toBe(
      anthropic.profileId,
    );

    await expect(
      a.agent.request("session/set_config_option", { sessionId: created.sessionId, configId: "model", value: "nope" }),
    ).rejects.toMatchObject({ code: -32602 });
    await expect(
      a.agent.request("session/set_config_option", { sessionId: created.sessionId, configId: "speed", value: "x" }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it("uses a model from the agent's environment with no profile stored, lists it, and stores nothing of it", async () => {
    const server = await spawnModelServer({ apiKey: TEST_KEY, turns: [{ text: "From the environment." }] });
    servers.push(server);
    const envRoots = makeTestRoots("dline-acp-env-");
    const ws = makeWorkspace(envRoots.base);
    const a = await startAcpAgent(envRoots, {
      env: { OPENAI_BASE_URL: server.url, OPENAI_MODEL: "env-model", OPENAI_API_KEY: TEST_KEY },
    });
    agents.push(a);
    expect(nth(a.init.authMethods ?? [], 0, "auth method").description).toMatch(/OPENAI_BASE_URL/);
    const created = await a.agent.request("session/new", { cwd: ws, mcpServers: [] });
    const model = created.configOptions?.find((o) => o.id === "model") as SelectOption;
    expect(model.currentValue).toBe("env-openai");
    expect(nth(model.options as acp.SessionConfigSelectOption[], 0, "model option").description).toMatch(
      /from the environment/,
    );
    await a.agent.request("session/prompt", { sessionId: created.sessionId, prompt: [{ type: "text", text: "hi" }] });
    expect(agentText(updatesOf(a, created.sessionId))).toBe("From the environment.");
    await a.stop();
    const stored = [envRoots.dlineDir, envRoots.homeDir, envRoots.docsDir]
      .flatMap((root) => walk(root))
      .filter((f) => fs.readFileSync(f).includes(TEST_KEY));
    expect(stored).toEqual([]);
  });
});

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.isFile() ? [path.join(dir, e.name)] : []));
}

describe("dline-core acp: cancel and tool call ids", () => {
  it("session/cancel answers while the client's terminal still runs a command that ignores the kill", async () => {
    await sidecar.clients.settings.updateSettings({
      scope: 1,
      patch: {
        autoApprovalSettings: {
          enabled: true,
          executeSafeCommands: true,
          executeAllCommands: true,
          readFiles: true,
          maxRequests: 50,
        },
      },
    });
    const a = await start({ terminal: true });
    const { sessionId } = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    const prompt = a.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "run it" }] });
    const terminal = await waitFor(() => a.terminals[0]?.output.includes("started") && a.terminals[0]);
    await a.agent.notify("session/cancel", { sessionId });
    expect((await prompt).stopReason).toBe("cancelled");
    // The answer did not wait for the command: it is still running (it ignored the kill).
    expect(terminal.child.exitCode).toBeNull();
    expect(terminal.child.signalCode).toBeNull();
    terminal.child.kill("SIGKILL");
    const call = updatesOf(a, sessionId).find((u) => u.sessionUpdate === "tool_call") as acp.ToolCall;
    const last = updatesOf(a, sessionId)
      .filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId)
      .at(-1) as acp.ToolCallUpdate;
    expect(last.status).toBe("failed");
  });

  it("gives every tool call its own id in the session even when the model repeats its ids", async () => {
    const a = await start();
    const { sessionId } = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    await a.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "read twice" }] });
    const calls = updatesOf(a, sessionId).filter(
      (u): u is acp.ToolCall & { sessionUpdate: "tool_call" } => u.sessionUpdate === "tool_call",
    );
    expect(calls.map((c) => c.title)).toEqual(["read_file README.md", "read_file src/app.txt"]);
    expect(new Set(calls.map((c) => c.toolCallId)).size).toBe(2);
    // Each update names its own call: both completed.
    for (const c of calls) {
      const updates = updatesOf(a, sessionId).filter(
        (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === c.toolCallId,
      );
      expect(updates.at(-1)).toMatchObject({ status: "completed" });
    }
  });
});

/** The binary over raw stdio: what it writes, line by line. */
function rawAgent(env: NodeJS.ProcessEnv = roots.env) {
  const child = spawn(sidecarBinary, ["acp"], { cwd: roots.base, env, stdio: ["pipe", "pipe", "ignore"] });
  const lines: any[] = [];
  const waiters: (() => void)[] = [];
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(JSON.parse(line));
    waiters.splice(0).forEach((w) => w());
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    exited,
    async next(): Promise<any> {
      while (lines.length === 0) await new Promise<void>((r) => waiters.push(r));
      return lines.shift();
    },
  };
}

const request = (id: number | string, method: string, params: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params });

describe("dline-core acp transport", () => {
  it("answers a message over the size limit with a JSON-RPC error for its id, and goes on serving", async () => {
    const a = rawAgent();
    a.child.stdin.write(`${request(1, "initialize", { protocolVersion: 1, clientCapabilities: {} })}\n`);
    expect(await a.next()).toMatchObject({ id: 1, result: { protocolVersion: 1 } });
    // 33 MiB of prompt text: over the 32 MiB the agent accepts.
    const huge = `{"jsonrpc":"2.0","id":"big-7","method":"session/prompt","params":{"sessionId":"x","prompt":[{"type":"text","text":"${"a".repeat(33 * 1024 * 1024)}"}]}}\n`;
    a.child.stdin.write(huge);
    a.child.stdin.write(`${request(2, "session/list", {})}\n`);
    const refused = await a.next();
    expect(refused).toMatchObject({ id: "big-7", error: { code: -32600 } });
    expect(refused.error.message).toMatch(/larger than the \d+ bytes/);
    expect(await a.next()).toMatchObject({ id: 2, result: { sessions: expect.any(Array) } });
    a.child.stdin.end();
    expect(await a.exited).toBe(0);
  });

  it("serves a last request line that has no newline before the end of input, then exits", async () => {
    const a = rawAgent();
    a.child.stdin.write(`${request(1, "initialize", { protocolVersion: 1, clientCapabilities: {} })}\n`);
    expect(await a.next()).toMatchObject({ id: 1 });
    a.child.stdin.end(request(2, "session/list", {}));
    expect(await a.next()).toMatchObject({ id: 2, result: { sessions: expect.any(Array) } });
    expect(await a.exited).toBe(0);
  });
});
