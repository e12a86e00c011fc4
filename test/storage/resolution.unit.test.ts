import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { Lifecycle } from "../../core/src/lifecycle.js";
import { createSettingsDomain } from "../../core/src/storage/settings-domain.js";
import { recordingLogger, tempLayout } from "./helpers.js";

async function domain(env: NodeJS.ProcessEnv = {}) {
  const { base, layout } = tempLayout();
  const { logger } = recordingLogger();
  const lifecycle = new Lifecycle(logger, () => {});
  return { base, layout, lifecycle, ...(await createSettingsDomain(layout, logger, env, lifecycle)) };
}

describe("ResolveSetting", () => {
  it("takes the first hit of remote, session, task, workspace, global, legacy, default", async () => {
    const { base, layout } = tempLayout();
    const remoteFile = path.join(base, "remote.json");
    const { logger } = recordingLogger();
    const d = await createSettingsDomain(
      layout,
      logger,
      { DLINE_REMOTE_CONFIG: remoteFile },
      new Lifecycle(logger, () => {}),
    );
    const ctx = { workspaceRoot: "/work/a", taskId: "task-1" };
    const resolve = () => d.resolver.resolve("commandTimeoutSeconds", ctx);

    expect(await resolve()).toEqual({ value: 600, source: "default" });
    d.stores.globalState.set("commandTimeoutSeconds", 11);
    expect(await resolve()).toEqual({ value: 11, source: "legacy" });
    await d.stores.globalSettings.applyPatch({ commandTimeoutSeconds: 12 });
    expect(await resolve()).toEqual({ value: 12, source: "global" });
    await d.stores.workspaceSettings("/work/a").applyPatch({ commandTimeoutSeconds: 13 });
    expect(await resolve()).toEqual({ value: 13, source: "workspace" });
    await d.stores.taskSettings("task-1").applyPatch({ commandTimeoutSeconds: 14 });
    expect(await resolve()).toEqual({ value: 14, source: "task" });
    d.session.set("commandTimeoutSeconds", 15);
    expect(await resolve()).toEqual({ value: 15, source: "session" });
    fs.writeFileSync(remoteFile, JSON.stringify({ commandTimeoutSeconds: 16 }));
    expect(await resolve()).toEqual({ value: 16, source: "remote" });
    // Nothing above was written to the task's neighbours.
    expect(await d.resolver.resolve("commandTimeoutSeconds", { workspaceRoot: "/work/b", taskId: "task-2" })).toEqual({
      value: 16,
      source: "remote",
    });
    fs.rmSync(remoteFile);
    d.session.clear("commandTimeoutSeconds");
    expect(await d.resolver.resolve("commandTimeoutSeconds", { workspaceRoot: "/work/b", taskId: "task-2" })).toEqual({
      value: 12,
      source: "global",
    });
  });

  it("reads the settings files without waiting for the event loop (a task's checkpoint scan waits for its setting)", async () => {
    const d = await domain();
    await d.stores.globalSettings.applyPatch({ commandTimeoutSeconds: 12 });
    await d.stores.workspaceSettings("/work/a").applyPatch({ checkpointsEnabled: false });
    d.stores.globalState.set("lastVersion", "1.2.3");
    await d.lifecycle.stop("test");
    // Each asynchronous file read is a thread-pool round trip that completes in a later turn of the
    // event loop (10-14 ms for a setting while a task starts); small files are read synchronously.
    let turned = false;
    setImmediate(() => (turned = true));
    expect(await d.resolver.resolve("checkpointsEnabled", { workspaceRoot: "/work/a" })).toEqual({
      value: false,
      source: "workspace",
    });
    expect(await d.resolver.resolve("commandTimeoutSeconds", { workspaceRoot: "/work/a" })).toEqual({
      value: 12,
      source: "global",
    });
    expect(turned).toBe(false);
  });

  it("refuses to resolve against a remote configuration that is not a JSON object", async () => {
    const { base, layout } = tempLayout();
    const remoteFile = path.join(base, "remote.json");
    fs.writeFileSync(remoteFile, "{ not json");
    const { logger } = recordingLogger();
    const d = await createSettingsDomain(
      layout,
      logger,
      { DLINE_REMOTE_CONFIG: remoteFile },
      new Lifecycle(logger, () => {}),
    );
    await expect(d.resolver.resolve("mode")).rejects.toMatchObject({ code: "failed_precondition" });
    // The organisation's file is not ours: it is left exactly as it was.
    expect(fs.readFileSync(remoteFile, "utf8")).toBe("{ not json");
    fs.writeFileSync(remoteFile, JSON.stringify({ mode: 7, checkpointsEnabled: false }));
    expect(await d.resolver.resolve("mode")).toEqual({ value: "act", source: "default" });
    expect(await d.resolver.resolve("checkpointsEnabled")).toEqual({ value: false, source: "remote" });
  });

  it("reads autoApprovalSettings from the global setting only, filled with defaults", async () => {
    const d = await domain();
    await expect(d.stores.taskSettings("t1").applyPatch({})).resolves.toBeDefined();
    expect(() => d.registry.validatePatch({ autoApprovalSettings: { enabled: true } }, "task")).toThrowError(
      /autoApprovalSettings/,
    );
    expect(() => d.session.set("autoApprovalSettings", { enabled: true })).toThrowError(/global/);
    // A hand-edited task file cannot widen approvals either.
    fs.mkdirSync(d.layout.task("t1").dir, { recursive: true });
    fs.writeFileSync(
      d.layout.task("t1").settingsJson,
      JSON.stringify({ autoApprovalSettings: { enabled: true, executeAllCommands: true } }),
    );
    await d.stores.globalSettings.applyPatch({ autoApprovalSettings: { enabled: true, readFiles: true } });
    const resolved = await d.resolver.resolve("autoApprovalSettings", { taskId: "t1" });
    expect(resolved.source).toBe("global");
    expect(resolved.value).toEqual({
      enabled: true,
      readFiles: true,
      editFiles: false,
      executeSafeCommands: false,
      executeAllCommands: false,
      useMcp: false,
      maxRequests: 20,
    });
  });

  it("validates patches: unknown keys, wrong types and unknown object fields name the key", async () => {
    const d = await domain();
    expect(() => d.registry.validatePatch({ noSuchSetting: 1 }, "global")).toThrowError(/noSuchSetting/);
    expect(() => d.registry.validatePatch({ checkpointsEnabled: "yes" }, "global")).toThrowError(/checkpointsEnabled/);
    expect(() => d.registry.validatePatch({ commandTimeoutSeconds: 1.5 }, "global")).toThrowError(
      /commandTimeoutSeconds/,
    );
    expect(() => d.registry.validatePatch({ autoApprovalSettings: { runAnything: true } }, "global")).toThrowError(
      /runAnything/,
    );
    expect(() => d.registry.validatePatch({ mode: "yolo" }, "global")).toThrowError(/mode/);
    expect(() => d.registry.validatePatch({ mode: null, checkpointsEnabled: false }, "workspace")).not.toThrow();
  });
});

