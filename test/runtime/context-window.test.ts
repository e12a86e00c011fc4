/**
 * A big file never kills a task: requests are sized before they are sent (tool results being
 * added included) and trimmed without a model call, a summary is asked only of what fits, an
 * overflow answer leads to a smaller request, and a task that overflowed resumes. The scripted
 * model server enforces a real context window with its own token count.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import type { RecordedRequest, ScriptTurn, WireFormat } from "../model-server/script.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "./harness.js";
import { nth, lastOf } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

/** A source file of about `bytes` bytes whose lines differ (as real code does). */
export function sourceFile(bytes: number, seed: string): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 1; size < bytes; i++) {
    const line = `export function ${seed}_${i}(input: number, factor = ${i % 97}): number { return input * factor + ${(i * 7919) % 1000}; } // ${seed} line ${i}`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

/** A package-lock.json of about `bytes` bytes. */
function lockfile(bytes: number): string {
  const packages: Record<string, unknown> = {};
  for (let i = 0, size = 0; size < bytes; i++) {
    size += 260;
    packages[`node_modules/package-${i}`] = {
      version: `${i % 13}.${i % 7}.${i % 5}`,
      resolved: `https://registry.npmjs.org/package-${i}/-/package-${i}-${i % 13}.${i % 7}.${i % 5}.tgz`,
      integrity: `sha512-${Buffer.from(`integrity of package ${i}`).toString("base64")}`,
      dev: i % 3 === 0,
    };
  }
  return JSON.stringify({ name: "app", version: "1.0.0", lockfileVersion: 3, requires: true, packages }, null, 2);
}

const SUMMARY_RESPONDER = {
  systemIncludes: "faithful, compact summaries",
  turn: { text: "SUMMARY-c0ffee: the person asked to read the big files; they were read." },
};

async function runTask(
  format: WireFormat,
  window: number,
  profileWindow: number,
  turns: ScriptTurn[],
  files: Record<string, string>,
  text = "TASK-TEXT-71: read the files",
) {
  const sidecar = await startSidecar();
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(
    sidecar.clients,
    format,
    { contextWindow: window, responders: [SUMMARY_RESPONDER], turns },
    { contextWindow: BigInt(profileWindow) },
  );
  cleanups.push(() => server.stop());
  const workspace = makeWorkspace(sidecar.roots.base, files);
  await setAutoApproval(sidecar.clients, { readFiles: true, editFiles: true });
  const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text, profileId });
  const events = await followUntilDone(sidecar.clients, taskId);
  return { sidecar, server, taskId, events, workspace, requests: await server.requests() };
}

function lastStatus(events: Awaited<ReturnType<typeof followUntilDone>>) {
  const last = lastOf(events, "event");
  return last.event.case === "statusChanged" ? last.event.value.status : undefined;
}

const overflowing = (requests: RecordedRequest[]) => requests.filter((r) => r.status === 400);

