/**
 * MCP servers end to end through the real sidecar binary: a server written for the test (on
 * the official SDK) over stdio and streamable HTTP, its tools offered to the scripted model
 * and called (approval rules apply), a crash restarted and reported, per-scope toggles, a
 * malformed mcp_settings.json reported and kept, servers stopped with the sidecar.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AskKind, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { McpServerState, ToggleScope, ToggleState } from "../../core/src/gen/dline/v1/settings_pb.js";
import { followUntilDone, setAutoApproval } from "../runtime/harness.js";
import {
  conversationOf,
  isAlive,
  mcpServerScript,
  setupTask,
  startHttpMcpServer,
  toolNamesOf,
  waitFor,
  writeFile,
} from "./helpers.js";
import { nth } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

const done = (result: string) => ({ toolCalls: [{ name: "attempt_completion", input: { result } }] });
const stdioServer = (label: string) => ({
  command: process.execPath,
  args: [mcpServerScript, "stdio"],
  env: { MCP_TEST_LABEL: label },
});

describe("MCP servers", () => {
  it("stdio and streamable HTTP servers expose tools the model calls, with approval; a server toggles per scope", async () => {
    const { sidecar, clients, server, profileId, workspace, docs } = await setupTask(cleanups, [
      {
        toolCalls: [
          { name: "mcp__calc__add", input: { a: 2, b: 3 } },
          { name: "mcp__remote__add", input: { a: 10, b: 5 } },
          { name: "mcp__calc__whoami", input: {} },
        ],
      },
      done("added"),
      done("second run"),
    ]);
    const http = await startHttpMcpServer(sidecar.roots.base, "remote");
    cleanups.push(() => http.stop());
    writeFile(
      path.join(docs, "settings", "mcp_settings.json"),
      JSON.stringify({ mcpServers: { calc: stdioServer("calc") } }, null, 2),
    );
    writeFile(
      path.join(workspace, ".agents", "mcp", "remote.json"),
      JSON.stringify({ type: "streamableHttp", url: http.url }),
    );
    await clients.settings.trustWorkspace({ workspaceRoot: workspace, trusted: true });

    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "add numbers", profileId });
    const asked: string[] = [];
    await followUntilDone(clients, taskId, async (e) => {
      if (e.event.case !== "ask") return;
      expect(e.event.value.kind).toBe(AskKind.TOOL_APPROVAL); // useMcp is not auto-approved by default
      asked.push(e.event.value.tool);
      await clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: true });
    });
    expect(asked).toEqual(["mcp__calc__add", "mcp__remote__add", "mcp__calc__whoami"]);
    const requests = await server.requests();
    expect(toolNamesOf(recorded(requests, 0))).toEqual(
      expect.arrayContaining(["mcp__calc__add", "mcp__calc__whoami", "mcp__calc__crash", "mcp__remote__add"]),
    );
    const results = conversationOf(recorded(requests, 1));
    expect(results).toContain("sum=5 from calc");
    expect(results).toContain("sum=15 from remote");
    const pid = Number(/pid=(\d+)/.exec(results)![1]);
    expect(isAlive(pid)).toBe(true);

    const listed = await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "mcp" });
    const calc = listed.capabilities.find((c) => c.name === "calc")!;
    expect(calc).toMatchObject({
      origin: "global",
      sourcePath: path.join(docs, "settings", "mcp_settings.json"),
      enabled: true,
    });
    expect(calc.mcp).toMatchObject({ state: McpServerState.CONNECTED, transport: "stdio", restarts: 0 });
    expect([...calc.mcp!.tools].sort()).toEqual(["add", "crash", "whoami"]);
    const remote = listed.capabilities.find((c) => c.name === "remote")!;
    expect(remote).toMatchObject({ origin: "workspace" });
    expect(remote.mcp).toMatchObject({ state: McpServerState.CONNECTED, transport: "streamable HTTP" });

    // Disabled for this task only: its tools are gone from the next turn.
    await clients.settings.setCapabilityToggle({
      scope: ToggleScope.TASK,
      workspaceRoot: workspace,
      taskId,
      kind: "mcp",
      resource: "remote",
      state: ToggleState.DISABLED,
    });
    await clients.tasks.sendMessage({ taskId, text: "again" });
    await followUntilDone(clients, taskId, undefined, (await clients.tasks.getTask({ taskId })).lastSeq - 1n);
    const names = toolNamesOf(recorded(await server.requests(), 2));
    expect(names).toContain("mcp__calc__add");
    expect(names).not.toContain("mcp__remote__add");

    // A server removed from its file is stopped.
    writeFile(path.join(docs, "settings", "mcp_settings.json"), JSON.stringify({ mcpServers: {} }));
    const after = await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "mcp" });
    expect(after.capabilities.map((c) => c.name)).toEqual(["remote"]);
    await waitFor(async () => (isAlive(pid) ? undefined : true), "the removed stdio server to exit");
  });

  it("a crashing server is restarted (in the background, with backoff) and reported; servers stop with the sidecar", async () => {
    const { sidecar, clients, server, profileId, workspace, docs } = await setupTask(cleanups, [
      { toolCalls: [{ name: "mcp__flaky__whoami", input: {} }] },
      { toolCalls: [{ name: "mcp__flaky__crash", input: {} }] },
      done("crashed"),
      { toolCalls: [{ name: "mcp__flaky__whoami", input: {} }] },
      done("survived"),
    ]);
    await setAutoApproval(clients, { useMcp: true });
    writeFile(path.join(docs, "mcp", "flaky.json"), JSON.stringify(stdioServer("flaky")));
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "crash it", profileId });
    let events = await followUntilDone(clients, taskId);
    expect(events.at(-1)!.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
    let requests = await server.requests();
    const before = Number(/pid=(\d+)/.exec(conversationOf(recorded(requests, 1)))![1]);
    expect(conversationOf(recorded(requests, 2))).toContain('MCP server \\"flaky\\" failed');
    await waitFor(async () => (isAlive(before) ? undefined : true), "the crashed server to be gone");

    // Restarted without waiting for a turn to need it, and reported.
    const flaky = await waitFor(async () => {
      const c = nth(
        (await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "mcp" })).capabilities,
        0,
        "capability",
      );
      return c.mcp!.state === McpServerState.CONNECTED && c.mcp!.restarts >= 1 ? c : undefined;
    }, "the restart");
    expect(flaky).toMatchObject({ name: "flaky", origin: "global", sourcePath: path.join(docs, "mcp", "flaky.json") });
    expect(flaky.mcp!.lastError).toContain("exited");
    expect(flaky.mcp!.lastError).toContain("crashing on purpose");

    // The restarted server answers the next turn.
    await clients.tasks.sendMessage({ taskId, text: "are you back?" });
    events = await followUntilDone(clients, taskId, undefined, (await clients.tasks.getTask({ taskId })).lastSeq - 1n);
    expect(events.at(-1)!.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
    requests = await server.requests();
    const after = Number([...conversationOf(recorded(requests, 4)).matchAll(/pid=(\d+)/g)].at(-1)![1]);
    expect(after).not.toBe(before);
    expect(isAlive(after)).toBe(true);

    // Servers stop with the sidecar.
    await sidecar.stop();
    await waitFor(async () => (isAlive(after) ? undefined : true), "the stdio server to exit");
  });

  it("a malformed mcp_settings.json is reported and kept as it is; a broken server is reported", async () => {
    const { clients, server, profileId, workspace, docs } = await setupTask(cleanups, [done("fine")]);
    const settingsFile = path.join(docs, "settings", "mcp_settings.json");
    const malformed = '{ "mcpServers": { "calc": { "command": "node", ';
    writeFile(settingsFile, malformed);
    writeFile(
      path.join(workspace, ".agents", "mcp", "broken.json"),
      JSON.stringify({ command: path.join(workspace, "no-such-server") }),
    );
    writeFile(path.join(workspace, ".agents", "mcp", "odd.json"), JSON.stringify({ url: "ftp://example.invalid/" }));
    await clients.settings.trustWorkspace({ workspaceRoot: workspace, trusted: true });

    // A task still runs; the bad servers offer no tools.
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "hello", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(events.at(-1)!.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
    expect(toolNamesOf(recorded(await server.requests(), 0)).filter((n) => n.startsWith("mcp__"))).toEqual([]);

    const listed = await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "mcp", connectMcp: true });
    expect(listed.problems).toHaveLength(1);
    expect(listed.problems[0]).toMatchObject({ path: settingsFile, code: "data_loss" });
    expect(nth(listed.problems, 0, "problem").message).toContain("kept");
    expect(fs.readFileSync(settingsFile, "utf8")).toBe(malformed);
    expect(fs.readdirSync(path.dirname(settingsFile))).toEqual(["mcp_settings.json"]);
    const broken = listed.capabilities.find((c) => c.name === "broken")!;
    expect(broken.enabled).toBe(true);
    expect([McpServerState.RESTARTING, McpServerState.FAILED]).toContain(broken.mcp!.state);
    expect(broken.error).not.toBe("");
    const odd = listed.capabilities.find((c) => c.name === "odd")!;
    expect(odd).toMatchObject({ enabled: false, error: "url must be http or https" });
  });
});