describe("capability toggles", () => {
  it("resolve task over workspace over global, a missing entry inheriting", async () => {
    const d = await domain();
    const ctx = { workspaceRoot: "/w1", taskId: "t1" };
    expect((await d.toggles.get(ctx, "rules", "style.md")).enabled).toBe(true);
    await d.toggles.set("global", ctx, "rules", "style.md", "disabled");
    expect(await d.toggles.get(ctx, "rules", "style.md")).toMatchObject({
      enabled: false,
      decidedBy: "global",
      workspace: "inherit",
    });
    await d.toggles.set("workspace", ctx, "rules", "style.md", "enabled");
    expect(await d.toggles.get(ctx, "rules", "style.md")).toMatchObject({ enabled: true, decidedBy: "workspace" });
    await d.toggles.set("task", ctx, "rules", "style.md", "disabled");
    expect(await d.toggles.get(ctx, "rules", "style.md")).toMatchObject({ enabled: false, decidedBy: "task" });
    await d.toggles.set("task", ctx, "rules", "style.md", "inherit");
    expect(await d.toggles.get(ctx, "rules", "style.md")).toMatchObject({
      enabled: true,
      decidedBy: "workspace",
      task: "inherit",
    });
    // Other workspaces and tasks see only the global entry.
    expect(await d.toggles.get({ workspaceRoot: "/w2", taskId: "t2" }, "rules", "style.md")).toMatchObject({
      enabled: false,
      decidedBy: "global",
    });
    expect(await d.toggles.list(ctx, "workflows")).toEqual([]);
    expect((await d.toggles.list(ctx)).map((t) => t.resource)).toEqual(["style.md"]);
    // Toggles are stored sparsely in each scope's settings file.
    expect((await d.stores.taskSettings("t1").read()).settings.capabilityToggles).toBeUndefined();
    expect((await d.stores.workspaceSettings("/w1").read()).settings.capabilityToggles).toEqual({
      rules: { "style.md": true },
    });
    await expect(d.toggles.set("global", ctx, "plugins", "x", "enabled")).rejects.toMatchObject({
      code: "invalid_argument",
    });
  });
});

describe("workspace and task isolation", () => {
  it("keeps workspace settings, workspace state and task settings apart", async () => {
    const d = await domain();
    await d.stores.workspaceSettings("/proj/one").applyPatch({ mode: "plan" });
    await d.stores.taskSettings("a").applyPatch({ checkpointsEnabled: false });
    d.stores.workspaceState("/proj/one").set("open", "x");
    await d.stores.flushPendingState();
    expect((await d.stores.workspaceSettings("/proj/two").read()).settings).toEqual({});
    expect((await d.stores.taskSettings("b").read()).settings).toEqual({});
    expect(await d.stores.workspaceState("/proj/two").getAll()).toEqual({});
    expect(await d.stores.workspaceState("/proj/one/").getAll()).toEqual({ open: "x" });
    expect(d.layout.workspaceSettingsJson("/proj/one")).not.toBe(d.layout.workspaceSettingsJson("/proj/two"));
    expect(await d.resolver.resolve("mode", { workspaceRoot: "/proj/two" })).toEqual({
      value: "act",
      source: "default",
    });
  });

  it("flushes pending state through the lifecycle at stop", async () => {
    const d = await domain();
    d.stores.globalState.set("lastVersion", "1.2.3");
    await d.lifecycle.stop("test");
    expect(JSON.parse(fs.readFileSync(d.layout.globalStateJson, "utf8"))).toEqual({ lastVersion: "1.2.3" });
    expect(() => d.stores.globalState.set("late", 1)).toThrowError(/stopping/);
  });
});
