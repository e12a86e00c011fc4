/**
 * The default model profile removed: new tasks use what is left (the sidecar's environment
 * model here) instead of failing on a profile that does not exist, and the global default is
 * cleared with it. Before, `:Dline profile rm` of the default made every new task fail with
 * "Model profile ... does not exist", while the environment's model was still offered.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { spawnModelServer } from "../model-server/spawn.js";
import { makeTestRoots, startSidecar } from "../helpers/sidecar.js";
import { followUntilDone, makeWorkspace, TEST_KEY } from "./harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

describe("the default model profile removed", () => {
  it("clears the global default; new tasks use the environment's model; a default left in a workspace falls back too", async () => {
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      loop: true,
      turns: [{ toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] }],
    });
    cleanups.push(() => server.stop());
    const roots = makeTestRoots();
    const sidecar = await startSidecar({
      roots,
      env: { OPENAI_BASE_URL: server.url, OPENAI_MODEL: "scripted-model", OPENAI_API_KEY: TEST_KEY },
    });
    cleanups.push(() => sidecar.stop());
    const { settings, tasks } = sidecar.clients;
    const workspace = makeWorkspace(roots.base);
    const added = await settings.upsertProfile({
      profile: { id: "myprof", name: "mine", provider: "openai", baseUrl: "http://127.0.0.1:9/v1", model: "m" },
    });
    await settings.updateSettings({ scope: SettingsScope.GLOBAL, patch: { defaultProfileId: added.profile!.id } });
    await settings.updateSettings({
      scope: SettingsScope.WORKSPACE,
      workspaceRoot: workspace,
      patch: { defaultProfileId: "myprof" },
    });

    await settings.deleteProfile({ id: "myprof" });
    const global = await settings.getSettings({ scope: SettingsScope.GLOBAL });
    expect((global.settings as Record<string, unknown>).defaultProfileId).toBeUndefined();

    const { taskId } = await tasks.newTask({ workspaceRoot: workspace, text: "Say done", profileId: "" });
    await followUntilDone(sidecar.clients, taskId);
    expect((await tasks.getTask({ taskId })).task?.status).toBe(TaskStatus.COMPLETED);

    // Naming the removed profile outright is still an error that names it.
    const named = await tasks.newTask({ workspaceRoot: workspace, text: "x", profileId: "myprof" }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(named?.code).toBe(Code.NotFound);
    expect(named?.rawMessage).toContain('Model profile "myprof" does not exist');
  });
});