describe("a big file never kills a task", () => {
  it("three 300 KB files read one after another under a 32k-token window complete, with at most one request over the window", async () => {
    const files = {
      "a.ts": sourceFile(300_000, "alpha"),
      "b.ts": sourceFile(300_000, "beta"),
      "c.ts": sourceFile(300_000, "gamma"),
    };
    const { events, requests } = await runTask(
      "anthropic",
      32_000,
      32_000,
      [
        { toolCalls: [{ name: "read_file", input: { path: "a.ts" } }] },
        { toolCalls: [{ name: "read_file", input: { path: "b.ts" } }] },
        { toolCalls: [{ name: "read_file", input: { path: "c.ts" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "read all three" } }] },
      ],
      files,
    );
    expect(lastStatus(events)).toBe(TaskStatus.COMPLETED);
    expect(overflowing(requests).length).toBeLessThanOrEqual(1);
    const last = lastOf(requests, "recorded request");
    const body = JSON.stringify(last.body);
    // The task and the latest read stay; each read said how to read on.
    expect(body).toContain("TASK-TEXT-71");
    expect(body).toContain("gamma_1(");
    expect(body).toMatch(/Showing lines 1-\d+ of \d+ of c\.ts/);
    expect(body).toContain("start_line");
    // Every request the model answered fitted the window.
    for (const r of requests.filter((r) => r.status === 200))
      expect(r.promptTokens + r.body.max_tokens).toBeLessThanOrEqual(32_000);
  });

  it("a 1 MB lockfile read under a 128k window completes", async () => {
    const { events, requests } = await runTask(
      "openai",
      128_000,
      128_000,
      [
        { toolCalls: [{ name: "read_file", input: { path: "package-lock.json" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "the lockfile has many packages" } }] },
      ],
      { "package-lock.json": lockfile(1_000_000) },
    );
    expect(lastStatus(events)).toBe(TaskStatus.COMPLETED);
    expect(overflowing(requests)).toHaveLength(0);
    expect(JSON.stringify(recorded(requests, 1).body)).toMatch(/Showing lines 1-\d+ of \d+ of package-lock\.json/);
  });

  it("many reads: old turns are summarized by a valid Anthropic request, the task and the latest turns stay", async () => {
    const files: Record<string, string> = {};
    const turns: ScriptTurn[] = [];
    for (const name of ["one", "two", "three", "four", "five", "six"]) {
      files[`${name}.ts`] = sourceFile(60_000, name);
      turns.push({ toolCalls: [{ name: "read_file", input: { path: `${name}.ts` } }] });
    }
    turns.push({ toolCalls: [{ name: "attempt_completion", input: { result: "done reading" } }] });
    const { events, requests, sidecar, taskId } = await runTask("anthropic", 24_000, 24_000, turns, files);
    expect(lastStatus(events)).toBe(TaskStatus.COMPLETED);
    expect(overflowing(requests).length).toBeLessThanOrEqual(1);
    const summaries = requests.filter((r) => JSON.stringify(r.body.system).includes("faithful, compact summaries"));
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    // The summary request is valid for the Messages API: no tool blocks (hence no tools needed), and it fitted.
    for (const s of summaries) {
      expect(s.status).toBe(200);
      expect(JSON.stringify(s.body.messages)).not.toMatch(/"type":"tool_(use|result)"/);
    }
    const final = JSON.stringify(lastOf(requests, "recorded request").body);
    expect(final).toContain("TASK-TEXT-71");
    expect(final).toContain("SUMMARY-c0ffee");
    expect(final).toContain("six_1(");
    // The record of it: context.json, its history, the chat's marker and a compaction checkpoint.
    const taskDir = path.join(sidecar.roots.docsDir, "tasks", taskId);
    expect(JSON.parse(fs.readFileSync(path.join(taskDir, "context.json"), "utf8")).summary).toContain("SUMMARY-c0ffee");
    expect(
      fs.readFileSync(path.join(taskDir, "context_history.jsonl"), "utf8").trim().split("\n").length,
    ).toBeGreaterThanOrEqual(1);
    expect(
      events.some((e) => e.event.case === "checkpointSaved" && e.event.value.kind === "CHECKPOINT_KIND_COMPACTION"),
    ).toBe(true);
    const task = await sidecar.clients.tasks.getTask({ taskId });
    expect(task.messages.some((m) => m.kind === "compaction")).toBe(true);
  });

  it("a file read again replaces its earlier read, with no model call", async () => {
    const files = { "one.ts": sourceFile(60_000, "one"), "two.ts": sourceFile(60_000, "two") };
    const { events, requests } = await runTask(
      "openai",
      20_000,
      20_000,
      [
        { toolCalls: [{ name: "read_file", input: { path: "one.ts" } }] },
        { toolCalls: [{ name: "read_file", input: { path: "two.ts" } }] },
        { toolCalls: [{ name: "read_file", input: { path: "one.ts" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
      files,
    );
    expect(lastStatus(events)).toBe(TaskStatus.COMPLETED);
    expect(requests).toHaveLength(4);
    const final = JSON.stringify(recorded(requests, 3).body);
    expect(final.split("the same file was read again later").length - 1).toBe(1);
    expect(final).toContain("two_1(");
    expect(requests.some((r) => JSON.stringify(r.body).includes("faithful, compact summaries"))).toBe(false);
  });

  it("a context_length_exceeded answer leads to a smaller request (the profile's window was too large)", async () => {
    const files = { "a.ts": sourceFile(150_000, "alpha"), "b.ts": sourceFile(150_000, "beta") };
    const { events, requests } = await runTask(
      "openai",
      32_000,
      200_000,
      [
        { toolCalls: [{ name: "read_file", input: { path: "a.ts" } }] },
        { toolCalls: [{ name: "read_file", input: { path: "b.ts" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "fine" } }] },
      ],
      files,
    );
    expect(lastStatus(events)).toBe(TaskStatus.COMPLETED);
    const refused = overflowing(requests);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(nth(refused, 0, "refused request").body)).toBeTruthy();
    // After the server said its window, every later request fitted it.
    const after = requests.slice(requests.indexOf(lastOf(refused, "refused request")) + 1);
    expect(after.length).toBeGreaterThan(0);
    for (const r of after) expect(r.status).toBe(200);
    expect(events.some((e) => e.event.case === "error")).toBe(false);
  });

  it("resume of a task that overflowed works", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    // First run: a server that answers "does not fit" to everything after the reads (as a
    // smaller window would), until the task gives up.
    const tooLong = { status: 400, errorMessage: "prompt is too long: 90000 tokens > 32000 maximum" };
    const first = await configureModel(
      sidecar.clients,
      "anthropic",
      {
        turns: [
          { toolCalls: [{ name: "read_file", input: { path: "a.ts" } }] },
          { toolCalls: [{ name: "read_file", input: { path: "b.ts" } }] },
          tooLong,
          tooLong,
          tooLong,
          tooLong,
          tooLong,
          tooLong,
        ],
      },
      { contextWindow: 200_000n },
    );
    cleanups.push(() => first.server.stop());
    const workspace = makeWorkspace(sidecar.roots.base, {
      "a.ts": sourceFile(200_000, "alpha"),
      "b.ts": sourceFile(200_000, "beta"),
    });
    await setAutoApproval(sidecar.clients, { readFiles: true });
    const { taskId } = await sidecar.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "TASK-TEXT-71: read both",
      profileId: first.profileId,
    });
    const failed = await followUntilDone(sidecar.clients, taskId);
    expect(lastStatus(failed)).toBe(TaskStatus.FAILED);
    const error = failed.find((e) => e.event.case === "error");
    expect(error?.event.case === "error" && error.event.value.code).toBe("context_overflow");

    // The same profile on a model with a real 32k window: resume fits the conversation and completes.
    const second = await configureModel(
      sidecar.clients,
      "anthropic",
      {
        contextWindow: 32_000,
        responders: [SUMMARY_RESPONDER],
        turns: [{ toolCalls: [{ name: "attempt_completion", input: { result: "resumed and done" } }] }],
      },
      { contextWindow: 32_000n },
    );
    cleanups.push(() => second.server.stop());
    const before = await sidecar.clients.tasks.getTask({ taskId });
    await sidecar.clients.tasks.resume({ taskId });
    const resumed = await followUntilDone(sidecar.clients, taskId, undefined, before.lastSeq);
    expect(lastStatus(resumed)).toBe(TaskStatus.COMPLETED);
    const requests = await second.server.requests();
    expect(overflowing(requests)).toHaveLength(0);
    expect(JSON.stringify(lastOf(requests, "recorded request").body)).toContain("TASK-TEXT-71");
  });
});
