/**
 * The task's command-log budget (setting commandLogBudgetBytes) also bounds a single command's
 * log, through the real sidecar: a command printing far more than the budget leaves a log of at
 * most the budget, and the task completes.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "./harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

describe("command logs", () => {
  it("one command's log is cut at the task's command-log budget", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const budget = 1_000_000;
    const { server, profileId } = await configureModel(sidecar.clients, "openai", {
      turns: [
        {
          toolCalls: [
            {
              name: "execute_command",
              input: { command: "head -c 5000000 /dev/zero | tr '\\0' 'a' | fold -w 100", requires_approval: false },
            },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    cleanups.push(() => server.stop());
    await setAutoApproval(sidecar.clients, { executeSafeCommands: true, executeAllCommands: true });
    await sidecar.clients.settings.updateSettings({
      scope: SettingsScope.GLOBAL,
      patch: { commandLogBudgetBytes: budget },
    });
    const workspace = makeWorkspace(sidecar.roots.base);

    const { taskId } = await sidecar.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "print a lot",
      profileId,
    });
    const events = await followUntilDone(sidecar.clients, taskId);

    const statuses = events.flatMap((e) => (e.event.case === "statusChanged" ? [e.event.value.status] : []));
    expect(statuses.at(-1)).toBe(TaskStatus.COMPLETED);
    const logs = path.join(sidecar.roots.docsDir, "tasks", taskId, "tmp", "command-logs");
    const sizes = fs.readdirSync(logs).map((f) => fs.statSync(path.join(logs, f)).size);
    expect(sizes).toHaveLength(1);
    // The log is kept (the head of the output), at most the budget.
    expect(sizes[0]).toBeGreaterThan(0);
    expect(sizes[0]).toBeLessThanOrEqual(budget);
  });
});
