/**
 * Session-scoped MCP servers over ACP: the client passes a stdio and a streamable HTTP server in
 * session/new, the scripted model calls their tools (approved through session/request_permission),
 * and the stdio server's process stops when the session is closed. session/load and
 * session/resume in a new process give the reopened task the servers they pass.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertBinaryBuilt,
  makeTestRoots,
  startSidecar,
  type RunningSidecar,
  type TestRoots,
} from "../helpers/sidecar.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, makeWorkspace } from "../runtime/harness.js";
import { isAlive, mcpServerScript, startHttpMcpServer } from "../capabilities/helpers.js";
import { startAcpAgent, waitFor, type RunningAcpAgent } from "./acp-harness.js";
import { recorded } from "../model-server/script.js";

let roots: TestRoots;
let sidecar: RunningSidecar;
let model: ModelServerProcess;
let workspace: string;
let http: Awaited<ReturnType<typeof startHttpMcpServer>>;
const agents: RunningAcpAgent[] = [];
let firstSessionId = "";

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-mcp-");
  workspace = makeWorkspace(roots.base);
  sidecar = await startSidecar({ roots });
  ({ server: model } = await configureModel(sidecar.clients, "anthropic", {
    turns: [
      {
        toolCalls: [
          { name: "mcp__calc__add", input: { a: 2, b: 3 } },
          { name: "mcp__web__add", input: { a: 4, b: 5 } },
        ],
      },
      { text: "Both added." },
      { text: "Plain." },
      // session/load in a new process, with its own servers
      { toolCalls: [{ name: "mcp__calc__add", input: { a: 1, b: 1 } }] },
      { text: "Loaded and added." },
      // session/resume in another process
      { toolCalls: [{ name: "mcp__calc__add", input: { a: 2, b: 2 } }] },
      { text: "Resumed and added." },
    ],
  }));
  http = await startHttpMcpServer(roots.base, "web");
});

afterAll(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
  await sidecar?.stop();
  await model?.stop();
  await http?.stop();
  fs.rmSync(roots.base, { recursive: true, force: true });
});

describe("ACP session MCP servers", () => {
  it("servers passed in session/new offer tools the model calls; closing the session stops them", async () => {
    const a = await startAcpAgent(roots);
    agents.push(a);
    expect(a.init.agentCapabilities?.mcpCapabilities).toEqual({ http: true, sse: false });
    const log = path.join(roots.base, "calc-calls.log");
    const { sessionId } = await a.agent.request("session/new", {
      cwd: workspace,
      mcpServers: [
        {
          name: "calc",
          command: process.execPath,
          args: [mcpServerScript, "stdio"],
          env: [
            { name: "MCP_TEST_LABEL", value: "acp-stdio" },
            { name: "MCP_TEST_CALL_LOG", value: log },
          ],
        },
        { type: "http", name: "web", url: http.url, headers: [{ name: "X-Test", value: "1" }] },
      ],
    });
    const res = await a.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Add some numbers" }],
    });
    expect(res.stopReason).toBe("end_turn");

    const requests = await model.requests();
    const tools = (recorded(requests, 0).body.tools ?? []).map((t: { name: string }) => t.name);
    expect(tools).toEqual(expect.arrayContaining(["mcp__calc__add", "mcp__calc__whoami", "mcp__web__add"]));
    const results = JSON.stringify(recorded(requests, 1).body.messages);
    expect(results).toContain("sum=5 from acp-stdio");
    expect(results).toContain("sum=9 from web");
    expect(a.permissions).toHaveLength(2); // useMcp asks the editor
    expect(fs.readFileSync(log, "utf8")).toBe("acp-stdio add\n");

    // The servers belong to the session: another session does not see them.
    const other = (await a.agent.request("session/new", { cwd: workspace, mcpServers: [] })).sessionId;
    await a.agent.request("session/prompt", { sessionId: other, prompt: [{ type: "text", text: "Anything?" }] });
    const otherTools = (recorded(await model.requests(), 2).body.tools ?? []).map((t: { name: string }) => t.name);
    expect(otherTools.filter((n: string) => n.startsWith("mcp__"))).toEqual([]);

    const pid = Number(fs.readFileSync(`${log}.pid-acp-stdio`, "utf8"));
    expect(isAlive(pid)).toBe(true);
    await a.agent.request("session/close", { sessionId });
    await waitFor(() => !isAlive(pid));
    firstSessionId = sessionId;
  });

  const calc = (label: string, log: string) => ({
    name: "calc",
    command: process.execPath,
    args: [mcpServerScript, "stdio"],
    env: [
      { name: "MCP_TEST_LABEL", value: label },
      { name: "MCP_TEST_CALL_LOG", value: log },
    ],
  });

  it.each(["load", "resume"] as const)(
    "session/%s with mcpServers gives the reopened task those servers (and only those)",
    async (method) => {
      expect(firstSessionId).not.toBe("");
      const sessionId = firstSessionId;
      const label = `acp-${method}`;
      const log = path.join(roots.base, `calc-${method}.log`);
      const a = await startAcpAgent(roots); // a new process: nothing of the first session's servers is left
      agents.push(a);
      const before = (await model.requests()).length;
      await a.agent.request(`session/${method}`, { sessionId, cwd: workspace, mcpServers: [calc(label, log)] });
      const res = await a.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: `Add again after ${method}` }],
      });
      expect(res.stopReason).toBe("end_turn");

      const requests = (await model.requests()).slice(before);
      expect(requests).toHaveLength(2);
      const tools = (recorded(requests, 0).body.tools ?? [])
        .map((t: { name: string }) => t.name)
        .filter((n: string) => n.startsWith("mcp__"));
      // The servers of this request, not the HTTP server the session was created with.
      expect(tools).toEqual(expect.arrayContaining(["mcp__calc__add", "mcp__calc__whoami"]));
      expect(tools.filter((n: string) => n.startsWith("mcp__web__"))).toEqual([]);
      expect(JSON.stringify(recorded(requests, 1).body.messages)).toContain(
        `sum=${method === "load" ? 2 : 4} from ${label}`,
      );
      expect(fs.readFileSync(log, "utf8")).toBe(`${label} add\n`);

      const pid = Number(fs.readFileSync(`${log}.pid-${label}`, "utf8"));
      expect(isAlive(pid)).toBe(true);
      await a.agent.request("session/close", { sessionId });
      await waitFor(() => !isAlive(pid));
    },
  );
});
