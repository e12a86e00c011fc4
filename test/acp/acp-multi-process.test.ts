/**
 * Two `dline-core acp` processes over the same roots (two editor windows): both list the same
 * history; a session running in one cannot be prompted from the other (the task has one
 * writer), and once it is idle either continues it, each seeing the other's messages.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBinaryBuilt, makeTestRoots, startSidecar, type TestRoots } from "../helpers/sidecar.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, makeWorkspace } from "../runtime/harness.js";
import { agentText, startAcpAgent, updatesOf, waitFor, type RunningAcpAgent } from "./acp-harness.js";
import { recorded } from "../model-server/script.js";

let roots: TestRoots;
let model: ModelServerProcess;
let workspace: string;
const agents: RunningAcpAgent[] = [];
/** The file a sidecar holds while it runs (or asks in) a task: one writer per task. */
const ownerLock = (taskId: string) => path.join(roots.docsDir, "tasks", taskId, "owner.lock");

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-multi-");
  workspace = makeWorkspace(roots.base);
  const sidecar = await startSidecar({ roots });
  ({ server: model } = await configureModel(sidecar.clients, "anthropic", {
    turns: [
      { text: "slow answer ".repeat(50), writeChunkBytes: 100, writeDelayMs: 40 },
      { text: "Answer to B." },
      { text: "Answer to A again." },
    ],
  }));
  await sidecar.stop();
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await model?.stop();
  fs.rmSync(roots.base, { recursive: true, force: true });
});

describe("two ACP processes over the same roots", () => {
  it("share the history, keep one writer per task, and continue each other's sessions", async () => {
    const a = await startAcpAgent(roots);
    agents.push(a);
    const b = await startAcpAgent(roots);
    agents.push(b);
    const { sessionId } = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    const running = a.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Question from A" }],
    });
    await waitFor(() => a.updates.some((u) => u.update.sessionUpdate === "agent_message_chunk"));
    expect(fs.existsSync(ownerLock(sessionId))).toBe(true);

    // B sees the session in the shared history and can load it, but not write while A runs it.
    expect((await b.agent.request("session/list", { cwd: workspace })).sessions.map((s) => s.sessionId)).toContain(
      sessionId,
    );
    await b.agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
    await expect(
      b.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "too early" }] }),
    ).rejects.toMatchObject({
      code: -32603,
      data: { dlineCode: "failed_precondition" },
    });
    expect((await running).stopReason).toBe("end_turn");
    // The answer comes once A has let the task go: the claim is gone the moment the turn ends.
    expect(fs.existsSync(ownerLock(sessionId))).toBe(false);

    // Idle now: B continues it, then A again, each with the whole conversation.
    expect(
      (await b.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Message from B" }] }))
        .stopReason,
    ).toBe("end_turn");
    expect(fs.existsSync(ownerLock(sessionId))).toBe(false);
    expect(agentText(updatesOf(b, sessionId))).toContain("Answer to B.");
    expect(
      (await a.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Back to A" }] }))
        .stopReason,
    ).toBe("end_turn");
    const requests = await model.requests();
    const last = JSON.stringify(recorded(requests, 2).body);
    expect(last).toContain("Question from A");
    expect(last).toContain("Message from B");
    expect(last).toContain("Answer to B.");
    expect(last).toContain("Back to A");
  });
});
