/**
 * When the ACP client offers fs/* and terminal/*, the tools use them: read_file and
 * replace_in_file see the editor's unsaved buffer, writes go through the client, and
 * execute_command runs in a client terminal shown in the tool call. Checkpoints are still
 * saved at every save point.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as acp from "@agentclientprotocol/sdk";
import {
  assertBinaryBuilt,
  makeTestRoots,
  startSidecar,
  type RunningSidecar,
  type TestRoots,
} from "../helpers/sidecar.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, makeWorkspace } from "../runtime/harness.js";
import { startAcpAgent, updatesOf, type RunningAcpAgent } from "./acp-harness.js";
import { recorded } from "../model-server/script.js";
import { nth } from "../helpers/items.js";

let roots: TestRoots;
let sidecar: RunningSidecar;
let model: ModelServerProcess;
let workspace: string;
let agent: RunningAcpAgent | undefined;

const COMMAND = "echo from-terminal && cat src/app.txt";

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-io-");
  workspace = makeWorkspace(roots.base, { "src/app.txt": "hello on disk\n" });
  sidecar = await startSidecar({ roots });
  ({ server: model } = await configureModel(sidecar.clients, "anthropic", {
    turns: [
      { toolCalls: [{ name: "read_file", input: { path: "src/app.txt" } }] },
      {
        toolCalls: [
          {
            name: "replace_in_file",
            input: {
              path: "src/app.txt",
              diff: "------- SEARCH\nhello from the unsaved buffer\n=======\nedited buffer\n+++++++ REPLACE",
            },
          },
        ],
      },
      { toolCalls: [{ name: "write_to_file", input: { path: "out/new.txt", content: "new file\n" } }] },
      { toolCalls: [{ name: "execute_command", input: { command: COMMAND, requires_approval: false } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "ok" } }] },
    ],
  }));
  await sidecar.stop();
});

afterAll(async () => {
  await agent?.stop();
  await model?.stop();
  fs.rmSync(roots.base, { recursive: true, force: true });
});

describe("dline-core acp with the client's fs and terminal", () => {
  it("reads unsaved buffers, writes through the client and runs commands in a client terminal", async () => {
    agent = await startAcpAgent(roots, { fs: true, terminal: true });
    const appFile = path.join(workspace, "src/app.txt");
    agent.buffers.set(appFile, "hello from the unsaved buffer\n");
    const { sessionId } = await agent.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    const res = await agent.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Edit the app file and run it" }],
    });
    expect(res.stopReason).toBe("end_turn");

    // Reads went to the client (the buffer): read_file; replace_in_file computing its change,
    // checking after the approval that the buffer did not change, and once more as it writes.
    expect(agent.fsCalls.filter((c) => c.method === "read").map((c) => c.path)).toEqual([
      appFile,
      appFile,
      appFile,
      appFile,
    ]);
    // The permission prompts of the edits carry their diffs, computed from the buffer.
    const diffs = agent.permissions.map((p) => (p.toolCall.content ?? []).find((c) => c.type === "diff"));
    expect(diffs[1]).toEqual({
      type: "diff",
      path: appFile,
      oldText: "hello from the unsaved buffer\n",
      newText: "edited buffer\n",
    });
    expect(diffs[2]).toEqual({
      type: "diff",
      path: path.join(workspace, "out/new.txt"),
      oldText: null,
      newText: "new file\n",
    });
    // Writes went through the client to the disk.
    expect(agent.fsCalls.filter((c) => c.method === "write").map((c) => [c.path, c.content])).toEqual([
      [appFile, "edited buffer\n"],
      [path.join(workspace, "out/new.txt"), "new file\n"],
    ]);
    expect(fs.readFileSync(appFile, "utf8")).toBe("edited buffer\n");

    // The command ran in a client terminal, in the workspace, and was released.
    expect(agent.terminals).toHaveLength(1);
    const terminal = nth(agent.terminals, 0, "terminal");
    expect(terminal.args).toEqual(["-c", COMMAND]);
    expect(terminal.cwd).toBe(workspace);
    expect(terminal.released).toBe(true);
    const updates = updatesOf(agent, sessionId);
    const command = updates.find((u) => u.sessionUpdate === "tool_call" && u.kind === "execute") as acp.ToolCall;
    const calls = updates.filter(
      (u): u is Extract<acp.SessionUpdate, { sessionUpdate: "tool_call_update" }> =>
        u.sessionUpdate === "tool_call_update" && u.toolCallId === command.toolCallId,
    );
    // The terminal is shown once, while the command runs; the final update completes the call.
    const shown = calls.filter((u) =>
      (u.content ?? []).some((c) => c.type === "terminal" && c.terminalId === terminal.id),
    );
    expect(shown).toHaveLength(1);
    expect(calls.at(-1)?.status).toBe("completed");

    // The model saw the buffer's text and the terminal's output.
    const requests = await model.requests();
    expect(JSON.stringify(recorded(requests, 1).body)).toContain("hello from the unsaved buffer");
    const last = JSON.stringify(recorded(requests, 4).body);
    expect(last).toContain("from-terminal");
    expect(last).toContain("edited buffer");
    expect(last).toContain("Exit code: 0");

    // Checkpoints were saved at the turns that modified the workspace, with the edited paths.
    type Cp = { kind: string; editedPaths: string[] };
    const cps = (await agent.agent.request<{ checkpoints: Cp[] }>("_dline/checkpoints/list", { sessionId }))
      .checkpoints;
    expect(cps.map((c) => c.kind)).toEqual(["baseline", "turn", "turn", "turn", "completion"]);
    expect(cps.flatMap((c) => c.editedPaths)).toEqual(expect.arrayContaining(["src/app.txt", "out/new.txt"]));
  });
});
