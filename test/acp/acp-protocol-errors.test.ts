/**
 * What `dline-core acp` answers to bad input, and what a client that goes away leaves behind:
 * malformed JSON, requests before initialize, unknown methods and sessions, bad params, no model
 * configured (auth required), and stdin closed mid-prompt (the process exits, the task is left
 * interrupted and resumes through TaskService).
 */
import * as fs from "node:fs";
import { spawn } from "node:child_process";
import * as readline from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import {
  assertBinaryBuilt,
  makeTestRoots,
  sidecarBinary,
  startSidecar,
  type RunningSidecar,
  type TestRoots,
} from "../helpers/sidecar.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { configureModel, followUntilDone, makeWorkspace } from "../runtime/harness.js";
import { startAcpAgent, waitFor } from "./acp-harness.js";

let roots: TestRoots;
let workspace: string;
let sidecar: RunningSidecar | undefined;
let model: ModelServerProcess | undefined;
const laterModels: ModelServerProcess[] = [];

beforeAll(() => {
  assertBinaryBuilt();
  roots = makeTestRoots("dline-acp-err-");
  workspace = makeWorkspace(roots.base);
});

afterAll(async () => {
  await sidecar?.stop();
  await model?.stop();
  await Promise.all(laterModels.map((m) => m.stop()));
  fs.rmSync(roots.base, { recursive: true, force: true });
});

/** The binary over raw newline-delimited JSON: send lines, read the answers in order. */
function rawAgent() {
  const child = spawn(sidecarBinary, ["acp"], { cwd: roots.base, env: roots.env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const lines: any[] = [];
  const waiters: (() => void)[] = [];
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(JSON.parse(line));
    waiters.splice(0).forEach((w) => w());
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    send: (text: string) => child.stdin.write(`${text}\n`),
    stderr: () => stderr,
    async next(): Promise<any> {
      while (lines.length === 0) await new Promise<void>((r) => waiters.push(r));
      return lines.shift();
    },
    close: async () => {
      child.stdin.end();
      return exited;
    },
  };
}

const request = (id: number, method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method, params });

