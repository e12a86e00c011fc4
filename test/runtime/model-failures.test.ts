/**
 * Failures the user should not pay for, through the real sidecar: an answer cut inside a tool
 * call, several failed calls in a row, overloads and dropped streams (retried, shown, the
 * partial answer dropped), an answer whose connection stays open, a slow first byte.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AskKind, TaskStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import type { ScriptTurn, WireFormat } from "../model-server/script.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "./harness.js";
import * as fs from "node:fs";
import * as path from "node:path";
import { nth, lastOf } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

async function setup(format: WireFormat, turns: ScriptTurn[], profile: Parameters<typeof configureModel>[3] = {}) {
  const sidecar = await startSidecar();
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(sidecar.clients, format, { turns }, profile);
  cleanups.push(() => server.stop());
  const workspace = makeWorkspace(sidecar.roots.base);
  await setAutoApproval(sidecar.clients, { readFiles: true, editFiles: true });
  return { sidecar, server, profileId, workspace, clients: sidecar.clients };
}

function lastStatus(events: TaskEvent[]) {
  const last = lastOf(events, "event");
  return last.event.case === "statusChanged" ? last.event.value : undefined;
}

describe("an answer cut at the output limit", () => {
  it("is explained to the model, the limit is raised, and the repeated call then goes through", async () => {
    const content = Array.from({ length: 300 }, (_, i) => `line ${i} of the generated file`).join("\n") + "\n";
    const { clients, server, profileId, workspace } = await setup(
      "anthropic",
      [
        { toolCalls: [{ name: "write_to_file", input: { path: "big.txt", content } }], honorMaxTokens: true },
        { toolCalls: [{ name: "write_to_file", input: { path: "big.txt", content } }], honorMaxTokens: true },
        { toolCalls: [{ name: "attempt_completion", input: { result: "written" } }] },
      ],
      { maxOutputTokens: 500n },
    );
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "write big.txt", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(lastStatus(events)?.status).toBe(TaskStatus.COMPLETED);
    expect(fs.readFileSync(path.join(workspace, "big.txt"), "utf8")).toBe(content);
    const requests = await server.requests();
    expect(recorded(requests, 0).body.max_tokens).toBe(500);
    expect(recorded(requests, 1).body.max_tokens).toBeGreaterThan(500);
    const told = JSON.stringify(recorded(requests, 1).body.messages);
    expect(told).toContain("output token limit (500 tokens)");
    expect(told).toContain("Write smaller pieces");
    expect(told).not.toContain("not valid JSON");
  });

  it("an answer that filled the context window (model_context_window_exceeded) is explained too, and the context is trimmed harder", async () => {
    const { clients, server, profileId, workspace } = await setup("anthropic", [
      {
        toolCalls: [{ name: "write_to_file", rawArguments: '{"path": "a.txt", "content": "cut by the wind' }],
        stopReason: "context_window_exceeded",
      },
      { toolCalls: [{ name: "attempt_completion", input: { result: "ok" } }] },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "write a.txt", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(lastStatus(events)?.status).toBe(TaskStatus.COMPLETED);
    const requests = await server.requests();
    expect(JSON.stringify(recorded(requests, 1).body.messages)).toContain("filled what was left of the context window");
    expect(recorded(requests, 1).body.max_tokens).toBe(recorded(requests, 0).body.max_tokens);
  });

  it("after three answers in a row whose tool calls cannot run, the person is asked; stopping ends the run", async () => {
    const broken = { toolCalls: [{ name: "write_to_file", rawArguments: '{"path": "a.txt", "content": "unfinis' }] };
    const { clients, server, profileId, workspace } = await setup("openai", [
      broken,
      broken,
      broken,
      { text: "never asked for" },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "write a.txt", profileId });
    const asks: { kind: AskKind; options: string[]; summary: string }[] = [];
    const events = await followUntilDone(clients, taskId, async (e) => {
      if (e.event.case !== "ask") return;
      asks.push({ kind: e.event.value.kind, options: e.event.value.options, summary: e.event.value.summary });
      await clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: true, text: "Stop the task" });
    });
    expect(asks).toHaveLength(1);
    expect(nth(asks, 0, "ask").kind).toBe(AskKind.FOLLOWUP);
    expect(nth(asks, 0, "ask").options).toEqual(["Keep trying", "Stop the task"]);
    expect(nth(asks, 0, "ask").summary).toContain("could not be run");
    expect(lastStatus(events)).toMatchObject({
      status: TaskStatus.COMPLETED,
      reason: "stopped after repeated tool calls that could not be run",
    });
    expect(await server.requests()).toHaveLength(3);
  });

  it("after three failed answers, advice from the person goes to the model and the task goes on", async () => {
    const broken = { toolCalls: [{ name: "read_file", rawArguments: '{"path": ' }] };
    const { clients, server, profileId, workspace } = await setup("openai", [
      broken,
      broken,
      broken,
      { toolCalls: [{ name: "attempt_completion", input: { result: "ok now" } }] },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "read", profileId });
    const events = await followUntilDone(clients, taskId, async (e) => {
      if (e.event.case === "ask")
        await clients.tasks.respond({
          taskId,
          askId: e.event.value.askId,
          approve: true,
          text: "ADVICE-9: call read_file with a path",
        });
    });
    expect(lastStatus(events)?.status).toBe(TaskStatus.COMPLETED);
    const requests = await server.requests();
    expect(requests).toHaveLength(4);
    expect(JSON.stringify(recorded(requests, 3).body)).toContain("ADVICE-9");
  });
});

describe.each<WireFormat>(["anthropic", "openai"])("a text answer that stops before its end (%s)", (format) => {
  const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");

  function finalizedTexts(events: TaskEvent[]) {
    return events.flatMap((e) =>
      e.event.case === "messageFinalized" && e.event.value.message?.kind === "text" ? [e.event.value.message] : [],
    );
  }

  it("cut at the output limit: marked cut off live and stored, and the model reads it back as cut", async () => {
    const { clients, server, profileId, workspace } = await setup(
      format,
      [{ text: words, honorMaxTokens: true }, { text: "word399, the end." }],
      { maxOutputTokens: 100n },
    );
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "count", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(lastStatus(events)).toMatchObject({
      status: TaskStatus.COMPLETED,
      reason: "the model's answer reached its output token limit",
    });
    const cut = lastOf(finalizedTexts(events), "the cut answer");
    expect(cut.text.length).toBeLessThan(words.length);
    // Before, the answer looked whole: no client marked where it stopped.
    expect(cut.cutOff).toBe(true);
    expect((await clients.tasks.getTask({ taskId })).messages.find((m) => m.id === cut.id)?.cutOff).toBe(true);

    await clients.tasks.sendMessage({ taskId, text: "go on" });
    const after = await followUntilDone(clients, taskId, undefined, lastOf(events, "event").seq);
    expect(lastOf(finalizedTexts(after), "the next answer").cutOff).toBe(false);
    const requests = await server.requests();
    const second = JSON.stringify(recorded(requests, 1).body.messages);
    expect(second).toContain("[This answer was cut here: it reached the output token limit.]");
  });

  it("ended by a broken stream: the text shown so far is marked cut off, and the task failed", async () => {
    const { clients, profileId, workspace } = await setup(format, [
      { text: words, textChunkChars: 20, interrupt: { afterFrames: 8, mode: "malformed" } },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "count", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(lastStatus(events)?.status).toBe(TaskStatus.FAILED);
    const cut = lastOf(finalizedTexts(events), "the broken answer");
    expect(words.startsWith(cut.text)).toBe(true);
    expect(cut.cutOff).toBe(true);
  });
});

describe.each<WireFormat>(["anthropic", "openai"])("overloads and broken streams (%s)", (format) => {
  it("an overload is retried with a visible status; a stream dropped mid-answer is retried and its partial answer dropped", async () => {
    const { clients, server, profileId, workspace } = await setup(format, [
      { status: format === "anthropic" ? 529 : 503, retryAfterMs: "300", errorMessage: "Overloaded" },
      {
        text: "PARTIAL-ANSWER-that-will-be-lost and more words after it",
        textChunkChars: 4,
        interrupt: { afterFrames: 6, mode: "drop" },
      },
      { text: "The whole answer.", toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
    ]);
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "answer me", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(lastStatus(events)?.status).toBe(TaskStatus.COMPLETED);
    expect(await server.requests()).toHaveLength(3);
    const retries = events.flatMap((e) => (e.event.case === "modelRetry" ? [e.event.value] : []));
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatchObject({
      attempt: 2,
      maxAttempts: 6,
      delayMs: 300n,
      message: "retrying in 1 s (attempt 2 of 6)",
      discardedMessageIds: [],
    });
    expect(nth(retries, 0, "retry").reason).toContain("Overloaded");
    expect(nth(retries, 1, "retry").message).toMatch(/^retrying in \d+ s \(attempt 3 of 6\)$/);
    // The partial answer was shown, then dropped: the retry names it, the task no longer has it.
    const partial = events.find(
      (e) => e.event.case === "messageAdded" && e.event.value.message?.text.startsWith("PART"),
    );
    expect(partial).toBeDefined();
    const partialId = partial!.event.case === "messageAdded" ? partial!.event.value.message!.id : "";
    expect(nth(retries, 1, "retry").discardedMessageIds).toEqual([partialId]);
    const task = await clients.tasks.getTask({ taskId });
    expect(task.messages.some((m) => m.text.includes("PARTIAL-ANSWER"))).toBe(false);
    expect(task.messages.some((m) => m.text === "The whole answer.")).toBe(true);
    expect(events.some((e) => e.event.case === "error")).toBe(false);
  });

  it("a finished answer whose connection stays open is taken at once, not after the first-byte timeout", async () => {
    const { clients, profileId, workspace } = await setup(
      format,
      [{ text: "Done here.", usage: { input: 10, output: 2 }, holdAfterFinish: true }],
      // Before, the answer was thrown away when this ran out.
      { firstByteTimeoutSeconds: 40 },
    );
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "quick", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(lastStatus(events)).toMatchObject({ status: TaskStatus.COMPLETED, reason: "the model ended its turn" });
    expect(events.some((e) => e.event.case === "modelRetry" || e.event.case === "error")).toBe(false);
  });
});

describe("the first byte", () => {
  it("the profile's first-byte timeout abandons a silent request (retried), and a slow start is shown while awaited", async () => {
    const { clients, profileId, workspace } = await setup(
      "openai",
      [
        { text: "too late", firstByteDelayMs: 4_000 },
        { text: "in time", toolCalls: [{ name: "attempt_completion", input: { result: "ok" } }] },
      ],
      { firstByteTimeoutSeconds: 2 },
    );
    // 2 s is too short for the first turn's start: it is abandoned and retried.
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "slow model", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(lastStatus(events)?.status).toBe(TaskStatus.COMPLETED);
    const retry = events.find((e) => e.event.case === "modelRetry");
    expect(retry?.event.case === "modelRetry" && retry.event.value.reason).toContain("sent nothing for 2 s");
  });

  it("a long first-byte wait is shown every few seconds", async () => {
    const { clients, profileId, workspace } = await setup(
      "anthropic",
      [{ text: "here", firstByteDelayMs: 5_600, toolCalls: [{ name: "attempt_completion", input: { result: "ok" } }] }],
      {
        firstByteTimeoutSeconds: 30,
      },
    );
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "slow model", profileId });
    const events = await followUntilDone(clients, taskId);
    expect(lastStatus(events)?.status).toBe(TaskStatus.COMPLETED);
    const waits = events.flatMap((e) => (e.event.case === "modelWaiting" ? [e.event.value] : []));
    expect(waits.length).toBeGreaterThanOrEqual(1);
    expect(waits[0]).toMatchObject({
      waitedMs: 5000n,
      timeoutMs: 30000n,
      message: "waiting for the model: 5 s (gives up after 30 s without an answer)",
    });
  });
});
