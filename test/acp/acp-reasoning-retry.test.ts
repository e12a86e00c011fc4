/**
 * Reasoning and retries in an ACP editor, through the official SDK's client side: the model's
 * reasoning streams as agent_thought_chunk (every chunk of it), and a retried request shows as a
 * thought saying when the next attempt comes.
 */
import * as fs from "node:fs";
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
import { agentText, startAcpAgent, updatesOf, type RunningAcpAgent } from "./acp-harness.js";

let roots: TestRoots;
let workspace: string;
let sidecar: RunningSidecar;
let model: { server: ModelServerProcess; profileId: string };
let agent: RunningAcpAgent | undefined;

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-reasoning-");
  workspace = makeWorkspace(roots.base);
  sidecar = await startSidecar({ roots });
  model = await configureModel(sidecar.clients, "anthropic", {
    turns: [
      { status: 529, retryAfterMs: "200", errorMessage: "Overloaded" },
      {
        reasoning: "THOUGHT-3f: the person greets me; a short greeting back will do.",
        text: "Hello there.",
        textChunkChars: 5,
      },
    ],
  });
  await sidecar.clients.settings.updateSettings({ scope: 1, patch: { defaultProfileId: model.profileId } });
});

afterAll(async () => {
  await agent?.stop();
  await sidecar?.stop();
  await model?.server.stop();
  fs.rmSync(roots.base, { recursive: true, force: true });
});

describe("dline-core acp: reasoning and retries", () => {
  it("streams the whole reasoning as thoughts and shows the retry", async () => {
    agent = await startAcpAgent(roots);
    const { sessionId } = await agent.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    const result = await agent.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
    expect(result.stopReason).toBe("end_turn");
    const updates = updatesOf(agent, sessionId);
    const thoughts = updates
      .filter(
        (u): u is Extract<acp.SessionUpdate, { sessionUpdate: "agent_thought_chunk" }> =>
          u.sessionUpdate === "agent_thought_chunk",
      )
      .map((u) => (u.content.type === "text" ? u.content.text : ""));
    expect(thoughts.join("")).toContain(
      "retrying in 1 s (attempt 2 of 6): Anthropic failed to answer (HTTP 529). Server said: Overloaded",
    );
    expect(thoughts.join("")).toContain("THOUGHT-3f: the person greets me; a short greeting back will do.");
    expect(thoughts.length).toBeGreaterThan(3);
    expect(agentText(updates)).toBe("Hello there.");
  });
});
