/**
 * `_dline/checkpoint_status` while a workspace's first baseline runs: an ACP editor sees how far
 * it is (phase, files done of total), and the same status is never sent twice in a row. Found
 * with a 150,000-file workspace: 32 identical "initializing" notifications in 15 s, none saying
 * how far the scan was.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBinaryBuilt, makeTestRoots, startSidecar, type TestRoots } from "../helpers/sidecar.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, makeWorkspace } from "../runtime/harness.js";
import { allowOnce, startAcpAgent, type RunningAcpAgent } from "./acp-harness.js";

const FILES = 6000;

let roots: TestRoots;
let model: ModelServerProcess;
let workspace: string;
let agent: RunningAcpAgent | undefined;

beforeAll(async () => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-cp-status-");
  workspace = makeWorkspace(roots.base);
  for (let i = 0; i < FILES; i++) {
    const dir = path.join(workspace, "lib", `m${i % 60}`);
    if (i < 60) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.js`), `export const v = ${i};\n`);
  }
  const sidecar = await startSidecar({ roots });
  // A new file's edit waits for the baseline: the prompt lasts until the scan is done.
  ({ server: model } = await configureModel(sidecar.clients, "anthropic", {
    turns: [
      { toolCalls: [{ name: "write_to_file", input: { path: "notes/new.txt", content: "new\n" } }] },
      { text: "Done." },
    ],
  }));
  await sidecar.stop();
});

afterAll(async () => {
  await agent?.stop();
  await model?.stop();
  fs.rmSync(roots.base, { recursive: true, force: true });
});

interface StatusNote {
  sessionId: string;
  state: string;
  message: string;
  progress?: { phase: string; done: number; total: number };
}

describe("dline-core acp: checkpoint status while the first baseline runs", () => {
  it("tells how far the scan is, and never sends the same status twice in a row", async () => {
    agent = await startAcpAgent(roots);
    const a = agent;
    const { sessionId } = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    a.setPermissionPolicy(allowOnce);
    // Before the first prompt there is no task yet: the header's status is the folder's, and
    // there are no checkpoints (before: both answered "task does not exist").
    expect(await a.agent.request("_dline/checkpoints/status", { sessionId })).toMatchObject({ state: "ready" });
    expect(await a.agent.request("_dline/checkpoints/list", { sessionId })).toEqual({ checkpoints: [] });
    await expect(a.agent.request("_dline/checkpoints/view_changes", { sessionId })).rejects.toMatchObject({
      data: { dlineCode: "failed_precondition" },
    });
    const res = await a.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
    expect(res.stopReason).toBe("end_turn");
    const notes = a.extNotifications
      .filter((n) => n.method === "_dline/checkpoint_status")
      .map((n) => n.params as StatusNote);
    expect(notes.length).toBeGreaterThan(0);
    for (let i = 1; i < notes.length; i++) expect(notes[i]).not.toEqual(notes[i - 1]);
    const staging = notes.filter((n) => n.progress?.phase === "staging");
    expect(staging.length).toBeGreaterThan(0);
    for (const n of staging) {
      expect(n.state).toBe("initializing");
      expect(n.progress!.total).toBeGreaterThanOrEqual(FILES);
      expect(n.progress!.done).toBeLessThanOrEqual(n.progress!.total);
    }
    expect(notes.at(-1)).toMatchObject({ state: "ready" });
    expect(notes.at(-1)!.progress).toBeUndefined();
  });

  it("answers Compare with the documented fields of each file, nothing of the core's own bookkeeping", async () => {
    const a = agent!;
    const sessionId = a.extNotifications[0]!.params as { sessionId: string };
    const { checkpoints } = await a.agent.request<{ checkpoints: { id: string; kind: string }[] }>(
      "_dline/checkpoints/list",
      { sessionId: sessionId.sessionId },
    );
    const base = checkpoints.find((c) => c.kind === "baseline")!;
    const { files } = await a.agent.request<{ files: Record<string, unknown>[] }>("_dline/checkpoints/compare", {
      sessionId: sessionId.sessionId,
      checkpointId: base.id,
    });
    expect(files.map((f) => [f.path, f.status])).toEqual([["notes/new.txt", "added"]]);
    // Before: the blob id the core compares with ("afterBlob") went out too.
    for (const f of files)
      expect(Object.keys(f).sort()).toEqual(["after", "before", "binary", "path", "status", "tooLarge"]);
  });
});
