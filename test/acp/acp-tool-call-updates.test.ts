/**
 * What an ACP client receives of a prompt whose turn runs commands and an edit: every
 * session/update recorded, each tool call's statuses in ACP's order (pending → in_progress →
 * completed / failed, nothing after the end) and its final content sent once: by a client that
 * runs commands in its own terminal (as Zed does) the terminal is shown while the command runs
 * and the final update only ends the call; by a client without one, the output streams into
 * the call and the final update carries the result. The model's words, its plan and the
 * permission requests are not repeated either.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as acp from "@agentclientprotocol/sdk";
import { assertBinaryBuilt, makeTestRoots, startSidecar, type TestRoots } from "../helpers/sidecar.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, makeWorkspace, setAutoApproval } from "../runtime/harness.js";
import { agentText, startAcpAgent, updatesOf, type RunningAcpAgent } from "./acp-harness.js";

const SLOW_COMMAND = "echo one; sleep 0.4; echo two";
const FAILING_COMMAND = "echo broken; exit 3";
const PLAN = [
  { step: "Run the checks", status: "in_progress" },
  { step: "Bump the version", status: "pending" },
];

/** One prompt's model turns: a plan and a slow command, an edit of version `from`, a failing command. */
function turns(from: number) {
  return [
    {
      text: "Running the checks.",
      toolCalls: [
        { name: "update_plan", input: { plan: PLAN } },
        { name: "execute_command", input: { command: SLOW_COMMAND, requires_approval: false } },
      ],
    },
    {
      text: "Bumping the version.",
      toolCalls: [
        {
          name: "replace_in_file",
          input: {
            path: "version.txt",
            diff: `------- SEARCH\nversion ${from}\n=======\nversion ${from + 1}\n+++++++ REPLACE\n`,
          },
        },
      ],
    },
    { toolCalls: [{ name: "execute_command", input: { command: FAILING_COMMAND, requires_approval: false } }] },
    { text: "Done." },
  ];
}

let roots: TestRoots;
let model: ModelServerProcess;
let workspace: string;
const agents: RunningAcpAgent[] = [];

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-tool-updates-");
  workspace = makeWorkspace(roots.base, { "version.txt": "version 0\n" });
  const sidecar = await startSidecar({ roots });
  ({ server: model } = await configureModel(sidecar.clients, "anthropic", { turns: [...turns(0), ...turns(1)] }));
  // Every command and edit is asked (and allowed): each call goes pending -> in_progress -> end.
  await setAutoApproval(sidecar.clients, { enabled: false });
  await sidecar.stop();
});

afterAll(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
  await model?.stop();
  fs.rmSync(roots.base, { recursive: true, force: true });
});

type ToolCallStart = Extract<acp.SessionUpdate, { sessionUpdate: "tool_call" }>;
type ToolCallUpdate = Extract<acp.SessionUpdate, { sessionUpdate: "tool_call_update" }>;

/** One tool call as the client saw it: its start, its updates, and its content at the end (each content replaces the last). */
function toolCall(updates: acp.SessionUpdate[], start: ToolCallStart) {
  const own = updates.filter(
    (u): u is ToolCallUpdate => u.sessionUpdate === "tool_call_update" && u.toolCallId === start.toolCallId,
  );
  const content = own.reduce<acp.ToolCallContent[]>((shown, u) => u.content ?? shown, start.content ?? []);
  return {
    statuses: [start.status, ...own.map((u) => u.status)].filter(Boolean),
    updates: own,
    content,
    /** The updates that carried the final content. */
    sentFinal: own.filter((u) => u.content && isDeepStrictEqual(u.content, content)).length,
  };
}

async function runPrompt(offer: { fs?: boolean; terminal?: boolean }) {
  const a = await startAcpAgent(roots, offer);
  agents.push(a);
  const { sessionId } = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
  const res = await a.agent.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "Run the checks and bump the version" }],
  });
  expect(res.stopReason).toBe("end_turn");
  const updates = updatesOf(a, sessionId);
  const starts = updates.filter((u): u is ToolCallStart => u.sessionUpdate === "tool_call");
  expect(starts.map((s) => s.kind)).toEqual(["execute", "edit", "execute"]);
  expect(new Set(starts.map((s) => s.toolCallId)).size).toBe(3);
  const [command, edit, failing] = starts.map((s) => toolCall(updates, s));

  // Statuses in ACP's order, each call's final status its last update.
  for (const call of [command!, edit!]) expect(call.statuses).toEqual(["pending", "in_progress", "completed"]);
  expect(failing!.statuses).toEqual(["pending", "in_progress", "failed"]);
  for (const call of [command!, edit!, failing!]) {
    expect(call.updates.at(-1)?.status).toMatch(/^(completed|failed)$/);
    // The final content reached the client once.
    expect(call.sentFinal).toBe(1);
  }

  // The edit ends showing the applied diff.
  expect(edit!.content).toEqual([expect.objectContaining({ type: "diff", path: path.join(workspace, "version.txt") })]);
  // The other kinds: the model's words once each, one plan, one permission request per call.
  expect(agentText(updates)).toBe("Running the checks.\n\nBumping the version.\n\nDone.");
  const plans = updates.filter((u) => u.sessionUpdate === "plan");
  expect(plans).toHaveLength(1);
  expect(plans[0]).toMatchObject({ entries: PLAN.map((p) => ({ content: p.step, status: p.status })) });
  expect(a.permissions.map((p) => p.toolCall.toolCallId)).toEqual(starts.map((s) => s.toolCallId));
  return { a, command: command!, failing: failing! };
}

describe("dline-core acp: a tool call's updates", () => {
  it("a client running commands in its terminal gets the terminal once, and the final status after it", async () => {
    const { a, command, failing } = await runPrompt({ fs: true, terminal: true });
    expect(a.terminals.map((t) => t.args[1])).toEqual([SLOW_COMMAND, FAILING_COMMAND]);
    expect(command.content).toEqual([{ type: "terminal", terminalId: "term-1" }]);
    expect(failing.content).toEqual([{ type: "terminal", terminalId: "term-2" }]);
    for (const call of [command, failing]) {
      // The terminal while the command runs; the final update ends the call with its result.
      const withTerminal = call.updates.filter((u) => u.content?.some((c) => c.type === "terminal"));
      expect(withTerminal).toHaveLength(1);
      expect(withTerminal[0]!.status ?? undefined).toBeUndefined();
      expect(call.updates.at(-1)).toMatchObject({ rawOutput: { ok: call === command } });
    }
    expect(fs.readFileSync(path.join(workspace, "version.txt"), "utf8")).toBe("version 1\n");
  });

  it("a client without a terminal gets the output as it streams, then the result once with the final status", async () => {
    const { command, failing } = await runPrompt({});
    const texts = command.updates.map((u) =>
      (u.content ?? []).map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : "")).join(""),
    );
    // Streamed before the command ended (the second line comes 0.4 s after the first).
    const final = "Output:\none\ntwo\nExit code: 0";
    expect(texts.slice(0, -1)).toContain("one\n");
    expect(texts.at(-1)).toBe(final);
    expect(command.updates.at(-1)?.status).toBe("completed");
    expect(command.content).toEqual([{ type: "content", content: { type: "text", text: final } }]);
    expect(failing.content).toEqual([
      { type: "content", content: { type: "text", text: "Output:\nbroken\nExit code: 3" } },
    ]);
    expect(fs.readFileSync(path.join(workspace, "version.txt"), "utf8")).toBe("version 2\n");
  });
});
