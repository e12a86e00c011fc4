/**
 * A session whose task has no folder on this machine (imported from Cline without one, or made
 * on another machine) continues in the editor's cwd when an ACP client loads it, through the
 * official SDK's client side and the real binary; its tools run there and nowhere else.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { assertBinaryBuilt, makeTestRoots, startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace } from "../runtime/harness.js";
import { allowOnce, startAcpAgent, type RunningAcpAgent } from "./acp-harness.js";

const roots = makeTestRoots("dline-acp-no-folder-");
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  fs.rmSync(roots.base, { recursive: true, force: true });
});

describe("dline-core acp, a session without its folder", () => {
  it("session/load continues it in the editor's cwd", async () => {
    assertBinaryBuilt();
    const sidecar = await startSidecar({ roots });
    cleanups.push(() => sidecar.stop());
    const { server } = await configureModel(sidecar.clients, "openai", {
      turns: [
        { toolCalls: [{ name: "attempt_completion", input: { result: "greeted" } }] },
        { text: "Noting it.", toolCalls: [{ name: "write_to_file", input: { path: "NOTES.md", content: "notes\n" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "continued" } }] },
      ],
    });
    cleanups.push(() => server.stop());
    const gone = fs.mkdtempSync(path.join(roots.base, "gone-"));
    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: gone, text: "Say hi" });
    await followUntilDone(sidecar.clients, taskId);
    await sidecar.stop();
    fs.rmSync(gone, { recursive: true });
    const workspace = makeWorkspace(path.join(roots.base, "editor"));

    const a: RunningAcpAgent = await startAcpAgent(roots, { fs: false });
    cleanups.push(() => a.stop());
    a.setPermissionPolicy(allowOnce);
    await a.agent.request("session/load", { sessionId: taskId, cwd: workspace, mcpServers: [] });
    const res = await a.agent.request("session/prompt", {
      sessionId: taskId,
      prompt: [{ type: "text", text: "Take notes" }],
    });
    expect(res.stopReason).toBe("end_turn");
    expect(fs.readFileSync(path.join(workspace, "NOTES.md"), "utf8")).toBe("notes\n");
    expect(fs.existsSync(gone)).toBe(false);
    await a.stop();

    const again = await startSidecar({ roots });
    cleanups.push(() => again.stop());
    const task = await again.clients.tasks.getTask({ taskId });
    expect(task.task?.workspaceRoot).toBe(workspace);
    expect(task.task?.status).toBe(TaskStatus.COMPLETED);
  });
});
