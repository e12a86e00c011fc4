/**
 * A model from the sidecar's environment, in `serve` (and the CLI through it): a session-only
 * profile, used when none is chosen, listed as coming from the environment, never written to
 * disk (its key included). Without any model, the error carries a machine-readable reason in
 * its details, for binary and JSON clients alike.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorDetailSchema, ErrorReason } from "../../core/src/gen/dline/v1/errors_pb.js";
import { ProfileSource } from "../../core/src/gen/dline/v1/settings_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { spawnModelServer } from "../model-server/spawn.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, TEST_KEY } from "./harness.js";
import { recorded } from "../model-server/script.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

/** Every file under the sidecar's three roots, with its content. */
function filesUnder(sidecar: RunningSidecar): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push({ file: p, text: fs.readFileSync(p).toString("latin1") });
    }
  };
  for (const root of [sidecar.roots.dlineDir, sidecar.roots.homeDir, sidecar.roots.docsDir]) walk(root);
  return out;
}

function reasonOf(err: unknown): ErrorReason | undefined {
  return ConnectError.from(err).findDetails(ErrorDetailSchema)[0]?.reason;
}

describe("a model from the environment", () => {
  it("serve lists it as coming from the environment, uses it when no profile is chosen, and never writes it (or its key) to disk", async () => {
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [{ text: "Hello from the environment's model." }],
    });
    cleanups.push(() => server.stop());
    const sidecar = await startSidecar({
      env: { OPENAI_BASE_URL: server.url, OPENAI_MODEL: "env-model", OPENAI_API_KEY: TEST_KEY },
    });
    cleanups.push(() => sidecar.stop());
    const { profiles } = await sidecar.clients.settings.listProfiles({});
    expect(profiles.map((p) => [p.id, p.provider, p.model, p.baseUrl, p.source, p.secretsSet])).toEqual([
      ["env-openai", "openai", "env-model", server.url, ProfileSource.ENVIRONMENT, ["api_key"]],
    ]);
    const workspace = makeWorkspace(sidecar.roots.base);
    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "hi" });
    const events = await followUntilDone(sidecar.clients, taskId);
    expect(events.at(-1)?.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
    const request = recorded(await server.requests(), 0);
    expect(request.body.model).toBe("env-model");
    expect(request.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    await sidecar.stop();
    const files = filesUnder(sidecar);
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((f) => f.text.includes(TEST_KEY)).map((f) => f.file)).toEqual([]);
    expect(
      files.filter((f) => f.file.includes("api_profiles") && f.text.includes("env-model")).map((f) => f.file),
    ).toEqual([]);
  });

  it("a stored default profile still wins over the environment's", async () => {
    const sidecar = await startSidecar({ env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_MODEL: "unused" } });
    cleanups.push(() => sidecar.stop());
    const { server, profileId } = await configureModel(sidecar.clients, "anthropic", {
      turns: [{ text: "from the stored profile" }],
    });
    cleanups.push(() => server.stop());
    await sidecar.clients.settings.updateSettings({ scope: 1, patch: { defaultProfileId: profileId } });
    const listed = (await sidecar.clients.settings.listProfiles({})).profiles.map((p) => [p.id, p.source]);
    expect(listed).toEqual([
      ["env-openai", ProfileSource.ENVIRONMENT],
      [profileId, ProfileSource.STORED],
    ]);
    const workspace = makeWorkspace(sidecar.roots.base);
    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "hi" });
    await followUntilDone(sidecar.clients, taskId);
    expect(await server.requests()).toHaveLength(1);
  });
});

describe("the no-model error says why, machine-readably", () => {
  it("no model at all: failed_precondition with ERROR_REASON_NO_MODEL, for binary and JSON clients", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const workspace = makeWorkspace(sidecar.roots.base);
    const err = await sidecar.clients.tasks
      .newTask({ workspaceRoot: workspace, text: "my long prompt" })
      .catch((e) => e);
    expect(ConnectError.from(err).code).toBe(Code.FailedPrecondition);
    expect(reasonOf(err)).toBe(ErrorReason.NO_MODEL);
    expect(ConnectError.from(err).rawMessage).toMatch(/OPENAI_BASE_URL/);
    // A JSON client (the Lua one) reads the reason from the detail's debug form.
    const { url, token } = sidecar.process.handshake;
    const res = await fetch(`${url}/dline.v1.TaskService/NewTask`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ workspaceRoot: workspace, text: "my long prompt" }),
    });
    const body = (await res.json()) as { code: string; details: { type: string; debug: { reason: string } }[] };
    expect(body.code).toBe("failed_precondition");
    expect(body.details).toEqual([
      expect.objectContaining({ type: "dline.v1.ErrorDetail", debug: { reason: "ERROR_REASON_NO_MODEL" } }),
    ]);
    // Nothing was written for the refused task.
    expect((await sidecar.clients.history.listTasks({})).tasks).toEqual([]);
  });

  it("several profiles and no default: ERROR_REASON_NO_DEFAULT_PROFILE; an unknown profile: ERROR_REASON_PROFILE_NOT_FOUND", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const a = await configureModel(sidecar.clients, "anthropic", { turns: [] });
    const b = await configureModel(sidecar.clients, "openai", { turns: [] });
    cleanups.push(
      () => a.server.stop(),
      () => b.server.stop(),
    );
    const workspace = makeWorkspace(sidecar.roots.base);
    const several = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "hi" }).catch((e) => e);
    expect(ConnectError.from(several).code).toBe(Code.FailedPrecondition);
    expect(reasonOf(several)).toBe(ErrorReason.NO_DEFAULT_PROFILE);
    const unknown = await sidecar.clients.tasks
      .newTask({ workspaceRoot: workspace, text: "hi", profileId: "gone" })
      .catch((e) => e);
    expect(ConnectError.from(unknown).code).toBe(Code.NotFound);
    expect(reasonOf(unknown)).toBe(ErrorReason.PROFILE_NOT_FOUND);
  });
});
