/**
 * Plan mode reaches subagents: a subagent reads its task's `mode` setting at every request and
 * tool call like the task's own loop, so a switch to plan mode while it runs refuses its
 * workspace changes from its next tool call on (and its next request carries the plan-mode
 * prompt). Real sidecar binary, scripted model server.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "./harness.js";
import { recorded } from "../model-server/script.js";
import { lastOf } from "../helpers/items.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

const systemText = (body: any): string =>
  JSON.stringify(body.messages?.[0]?.role === "system" ? body.messages[0] : (body.system ?? ""));

describe("plan mode and subagents", () => {
  it("a running subagent picks up a switch to plan mode at its next turn; the parent too", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const { clients } = sidecar;
    const { server, profileId } = await configureModel(clients, "openai", {
      turns: [
        {
          text: "Delegating.",
          toolCalls: [{ name: "new_subagent", input: { prompt: "SUBTASK-7: record and write" } }],
        },
        // the subagent, in act mode: a command that asks (the test switches the task to plan mode meanwhile)
        { toolCalls: [{ name: "execute_command", input: { command: "echo one > one.txt", requires_approval: true } }] },
        // the subagent, now in plan mode: the write is refused, the read runs
        {
          toolCalls: [
            { name: "write_to_file", input: { path: "sub.txt", content: "sub\n" } },
            { name: "read_file", input: { path: "README.md" } },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "SUB-RESULT: planned only" } }] },
        // the parent, in plan mode too
        { toolCalls: [{ name: "write_to_file", input: { path: "parent.txt", content: "parent\n" } }] },
        { text: "Here is the plan." },
      ],
    });
    cleanups.push(() => server.stop());
    const workspace = makeWorkspace(sidecar.roots.base);
    // Reads run unasked; the command asks (its answer is when the test switches modes).
    await setAutoApproval(clients, { readFiles: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "delegate", profileId });
    let asks = 0;
    const events = await followUntilDone(clients, taskId, async (e) => {
      if (e.event.case !== "ask") return;
      asks++;
      await clients.settings.updateSettings({ scope: SettingsScope.TASK, taskId, patch: { mode: "plan" } });
      await clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: true, text: "" });
    });
    const last = lastOf(events, "event");
    expect(last.event.case === "statusChanged" && last.event.value.status).toBe(TaskStatus.COMPLETED);
    expect(asks).toBe(1);
    // The command approved in act mode ran; the writes asked for in plan mode did not happen.
    expect(fs.readFileSync(path.join(workspace, "one.txt"), "utf8")).toBe("one\n");
    expect(fs.existsSync(path.join(workspace, "sub.txt"))).toBe(false);
    expect(fs.existsSync(path.join(workspace, "parent.txt"))).toBe(false);

    const requests = await server.requests();
    expect(requests).toHaveLength(6);
    const plan = requests.map((r) => systemText(r.body).includes("# Plan mode"));
    // Act for the parent's first request and the subagent's first; plan from the switch on.
    expect(plan).toEqual([false, false, true, true, true, true]);
    // The subagent's write came back refused, its read ran.
    const subAfterRefusal = JSON.stringify(recorded(requests, 3).body.messages.slice(-2));
    expect(subAfterRefusal).toContain("write_to_file was not run: the task is in plan mode");
    expect(subAfterRefusal).toContain("# demo");
    expect(JSON.stringify(recorded(requests, 4).body)).toContain("SUB-RESULT: planned only");
    expect(JSON.stringify(recorded(requests, 5).body.messages.at(-1))).toContain("plan mode");
  });

  it("in plan mode a subagent may start, and it explores in plan mode as well", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const { clients } = sidecar;
    const { server, profileId } = await configureModel(clients, "openai", {
      turns: [
        { toolCalls: [{ name: "new_subagent", input: { prompt: "SURVEY-3: look around" } }] },
        // the subagent: a write (refused: plan mode) and a read (runs)
        {
          toolCalls: [
            { name: "write_to_file", input: { path: "sub.txt", content: "sub\n" } },
            { name: "read_file", input: { path: "README.md" } },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "SURVEY-RESULT: one readme" } }] },
        { text: "The plan: add a section to the readme." },
      ],
    });
    cleanups.push(() => server.stop());
    const workspace = makeWorkspace(sidecar.roots.base);
    await setAutoApproval(clients, { readFiles: true });
    await clients.settings.updateSettings({
      scope: SettingsScope.WORKSPACE,
      workspaceRoot: workspace,
      patch: { mode: "plan" },
    });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "plan a change", profileId });
    const events = await followUntilDone(clients, taskId, async () => {});
    const last = lastOf(events, "event");
    expect(last.event.case === "statusChanged" && last.event.value.status).toBe(TaskStatus.COMPLETED);
    expect(fs.existsSync(path.join(workspace, "sub.txt"))).toBe(false);
    const requests = await server.requests();
    expect(requests).toHaveLength(4);
    // Every request, the subagent's included, is in plan mode.
    expect(requests.map((r) => systemText(r.body).includes("# Plan mode"))).toEqual([true, true, true, true]);
    const subAfterRefusal = JSON.stringify(recorded(requests, 2).body.messages.slice(-2));
    expect(subAfterRefusal).toContain("write_to_file was not run: the task is in plan mode");
    expect(subAfterRefusal).toContain("# demo");
    // The parent got the subagent's result (not a refusal of new_subagent).
    expect(JSON.stringify(recorded(requests, 3).body)).toContain("SURVEY-RESULT: one readme");
  });
});
