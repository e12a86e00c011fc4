/**
 * Model and command text in an ACP editor, through the official SDK's client side: escape
 * sequences, bells, carriage returns and direction overrides reach the client made visible
 * (`\e[31m`, `\x07`, `\r`, `\u202e`), live and when the session is loaded again, while the
 * markdown and a CR LF newline split between two deltas stay as the model wrote them.
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
import { agentText, allowOnce, startAcpAgent, updatesOf, type RunningAcpAgent } from "./acp-harness.js";

const ANSWER =
  "Colors: \x1b[31mRED\x1b[0m, a title \x1b]0;pwned\x07, \u202eevil.\r\nNext **line**.\n\n```sh\necho hi\n```\n";
const SHOWN_ANSWER =
  "Colors: \\e[31mRED\\e[0m, a title \\e]0;pwned\\x07, \\u202eevil.\nNext **line**.\n\n```sh\necho hi\n```\n";
const COMMAND = "printf '\\033[31mred\\033[0m\\rback\\n'";
const RESULT = "All \x1b[1mdone\x1b[0m.";
/** C0 controls but tab and newline, DEL, C1, and the direction embeddings, overrides and isolates. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

let roots: TestRoots;
let workspace: string;
let sidecar: RunningSidecar;
let model: { server: ModelServerProcess; profileId: string };
const agents: RunningAcpAgent[] = [];

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-visible-");
  workspace = makeWorkspace(roots.base);
  sidecar = await startSidecar({ roots });
  model = await configureModel(sidecar.clients, "openai", {
    turns: [
      {
        text: ANSWER,
        // The first delta ends with the CR of the CR LF newline.
        textChunkChars: ANSWER.indexOf("\r") + 1,
        toolCalls: [{ name: "execute_command", input: { command: COMMAND, requires_approval: true } }],
      },
      { text: "Finishing.", toolCalls: [{ name: "attempt_completion", input: { result: RESULT } }] },
    ],
  });
  await sidecar.clients.settings.updateSettings({ scope: 1, patch: { defaultProfileId: model.profileId } });
});

afterAll(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
  await sidecar?.stop();
  await model?.server.stop();
  fs.rmSync(roots.base, { recursive: true, force: true });
});

/** Every text a client shows of an update: message chunks, titles, text content, plan entries. */
function shownTexts(update: acp.SessionUpdate): string[] {
  const texts: string[] = [];
  const u = update as {
    content?: unknown;
    title?: string | null;
    entries?: { content: string }[];
  };
  const blocks = Array.isArray(u.content) ? u.content : u.content ? [u.content] : [];
  for (const block of blocks as { type: string; text?: string; content?: { type: string; text?: string } }[]) {
    if (block.type === "text" && block.text !== undefined) texts.push(block.text);
    if (block.type === "content" && block.content?.type === "text") texts.push(block.content.text ?? "");
  }
  if (u.title) texts.push(u.title);
  for (const e of u.entries ?? []) texts.push(e.content);
  return texts;
}

describe("dline-core acp: control characters in model and command text", () => {
  it("reach the client made visible, live and replayed, markdown and newlines intact", async () => {
    const agent = await startAcpAgent(roots);
    agents.push(agent);
    agent.setPermissionPolicy(allowOnce);
    const { sessionId } = await agent.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    const result = await agent.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "show colours" }],
    });
    expect(result.stopReason).toBe("end_turn");
    const live = updatesOf(agent, sessionId);
    const liveTexts = live.flatMap(shownTexts);
    expect(liveTexts.filter((t) => CONTROL.test(t))).toEqual([]);
    expect(agentText(live)).toBe(`${SHOWN_ANSWER}\n\nFinishing.\n\nAll \\e[1mdone\\e[0m.`);
    expect(liveTexts.join("\n")).toContain("\\e[31mred\\e[0m\\rback");
    expect(agent.permissions[0]?.toolCall.title).toContain("execute_command printf");

    await agent.stop();
    const again = await startAcpAgent(roots);
    agents.push(again);
    await again.agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
    const replayed = updatesOf(again, sessionId);
    const replayedTexts = replayed.flatMap(shownTexts);
    expect(replayedTexts.filter((t) => CONTROL.test(t))).toEqual([]);
    expect(agentText(replayed)).toContain(SHOWN_ANSWER);
    expect(replayedTexts.join("\n")).toContain("\\e[31mred\\e[0m\\rback");
  });
});