describe("dline-core acp errors", () => {
  it("answers malformed JSON, early requests, unknown methods and bad params with JSON-RPC errors, and exits on stdin close", async () => {
    const a = rawAgent();
    a.send("{this is not json");
    expect(await a.next()).toMatchObject({ id: null, error: { code: -32700 } });
    a.send(request(1, "session/new", { cwd: workspace, mcpServers: [] }));
    expect(await a.next()).toMatchObject({ id: 1, error: { code: -32600 } });
    a.send(request(2, "initialize", { protocolVersion: 1, clientCapabilities: {} }));
    expect(await a.next()).toMatchObject({ id: 2, result: { protocolVersion: 1 } });
    a.send(request(3, "_dline/no_such_method", {}));
    expect(await a.next()).toMatchObject({ id: 3, error: { code: -32601 } });
    a.send(request(4, "session/prompt", { sessionId: "1-unknown", prompt: [{ type: "text", text: "hi" }] }));
    expect(await a.next()).toMatchObject({ id: 4, error: { code: -32002 } });
    a.send(request(5, "session/new", { cwd: "relative/path", mcpServers: [] }));
    expect(await a.next()).toMatchObject({ id: 5, error: { code: -32602 } });
    a.send(request(6, "session/new", { mcpServers: [] }));
    expect(await a.next()).toMatchObject({ id: 6, error: { code: -32602 } });
    // No model profile yet: ACP's "authentication required", naming what to configure.
    a.send(request(7, "session/new", { cwd: workspace, mcpServers: [] }));
    const auth = await a.next();
    expect(auth).toMatchObject({ id: 7, error: { code: -32000, data: { dlineCode: "failed_precondition" } } });
    expect(auth.error.message).toMatch(/No model is configured/);
    a.send(request(8, "_dline/checkpoints/list", { sessionId: "../escape" }));
    expect(await a.next()).toMatchObject({ id: 8, error: { code: -32602 } });
    a.send(request(9, "_dline/checkpoints/list", { sessionId: "1-unknown" }));
    expect(await a.next()).toMatchObject({ id: 9, error: { code: -32002 } });
    // Not JSON-RPC 2.0 (no "jsonrpc"): invalid, answered for its id.
    a.send(JSON.stringify({ id: 10, method: "session/list", params: {} }));
    expect(await a.next()).toMatchObject({ id: 10, error: { code: -32600 } });
    // A response to a request the agent never made: nothing to answer, a line in the log.
    a.send(JSON.stringify({ jsonrpc: "2.0", id: 999, result: {} }));
    a.send(request(11, "session/list", {}));
    expect(await a.next()).toMatchObject({ id: 11, result: { sessions: [] } });
    expect(await a.close()).toBe(0);
    // The log on stderr is JSON lines only, the protocol library's diagnostics among them.
    const logLines = a
      .stderr()
      .split("\n")
      .filter((l) => l.trim());
    const notJson = logLines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    expect(logLines.some((l) => l.includes("Got response to unknown request 999"))).toBe(true);
  });

  it("leaves a task interrupted when the client closes stdin mid-prompt; TaskService resumes it", async () => {
    sidecar = await startSidecar({ roots });
    ({ server: model } = await configureModel(sidecar.clients, "anthropic", {
      turns: [
        { text: "a long answer ".repeat(60), writeChunkBytes: 100, writeDelayMs: 25 },
        { text: "Back after the editor closed." },
        { text: "another long answer ".repeat(60), writeChunkBytes: 100, writeDelayMs: 25 },
      ],
    }));
    const a = await startAcpAgent(roots);
    const { sessionId } = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    const prompt = a.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Answer at length" }],
    });
    prompt.catch(() => {});
    await waitFor(() => a.updates.some((u) => u.update.sessionUpdate === "agent_message_chunk"));
    expect(await a.stop()).toBe(0);
    await expect(prompt).rejects.toThrow();

    const task = await waitFor(async () => {
      const t = await sidecar!.clients.tasks.getTask({ taskId: sessionId });
      return t.task?.status === TaskStatus.INTERRUPTED && t;
    });
    expect(task.ownerPid).toBe(0);
    await sidecar.clients.tasks.resume({ taskId: sessionId });
    await followUntilDone(sidecar.clients, sessionId, undefined, task.lastSeq);
    const final = await sidecar.clients.tasks.getTask({ taskId: sessionId });
    expect(final.task?.status).toBe(TaskStatus.COMPLETED);
    expect(final.messages.at(-1)?.text).toBe("Back after the editor closed.");
  });

  it("an invalid request earlier does not keep a closed client's prompt running: the task is interrupted", async () => {
    // About 7 s of streaming: an agent that went on for its 10 s drain finished it (completed).
    const slow = await configureModel(sidecar!.clients, "anthropic", {
      turns: [
        { text: "a long answer ".repeat(120), writeChunkBytes: 100, writeDelayMs: 25 },
        // The next test's prompt.
        { text: "another long answer ".repeat(60), writeChunkBytes: 100, writeDelayMs: 25 },
      ],
    });
    laterModels.push(slow.server);
    const a = rawAgent();
    a.send(request(1, "initialize", { protocolVersion: 1, clientCapabilities: {} }));
    expect(await a.next()).toMatchObject({ id: 1 });
    a.send(request(2, "session/new", { cwd: workspace, mcpServers: [] }));
    const { sessionId } = (await a.next()).result as { sessionId: string };
    a.send(JSON.stringify({ id: 3, method: "session/list", params: {} }));
    expect(await a.next()).toMatchObject({ id: 3, error: { code: -32600 } });
    a.send(request(4, "session/prompt", { sessionId, prompt: [{ type: "text", text: "Answer at length" }] }));
    for (let m = await a.next(); m.params?.update?.sessionUpdate !== "agent_message_chunk"; m = await a.next());
    expect(await a.close()).toBe(0);
    const task = await sidecar!.clients.tasks.getTask({ taskId: sessionId });
    expect(task.task?.status).toBe(TaskStatus.INTERRUPTED);
  });

  it("cancels the run when the client cancels the prompt request itself ($/cancel_request)", async () => {
    const a = await startAcpAgent(roots);
    const { sessionId } = await a.agent.request("session/new", { cwd: workspace, mcpServers: [] });
    const controller = new AbortController();
    const prompt = a.agent.request(
      "session/prompt",
      { sessionId, prompt: [{ type: "text", text: "Again at length" }] },
      { cancellationSignal: controller.signal },
    );
    prompt.catch(() => {});
    await waitFor(() => a.updates.some((u) => u.update.sessionUpdate === "agent_message_chunk"));
    controller.abort();
    const outcome = await prompt.then(
      (r) => r.stopReason,
      (err: { code?: number }) => err.code,
    );
    expect(["cancelled", -32800]).toContain(outcome);
    await waitFor(
      async () => (await sidecar!.clients.tasks.getTask({ taskId: sessionId })).task?.status === TaskStatus.CANCELLED,
    );
    expect(await a.stop()).toBe(0);
  });
});
