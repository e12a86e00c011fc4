/**
 * Capabilities end to end through the real sidecar binary and the scripted model: a
 * subagent's allow-list restricts every tool (load_skill, load_workflow, MCP tools too); project
 * hooks and MCP servers wait for the workspace to be trusted; an MCP server toggled off has its
 * process stopped and starts again on demand (also in another sidecar process over the same
 * roots, at its next scan); the hook timeout is a setting.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { McpServerState, SettingsScope, ToggleScope, ToggleState } from "../../core/src/gen/dline/v1/settings_pb.js";
import { toolAllowed } from "../../core/src/runtime/capabilities-port.js";
import { startSidecar } from "../helpers/sidecar.js";
import { followUntilDone, setAutoApproval } from "../runtime/harness.js";
import {
  activities,
  conversationOf,
  isAlive,
  mcpServerScript,
  setupTask,
  systemPromptOf,
  toolNamesOf,
  waitFor,
  writeFile,
} from "./helpers.js";
import { recorded } from "../model-server/script.js";
import { nth } from "../helpers/items.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

const done = (result: string) => ({ toolCalls: [{ name: "attempt_completion", input: { result } }] });
/** A stdio test server that logs its calls to `log` and writes its pid to `<log>.pid-<label>`. */
const loggedServer = (label: string, log: string) => ({
  command: process.execPath,
  args: [mcpServerScript, "stdio"],
  env: { MCP_TEST_LABEL: label, MCP_TEST_CALL_LOG: log },
});
const calls = (log: string) =>
  fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n").filter(Boolean) : [];
const pidOf = (log: string, label: string) =>
  fs.existsSync(`${log}.pid-${label}`) ? Number(fs.readFileSync(`${log}.pid-${label}`, "utf8")) : undefined;

