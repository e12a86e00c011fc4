/**
 * Reasoning models and cost, through the real sidecar: reasoning streamed as its own event
 * kind and kept where the APIs want it back (Anthropic's signed thinking with a per-profile
 * budget, DeepSeek's reasoning_content), and costs from the price table, the provider, or
 * "unknown" rather than $0.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TaskStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import type { ModelServerScript, WireFormat } from "../model-server/script.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "./harness.js";
import { nth, lastOf } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

async function run(
  format: WireFormat,
  script: ModelServerScript,
  profile: Parameters<typeof configureModel>[3],
  text = "read app.txt",
) {
  const sidecar = await startSidecar();
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(sidecar.clients, format, script, profile);
  cleanups.push(() => server.stop());
  const workspace = makeWorkspace(sidecar.roots.base);
  await setAutoApproval(sidecar.clients, { readFiles: true });
  const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text, profileId });
  const events = await followUntilDone(sidecar.clients, taskId);
  return { sidecar, taskId, events, requests: await server.requests() };
}

function lastStatus(events: TaskEvent[]) {
  const last = lastOf(events, "event");
  return last.event.case === "statusChanged" ? last.event.value.status : undefined;
}

const readThenFinish = (reasoning: [string, string]) => [
  { reasoning: reasoning[0], text: "Reading.", toolCalls: [{ name: "read_file", input: { path: "src/app.txt" } }] },
  { reasoning: reasoning[1], toolCalls: [{ name: "attempt_completion", input: { result: "it says hello" } }] },
];

describe("reasoning models", () => {
  it("Anthropic extended thinking per profile: thinking streamed as reasoning events, signed blocks kept across tool turns", async () => {
    const { events, requests, sidecar, taskId } = await run(
      "anthropic",
      { turns: readThenFinish(["THINK-1: the file first.", "THINK-2: done."]) },
      { thinkingBudgetTokens: 2048n },
    );
    expect(lastStatus(events)).toBe(TaskStatus.COMPLETED);
    expect(recorded(requests, 0).body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    // The tool-use loop's request carried the signed thinking block: the server checked it.
    expect(recorded(requests, 1).status).toBe(200);
    expect(recorded(requests, 1).body.messages[1].content[0]).toMatchObject({
      type: "thinking",
      thinking: "THINK-1: the file first.",
    });
    const reasoningMessages = events.flatMap((e) =>
      e.event.case === "messageAdded" && e.event.value.message?.kind === "reasoning" ? [e.event.value.message] : [],
    );
    expect(reasoningMessages).toHaveLength(2);
    const deltas = events.flatMap((e) => (e.event.case === "reasoningDelta" ? [e.event.value] : []));
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((d) => reasoningMessages.some((m) => m.id === d.messageId))).toBe(true);
    // Reasoning never leaks into the answer's text.
    expect(events.some((e) => e.event.case === "messageDelta" && e.event.value.text.includes("THINK"))).toBe(false);
    const stored = (await sidecar.clients.tasks.getTask({ taskId })).messages
      .filter((m) => m.kind === "reasoning")
      .map((m) => m.text);
    expect(stored).toEqual(["THINK-1: the file first.", "THINK-2: done."]);
  });

  it("DeepSeek's thinking mode: reasoning_content goes back with the assistant message after tool calls", async () => {
    const { events, requests } = await run(
      "openai",
      { deepseekThinking: true, turns: readThenFinish(["R1: read it.", "R2: done."]) },
      { model: "deepseek-reasoner", reasoningEffort: "high" },
    );
    expect(lastStatus(events)).toBe(TaskStatus.COMPLETED);
    expect(recorded(requests, 0).body.reasoning_effort).toBe("high");
    expect(recorded(requests, 1).status).toBe(200);
    expect(recorded(requests, 1).body.messages[2]).toMatchObject({
      role: "assistant",
      reasoning_content: "R1: read it.",
    });
    expect(events.some((e) => e.event.case === "reasoningDelta")).toBe(true);
  });
});

describe("cost the user can trust", () => {
  const usage = { input: 1_000_000, output: 100_000, cacheRead: 2_000_000, cacheWrite: 500_000 };
  const answer = [{ text: "Done.", usage, toolCalls: [{ name: "attempt_completion", input: { result: "ok" } }] }];

  it("a well-known model is priced from the table, cache reads and writes included", async () => {
    const { events, sidecar, taskId } = await run(
      "anthropic",
      { turns: answer },
      { model: "claude-sonnet-4-5-20250929", inputPricePerMtok: 0, outputPricePerMtok: 0 },
    );
    const cost = 1 * 3 + 0.1 * 15 + 2 * 0.3 + 0.5 * 3.75;
    const event = events.find((e) => e.event.case === "usage");
    expect(event?.event.case === "usage" && event.event.value).toMatchObject({
      cost: expect.closeTo(cost, 9),
      costUnknown: false,
    });
    const task = await sidecar.clients.tasks.getTask({ taskId });
    expect(task.task?.cost).toBeCloseTo(cost, 9);
    expect(task.task?.costUnknown).toBe(false);
    const listed = await sidecar.clients.settings.listProfiles({});
    expect(listed.profiles.find((p) => p.id === "scripted-anthropic")?.priceSource).toBe(
      "price table (claude-sonnet-4-5)",
    );
  });

  it("an unknown model with no prices costs 'unknown', not $0; a zero-cost profile costs $0", async () => {
    const unknown = await run(
      "openai",
      { turns: answer },
      { model: "my-local-llama", inputPricePerMtok: 0, outputPricePerMtok: 0 },
    );
    const event = unknown.events.find((e) => e.event.case === "usage");
    expect(event?.event.case === "usage" && event.event.value).toMatchObject({ cost: 0, costUnknown: true });
    const task = await unknown.sidecar.clients.tasks.getTask({ taskId: unknown.taskId });
    expect(task.task?.costUnknown).toBe(true);
    const history = await unknown.sidecar.clients.history.listTasks({});
    expect(nth(history.tasks, 0, "task").costUnknown).toBe(true);

    const free = await run(
      "openai",
      { turns: answer },
      { model: "my-local-llama", inputPricePerMtok: 0, outputPricePerMtok: 0, zeroCost: true },
    );
    const freeEvent = free.events.find((e) => e.event.case === "usage");
    expect(freeEvent?.event.case === "usage" && freeEvent.event.value).toMatchObject({ cost: 0, costUnknown: false });
  });

  it("the provider's reported cost (OpenRouter's usage.cost) is what the task costs", async () => {
    const reported = [{ ...answer[0], usage: { input: 1000, output: 10, cost: 0.0421 } }];
    const { events } = await run("openai", { turns: reported }, { model: "anthropic/claude-sonnet-4.5" });
    const event = events.find((e) => e.event.case === "usage");
    expect(event?.event.case === "usage" && event.event.value.cost).toBeCloseTo(0.0421, 10);
  });
});
