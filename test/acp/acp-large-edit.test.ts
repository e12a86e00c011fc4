/**
 * An edit of a file too large to send whole, through `dline-core acp` and the official SDK's
 * client side: the permission request and the finished call show the change as a fenced unified
 * diff (ACP's diff content carries whole texts), and what is approved is what is written.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as acp from "@agentclientprotocol/sdk";
import { assertBinaryBuilt, makeTestRoots, startSidecar, type TestRoots } from "../helpers/sidecar.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, makeWorkspace } from "../runtime/harness.js";
import { startAcpAgent, updatesOf, type RunningAcpAgent } from "./acp-harness.js";
import { nth } from "../helpers/items.js";

const LARGE = Array.from({ length: 12_000 }, (_, i) => `export const line${i} = ${i};\n`).join("");

let roots: TestRoots;
let model: ModelServerProcess;
let workspace: string;
let agent: RunningAcpAgent | undefined;

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-large-");
  workspace = makeWorkspace(roots.base, { "src/large.js": LARGE });
  const sidecar = await startSidecar({ roots });
  ({ server: model } = await configureModel(sidecar.clients, "anthropic", {
    turns: [
      {
        toolCalls: [
          {
            name: "replace_in_file",
            input: {
              path: "src/large.js",
              diff: "------- SEARCH\nexport const line2000 = 2000;\n=======\nexport const line2000 = 2001;\n+++++++ REPLACE",
            },
          },
        ],
      },
      { text: "Fixed." },
    ],
  }));
  await sidecar.stop();
});

afterAll(async () => {
  await agent?.stop();
  await model?.stop();
  fs.rmSync(roots.base, { recursive: true, force: true });
});

describe("dline-core acp, an edit of a file too large to send whole", () => {
  it("asks with the change as a fenced unified diff, and writes exactly that", async () => {
    agent = await startAcpAgent(roots);
    await agent.agent.request("authenticate", { methodId: "dline-model-profile" });
    const { sessionId } = await agent.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    const res = await agent.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Fix line 2000" }],
    });
    expect(res.stopReason).toBe("end_turn");
    const asked = nth(agent.permissions, 0, "permission request").toolCall.content ?? [];
    expect(asked).toHaveLength(1);
    const text = (asked[0] as { content: { text: string } }).content.text;
    expect(text.split("\n").slice(0, 4)).toEqual([
      "```diff",
      "--- a/src/large.js",
      "+++ b/src/large.js",
      "@@ -1998,7 +1998,7 @@",
    ]);
    expect(text).toContain("\n-export const line2000 = 2000;\n+export const line2000 = 2001;\n");
    // The finished call shows the same.
    const finished = updatesOf(agent, sessionId).filter(
      (u): u is acp.ToolCallUpdate & { sessionUpdate: "tool_call_update" } =>
        u.sessionUpdate === "tool_call_update" && u.status === "completed",
    );
    expect(finished.at(-1)?.content).toEqual(asked);
    expect(fs.readFileSync(path.join(workspace, "src/large.js"), "utf8")).toBe(
      LARGE.replace("export const line2000 = 2000;", "export const line2000 = 2001;"),
    );
  });
});