describe("subagent allow-list", () => {
  it("matches names exactly or by a trailing *; attempt_completion is always allowed", () => {
    expect(toolAllowed("read_file", undefined)).toBe(true);
    expect(toolAllowed("read_file", ["read_file"])).toBe(true);
    expect(toolAllowed("read_files", ["read_file"])).toBe(false);
    expect(toolAllowed("attempt_completion", [])).toBe(true);
    expect(toolAllowed("mcp__docs__search", ["mcp__docs__*"])).toBe(true);
    expect(toolAllowed("mcp__docsx__search", ["mcp__docs__*"])).toBe(false);
    expect(toolAllowed("load_skill", ["read_file", "mcp__*"])).toBe(false);
  });

  it("a subagent allowed only read_file is refused load_skill, load_workflow and MCP tools, which never run", async () => {
    const { sidecar, clients, server, profileId, workspace, docs } = await setupTask(cleanups, [
      {
        toolCalls: [
          { name: "mcp__calc__add", input: { a: 1, b: 2 } },
          { name: "new_subagent", input: { prompt: "Look around", subagent: "reader" } },
        ],
      },
      {
        toolCalls: [
          { name: "mcp__calc__whoami", input: {} },
          { name: "load_skill", input: { name: "notes" } },
          { name: "load_workflow", input: { name: "ship" } },
          { name: "read_file", input: { path: "README.md" } },
        ],
      },
      done("reader done"),
      done("all done"),
    ]);
    await setAutoApproval(clients, { readFiles: true, useMcp: true });
    const log = path.join(sidecar.roots.base, "calc-calls.log");
    writeFile(
      path.join(docs, "settings", "mcp_settings.json"),
      JSON.stringify({ mcpServers: { calc: loggedServer("calc", log) } }),
    );
    writeFile(
      path.join(docs, "skills", "notes", "SKILL.md"),
      "---\nname: notes\ndescription: Take notes (NOTES-SKILL-MARKER)\n---\nSKILL-BODY-MARKER\n",
    );
    writeFile(path.join(docs, "workflows", "ship.md"), "SHIP-WORKFLOW-MARKER\n");
    writeFile(
      path.join(docs, "subagents", "reader.md"),
      "---\nname: reader\ndescription: Reads\ntools: [read_file]\n---\nYou only read.\n",
    );

    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "go", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(events.at(-1)!.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
    const requests = await server.requests();
    expect(requests).toHaveLength(4);
    // The parent has everything.
    expect(toolNamesOf(recorded(requests, 0))).toEqual(
      expect.arrayContaining(["load_skill", "load_workflow", "mcp__calc__whoami", "new_subagent"]),
    );
    expect(systemPromptOf(recorded(requests, 0))).toContain("NOTES-SKILL-MARKER");
    // The subagent is offered its allow-list only, and no skills list.
    expect(toolNamesOf(recorded(requests, 1)).sort()).toEqual(["attempt_completion", "read_file"]);
    expect(systemPromptOf(recorded(requests, 1))).not.toContain("NOTES-SKILL-MARKER");
    // Calls outside it are refused and do not run; the allowed one does.
    const results = conversationOf(recorded(requests, 2));
    expect(results).toContain('Unknown tool \\"mcp__calc__whoami\\"');
    expect(results).toContain('Unknown tool \\"load_skill\\"');
    expect(results).toContain('Unknown tool \\"load_workflow\\"');
    expect(results).not.toContain("SKILL-BODY-MARKER");
    expect(results).not.toContain("SHIP-WORKFLOW-MARKER");
    expect(results).toContain("# demo");
    expect(calls(log)).toEqual(["calc add"]); // the parent's call only
    expect(conversationOf(recorded(requests, 3))).toContain("reader done");
  });
});

describe("workspace trust", () => {
  it("another sidecar process over the same roots follows trust and global toggles at its next scan", async () => {
    const { sidecar, clients: a, workspace, docs } = await setupTask(cleanups, []);
    const other = await startSidecar({ roots: sidecar.roots });
    cleanups.push(() => other.stop());
    const b = other.clients;
    const log = path.join(sidecar.roots.base, "calls.log");
    writeFile(path.join(workspace, ".agents", "mcp", "proj.json"), JSON.stringify(loggedServer("proj", log)));
    writeFile(path.join(docs, "mcp", "calc.json"), JSON.stringify(loggedServer("calc", log)));
    const stateIn = async (clients: typeof a, name: string) =>
      (
        await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "mcp", connectMcp: true })
      ).capabilities.find((c) => c.name === name)!.mcp!.state;

    expect(await stateIn(b, "proj")).toBe(McpServerState.UNTRUSTED);
    await a.settings.trustWorkspace({ workspaceRoot: workspace, trusted: true });
    expect(await stateIn(b, "proj")).toBe(McpServerState.CONNECTED); // B started it
    expect(await stateIn(b, "calc")).toBe(McpServerState.CONNECTED);
    const proj = pidOf(log, "proj")!;
    const calc = pidOf(log, "calc")!;
    expect(isAlive(proj) && isAlive(calc)).toBe(true);

    // Changed through A; B stops its own processes when it next reads the capabilities.
    await a.settings.trustWorkspace({ workspaceRoot: workspace, trusted: false });
    await a.settings.setCapabilityToggle({
      scope: ToggleScope.GLOBAL,
      kind: "mcp",
      resource: "calc",
      state: ToggleState.DISABLED,
    });
    expect(await stateIn(b, "proj")).toBe(McpServerState.UNTRUSTED);
    expect(await stateIn(b, "calc")).toBe(McpServerState.STOPPED);
    await waitFor(async () => (isAlive(proj) || isAlive(calc) ? undefined : true), "B's servers to exit");
  });

  it("project hooks and MCP servers are listed untrusted and never run until the workspace is trusted; distrust stops them", async () => {
    const { sidecar, clients, server, profileId, workspace, docs } = await setupTask(cleanups, [
      done("untrusted run"),
      { toolCalls: [{ name: "mcp__proj__whoami", input: {} }] },
      done("trusted run"),
    ]);
    await setAutoApproval(clients, { useMcp: true });
    const log = path.join(sidecar.roots.base, "proj-calls.log");
    writeFile(
      path.join(workspace, ".agents", "hooks", "UserPromptSubmit.sh"),
      "#!/bin/sh\ncat >/dev/null\necho WS-HOOK-RAN\n",
      0o755,
    );
    writeFile(
      path.join(docs, "hooks", "UserPromptSubmit.sh"),
      "#!/bin/sh\ncat >/dev/null\necho GLOBAL-HOOK-RAN\n",
      0o755,
    );
    writeFile(path.join(workspace, ".agents", "mcp", "proj.json"), JSON.stringify(loggedServer("proj", log)));

    let listed = await clients.settings.listCapabilities({ workspaceRoot: workspace, connectMcp: true });
    expect(listed.workspaceTrusted).toBe(false);
    const hookOf = (origin: string) => listed.capabilities.find((c) => c.kind === "hooks" && c.origin === origin)!;
    expect(hookOf("workspace")).toMatchObject({ untrusted: true, enabled: false });
    expect(hookOf("global")).toMatchObject({ untrusted: false, enabled: true });
    const proj = () => listed.capabilities.find((c) => c.kind === "mcp" && c.name === "proj")!;
    expect(proj()).toMatchObject({ untrusted: true, enabled: false, origin: "workspace" });
    expect(proj().mcp!.state).toBe(McpServerState.UNTRUSTED);
    expect(pidOf(log, "proj")).toBeUndefined(); // connect_mcp did not start it

    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "hello", profileId });
    await followUntilDone(clients, taskId);
    expect(toolNamesOf(recorded(await server.requests(), 0)).filter((n) => n.startsWith("mcp__"))).toEqual([]);
    const activitiesDb = path.join(docs, "tasks", taskId, "activities.db");
    const hookOutputs = () =>
      activities(activitiesDb)
        .filter((a) => a.kind === "hook")
        .map((a) => String(a.data.output).trim());
    expect(hookOutputs()).toEqual(["GLOBAL-HOOK-RAN"]);
    expect(pidOf(log, "proj")).toBeUndefined();

    // Trust is the workspace's own setting: a task cannot grant it.
    const byTask = await clients.settings
      .updateSettings({ scope: SettingsScope.TASK, taskId, patch: { workspaceTrusted: true } })
      .catch((e) => e);
    expect(ConnectError.from(byTask).code).toBe(Code.InvalidArgument);
    const relative = await clients.settings.trustWorkspace({ workspaceRoot: "ws", trusted: true }).catch((e) => e);
    expect(ConnectError.from(relative).code).toBe(Code.InvalidArgument);

    expect((await clients.settings.trustWorkspace({ workspaceRoot: workspace, trusted: true })).workspaceTrusted).toBe(
      true,
    );
    listed = await clients.settings.listCapabilities({ workspaceRoot: workspace });
    expect(listed.workspaceTrusted).toBe(true);
    expect(proj()).toMatchObject({ untrusted: false, enabled: true });
    await clients.tasks.sendMessage({ taskId, text: "now with the project's tools" });
    await followUntilDone(clients, taskId, undefined, (await clients.tasks.getTask({ taskId })).lastSeq - 1n);
    expect(toolNamesOf(recorded(await server.requests(), 1))).toContain("mcp__proj__whoami");
    expect(calls(log)).toEqual(["proj whoami"]);
    expect(hookOutputs().slice(1).sort()).toEqual(["GLOBAL-HOOK-RAN", "WS-HOOK-RAN"]);
    const pid = pidOf(log, "proj")!;
    expect(isAlive(pid)).toBe(true);

    // No longer trusted: its server stops at once and is listed untrusted again.
    await clients.settings.trustWorkspace({ workspaceRoot: workspace, trusted: false });
    await waitFor(async () => (isAlive(pid) ? undefined : true), "the distrusted server to exit");
    listed = await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "mcp" });
    expect(proj().mcp!.state).toBe(McpServerState.UNTRUSTED);
  });
});

describe("MCP server toggles and hook timeout", () => {
  it("a server toggled off (global or workspace scope) stops its process; toggled on again it starts on demand", async () => {
    const { sidecar, clients, workspace, docs } = await setupTask(cleanups, []);
    const log = path.join(sidecar.roots.base, "calc-calls.log");
    writeFile(
      path.join(docs, "settings", "mcp_settings.json"),
      JSON.stringify({ mcpServers: { calc: loggedServer("calc", log) } }),
    );
    const connectedPid = async () => {
      const calc = nth(
        (await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "mcp", connectMcp: true }))
          .capabilities,
        0,
        "capability",
      );
      expect(calc.mcp!.state).toBe(McpServerState.CONNECTED);
      return pidOf(log, "calc")!;
    };
    const toggle = (scope: ToggleScope, state: ToggleState) =>
      clients.settings.setCapabilityToggle({ scope, workspaceRoot: workspace, kind: "mcp", resource: "calc", state });

    const first = await connectedPid();
    expect(isAlive(first)).toBe(true);
    await toggle(ToggleScope.GLOBAL, ToggleState.DISABLED);
    await waitFor(async () => (isAlive(first) ? undefined : true), "the disabled server to exit");
    const off = nth(
      (await clients.settings.listCapabilities({ workspaceRoot: workspace, kind: "mcp", connectMcp: true }))
        .capabilities,
      0,
      "capability",
    );
    expect(off).toMatchObject({ enabled: false });
    expect(off.mcp!.state).toBe(McpServerState.STOPPED); // connect_mcp does not start a disabled server

    await toggle(ToggleScope.GLOBAL, ToggleState.INHERIT);
    const second = await connectedPid();
    expect(second).not.toBe(first);
    expect(isAlive(second)).toBe(true);

    await toggle(ToggleScope.WORKSPACE, ToggleState.DISABLED);
    await waitFor(async () => (isAlive(second) ? undefined : true), "the server disabled for the workspace to exit");
  });

  it("hookTimeoutSeconds bounds a hook: a slow PreToolUse hook times out and blocks", async () => {
    const { clients, server, profileId, workspace, docs } = await setupTask(cleanups, [
      { toolCalls: [{ name: "read_file", input: { path: "README.md" } }] },
      done("blocked"),
    ]);
    await setAutoApproval(clients, { readFiles: true });
    const bad = await clients.settings
      .updateSettings({ scope: SettingsScope.GLOBAL, patch: { hookTimeoutSeconds: 0 } })
      .catch((e) => e);
    expect(ConnectError.from(bad).code).toBe(Code.InvalidArgument);
    await clients.settings.updateSettings({
      scope: SettingsScope.WORKSPACE,
      workspaceRoot: workspace,
      patch: { hookTimeoutSeconds: 1 },
    });
    // Within the default 30 s this hook would allow the read (it exits 0 after 5 s).
    writeFile(
      path.join(docs, "hooks", "PreToolUse.sh"),
      '#!/bin/sh\ncase "$(cat)" in *read_file*) sleep 5;; esac\nexit 0\n',
      0o755,
    );

    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "read it", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(events.at(-1)!.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
    const results = conversationOf(recorded(await server.requests(), 1));
    expect(results).toContain("A PreToolUse hook blocked read_file");
    expect(results).toContain("timed out");
    expect(results).not.toContain("# demo");
    const runs = activities(path.join(docs, "tasks", taskId, "activities.db")).filter((a) => a.kind === "hook");
    expect(runs.map((r) => r.data)).toMatchObject([
      { event: "PreToolUse", timedOut: true },
      { event: "PreToolUse", timedOut: false, exitCode: 0 }, // attempt_completion: allowed
    ]);
  });
});
