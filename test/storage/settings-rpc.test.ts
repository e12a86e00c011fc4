import * as fs from "node:fs";
import * as path from "node:path";
import { fromJson, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { SettingSource, SettingsScope, ToggleScope, ToggleState } from "../../core/src/gen/dline/v1/settings_pb.js";
import { makeTestRoots, startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { corruptCopies, modeOf, readJson } from "./helpers.js";
import { nth } from "../helpers/items.js";

const running: RunningSidecar[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function start(...args: Parameters<typeof startSidecar>) {
  const s = await startSidecar(...args);
  running.push(s);
  return s;
}

async function codeOf(promise: Promise<unknown>): Promise<ConnectError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

const GLOBAL = SettingsScope.GLOBAL;
const dataRoot = (s: RunningSidecar) => path.join(s.roots.dlineDir, "data");
const globalSettingsFile = (s: RunningSidecar) => path.join(dataRoot(s), "settings", "settings.json");

describe("SettingsService over the sidecar", () => {
  it("updates and reads global settings with revisions; a stale expected revision is aborted", async () => {
    const s = await start();
    const empty = await s.clients.settings.getSettings({ scope: GLOBAL });
    expect(empty.revision).toBe(0n);
    const first = await s.clients.settings.updateSettings({
      scope: GLOBAL,
      patch: { mode: "plan", checkpointsEnabled: false },
      expectedRevision: 0n,
    });
    expect(first.revision).toBe(1n);
    expect(first.settings).toEqual({ mode: "plan", checkpointsEnabled: false });
    const err = await codeOf(
      s.clients.settings.updateSettings({ scope: GLOBAL, patch: { mode: "act" }, expectedRevision: 0n }),
    );
    expect(err.code).toBe(Code.Aborted);
    const got = await s.clients.settings.getSettings({ scope: GLOBAL });
    expect(got.settings).toEqual({ mode: "plan", checkpointsEnabled: false });
    expect(got.revision).toBe(1n);
    expect(readJson(globalSettingsFile(s)).__revision).toBe(1);
  });

  it("rejects an unknown key or a wrong type with invalid_argument naming the key, writing nothing", async () => {
    const s = await start({ json: true });
    await s.clients.settings.updateSettings({ scope: GLOBAL, patch: { mode: "plan" } });
    const before = fs.readFileSync(globalSettingsFile(s), "utf8");
    for (const [patch, key] of [
      [{ mode: "act", noSuchSetting: true }, "noSuchSetting"],
      [{ mode: "act", checkpointsEnabled: "yes" }, "checkpointsEnabled"],
      [{ autoApprovalSettings: { enabled: "always" } }, "autoApprovalSettings"],
      [{ commandTimeoutSeconds: 2.5 }, "commandTimeoutSeconds"],
    ] as const) {
      const err = await codeOf(s.clients.settings.updateSettings({ scope: GLOBAL, patch }));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toContain(key);
    }
    const taskErr = await codeOf(
      s.clients.settings.updateSettings({
        scope: SettingsScope.TASK,
        taskId: "t1",
        patch: { autoApprovalSettings: { enabled: true } },
      }),
    );
    expect(taskErr.code).toBe(Code.InvalidArgument);
    expect(fs.readFileSync(globalSettingsFile(s), "utf8")).toBe(before);
    expect(fs.existsSync(path.join(s.roots.docsDir, "tasks", "t1", "settings.json"))).toBe(false);
  });

  it("tells the first client read about settings and state files that were malformed before the sidecar started", async () => {
    const roots = makeTestRoots();
    const data = path.join(roots.dlineDir, "data");
    const settingsFile = path.join(data, "settings", "settings.json");
    const stateFile = path.join(data, "globalState.json");
    fs.mkdirSync(path.dirname(settingsFile), { recursive: true });
    fs.writeFileSync(settingsFile, '{"mode": "pla');
    fs.writeFileSync(stateFile, "[1, 2");
    const s = await start({ roots });
    // Loading the settings at the first call reads neither file for itself (nothing is kept
    // aside silently): the call that reads each one keeps it aside and names the copy.
    const settingsErr = await codeOf(s.clients.settings.getSettings({ scope: GLOBAL }));
    expect(settingsErr.code).toBe(Code.DataLoss);
    expect(corruptCopies(settingsFile)).toHaveLength(1);
    expect(settingsErr.rawMessage).toContain(corruptCopies(settingsFile)[0]);
    const stateErr = await codeOf(s.clients.settings.importHostState({ host: "vscode", globalState: { a: 1 } }));
    expect(stateErr.code).toBe(Code.DataLoss);
    expect(stateErr.rawMessage).toContain(corruptCopies(stateFile)[0]);
    expect(fs.readFileSync(nth(corruptCopies(settingsFile), 0, "corrupt copy"), "utf8")).toBe('{"mode": "pla');
    expect(fs.readFileSync(nth(corruptCopies(stateFile), 0, "corrupt copy"), "utf8")).toBe("[1, 2");
  });

  it("answers data_loss for malformed settings, profiles and state files and keeps each aside", async () => {
    const roots = makeTestRoots();
    const data = path.join(roots.dlineDir, "data");
    const files = {
      settings: path.join(data, "settings", "settings.json"),
      profiles: path.join(data, "settings", "api_profiles.json"),
      state: path.join(data, "globalState.json"),
      apiKeys: path.join(data, "secrets", "api_keys.json"),
    };
    const s = await start({ roots });
    fs.mkdirSync(path.join(data, "secrets"), { recursive: true, mode: 0o700 });
    fs.mkdirSync(path.join(data, "settings"), { recursive: true });
    for (const file of [files.settings, files.profiles, files.state]) fs.writeFileSync(file, '{"truncated": tr');

    const settingsErr = await codeOf(s.clients.settings.getSettings({ scope: GLOBAL }));
    expect(settingsErr.code).toBe(Code.DataLoss);
    expect(settingsErr.rawMessage).toContain(corruptCopies(files.settings)[0]);
    const profilesErr = await codeOf(s.clients.settings.listProfiles({}));
    expect(profilesErr.code).toBe(Code.DataLoss);
    expect(profilesErr.rawMessage).toContain(corruptCopies(files.profiles)[0]);
    const importErr = await codeOf(s.clients.settings.importHostState({ host: "vscode", globalState: { a: 1 } }));
    expect(importErr.code).toBe(Code.DataLoss);
    expect(importErr.rawMessage).toContain(corruptCopies(files.state)[0]);
    await s.clients.settings.upsertProfile({ profile: { id: "p1", name: "P", provider: "anthropic" } });
    fs.writeFileSync(files.apiKeys, '{"truncated": tr');
    const secretErr = await codeOf(s.clients.settings.setSecret({ profileId: "p1", name: "api_key", value: "v" }));
    expect(secretErr.code).toBe(Code.DataLoss);
    expect(secretErr.rawMessage).toContain(corruptCopies(files.apiKeys)[0]);

    // Later writes start new files; every original byte is still in its kept-aside copy.
    await s.clients.settings.updateSettings({ scope: GLOBAL, patch: { mode: "plan" } });
    await s.clients.settings.setSecret({ profileId: "p1", name: "api_key", value: "v" });
    for (const file of Object.values(files)) {
      const copies = corruptCopies(file);
      expect(copies, file).toHaveLength(1);
      expect(fs.readFileSync(nth(copies, 0, "corrupt copy"), "utf8")).toBe('{"truncated": tr');
    }
  });

  it("resolves with remote configuration first and reports each source", async () => {
    const roots = makeTestRoots();
    const remote = path.join(roots.base, "remote.json");
    const s = await start({ roots, args: ["--remote-config", remote] });
    const resolve = async (key: string, workspaceRoot = "", taskId = "") => {
      const r = await s.clients.settings.resolveSetting({ key, workspaceRoot, taskId });
      return { value: r.value ? toJson(ValueSchema, r.value) : undefined, source: r.source };
    };
    expect(await resolve("checkpointMaxFileBytes")).toEqual({ value: 5 * 1024 * 1024, source: SettingSource.DEFAULT });
    await s.clients.settings.updateSettings({ scope: GLOBAL, patch: { mode: "plan" } });
    await s.clients.settings.updateSettings({
      scope: SettingsScope.WORKSPACE,
      workspaceRoot: "/w",
      patch: { mode: "act" },
    });
    await s.clients.settings.updateSettings({ scope: SettingsScope.TASK, taskId: "t-1", patch: { mode: "plan" } });
    expect(await resolve("mode")).toEqual({ value: "plan", source: SettingSource.GLOBAL });
    expect(await resolve("mode", "/w")).toEqual({ value: "act", source: SettingSource.WORKSPACE });
    expect(await resolve("mode", "/w", "t-1")).toEqual({ value: "plan", source: SettingSource.TASK });
    await s.clients.settings.setSessionOverride({ key: "mode", value: fromJson(ValueSchema, "act") });
    expect(await resolve("mode", "/w", "t-1")).toEqual({ value: "act", source: SettingSource.SESSION });
    fs.writeFileSync(remote, JSON.stringify({ mode: "plan" }));
    expect(await resolve("mode", "/w", "t-1")).toEqual({ value: "plan", source: SettingSource.REMOTE });
    const unknown = await codeOf(s.clients.settings.resolveSetting({ key: "nope" }));
    expect(unknown.code).toBe(Code.InvalidArgument);
    const badOverride = await codeOf(
      s.clients.settings.setSessionOverride({ key: "mode", value: fromJson(ValueSchema, 3) }),
    );
    expect(badOverride.code).toBe(Code.InvalidArgument);
  });

  it("keeps workspaces and tasks isolated", async () => {
    const s = await start();
    await s.clients.settings.updateSettings({
      scope: SettingsScope.WORKSPACE,
      workspaceRoot: "/p/one",
      patch: { commandTimeoutSeconds: 5 },
    });
    await s.clients.settings.updateSettings({
      scope: SettingsScope.TASK,
      taskId: "task-a",
      patch: { checkpointsEnabled: false },
    });
    await s.clients.settings.setCapabilityToggle({
      scope: ToggleScope.TASK,
      taskId: "task-a",
      kind: "rules",
      resource: "r.md",
      state: ToggleState.DISABLED,
    });
    expect(
      (await s.clients.settings.getSettings({ scope: SettingsScope.WORKSPACE, workspaceRoot: "/p/two" })).settings,
    ).toEqual({});
    expect((await s.clients.settings.getSettings({ scope: SettingsScope.TASK, taskId: "task-b" })).settings).toEqual(
      {},
    );
    expect((await s.clients.settings.getSettings({ scope: SettingsScope.TASK, taskId: "task-a" })).settings).toEqual({
      checkpointsEnabled: false,
      capabilityToggles: { rules: { "r.md": false } },
    });
    const other = await s.clients.settings.getCapabilityToggles({ taskId: "task-b", workspaceRoot: "/p/two" });
    expect(other.toggles).toEqual([]);
    const mine = await s.clients.settings.getCapabilityToggles({ taskId: "task-a", kind: "rules" });
    expect(mine.toggles.map((t) => [t.resource, t.enabled, t.decidedBy, t.task])).toEqual([
      ["r.md", false, ToggleScope.TASK, ToggleState.DISABLED],
    ]);
    const badId = await codeOf(s.clients.settings.getSettings({ scope: SettingsScope.TASK, taskId: "../../etc" }));
    expect(badId.code).toBe(Code.InvalidArgument);
  });

  it("keeps secrets write-only, 0600, and out of responses and logs", async () => {
    const s = await start({ args: ["--log-level", "debug"] });
    const secret = "sk-ant-rpc-4d3c2b1a-do-not-leak";
    const upserted = await s.clients.settings.upsertProfile({
      profile: {
        name: "Work",
        provider: "openai",
        baseUrl: "http://127.0.0.1:1/v1",
        model: "m",
        contextWindow: 128000n,
      },
    });
    const id = upserted.profile!.id;
    await s.clients.settings.setSecret({ profileId: id, name: "api_key", value: secret });
    await s.clients.settings.setSecret({ profileId: id, name: "org_token", value: `${secret}-2` });
    await s.clients.settings.setSecret({ profileId: "", name: "telemetry", value: `${secret}-3` });
    const missing = await codeOf(s.clients.settings.setSecret({ profileId: "ghost", name: "api_key", value: secret }));
    expect(missing.code).toBe(Code.NotFound);
    expect(missing.rawMessage).not.toContain(secret);
    const listed = await s.clients.settings.listProfiles({});
    expect(listed.profiles).toHaveLength(1);
    expect(nth(listed.profiles, 0, "profile").secretsSet).toEqual(["api_key", "org_token"]);
    expect(nth(listed.profiles, 0, "profile").contextWindow).toBe(128000n);
    const data = dataRoot(s);
    expect(modeOf(path.join(data, "secrets"))).toBe(0o700);
    expect(modeOf(path.join(data, "secrets", "api_keys.json"))).toBe(0o600);
    expect(modeOf(path.join(data, "secrets", "provider_secrets.json"))).toBe(0o600);
    expect(modeOf(path.join(data, "secrets.json"))).toBe(0o600);
    await s.clients.settings.clearSecret({ profileId: id, name: "org_token" });
    expect(nth((await s.clients.settings.listProfiles({})).profiles, 0, "profile").secretsSet).toEqual(["api_key"]);
    // Everything a client can read back, in JSON form.
    const everything = JSON.stringify(
      [await s.clients.settings.listProfiles({}), await s.clients.settings.getSettings({ scope: GLOBAL })],
      (_k, v) => (typeof v === "bigint" ? String(v) : v),
    );
    expect(everything).not.toContain(secret);
    await s.clients.settings.deleteProfile({ id });
    expect(readJson(path.join(data, "secrets", "api_keys.json"))).toEqual({});
    const init = await s.clients.system.initialize({ clientName: "t" });
    await s.stop();
    running.splice(running.indexOf(s), 1);
    expect(fs.readFileSync(init.logFile, "utf8")).not.toContain(secret);
    expect(fs.readFileSync(s.stderrFile, "utf8")).not.toContain(secret);
    expect(fs.readFileSync(s.stderrFile, "utf8")).toContain("secret set");
  });

  it("streams changes made by another sidecar to WatchSettings, and ends the stream at shutdown", async () => {
    const a = await start();
    const b = await start({ roots: a.roots });
    const abort = new AbortController();
    const seen: unknown[] = [];
    const stream = a.clients.settings.watchSettings(
      { scope: SettingsScope.WORKSPACE, workspaceRoot: "/shared" },
      { signal: abort.signal },
    );
    let firstCame!: () => void;
    const first = new Promise<void>((r) => (firstCame = r));
    const done = (async () => {
      for await (const msg of stream) {
        seen.push(msg.settings);
        firstCame();
        if (msg.settings?.mode === "plan") return msg.revision;
      }
      return -1n;
    })();
    // The stream's first message (the settings as they are) comes after it subscribed.
    await first;
    await b.clients.settings.updateSettings({
      scope: SettingsScope.WORKSPACE,
      workspaceRoot: "/shared",
      patch: { mode: "plan" },
    });
    expect(await done).toBe(1n);
    expect(seen[0]).toEqual({});
    // A second stream ends (successfully) when the sidecar shuts down.
    const second = a.clients.settings.watchSettings({ scope: GLOBAL });
    let secondCame!: () => void;
    const secondFirst = new Promise<void>((r) => (secondCame = r));
    const ended = (async () => {
      let n = 0;
      for await (const _ of second) {
        n++;
        secondCame();
      }
      return n;
    })();
    await secondFirst;
    await a.clients.system.shutdown({ reason: "test" }).catch(() => {});
    expect(await ended).toBe(1);
  });

  it.runIf(process.platform === "linux")("stops watching the file when a WatchSettings client goes away", async () => {
    const s = await start();
    const pid = s.process.handshake.pid;
    const workspacesDir = path.join(dataRoot(s), "workspaces");
    // The sidecar's inotify watches on the workspace's folder, as the kernel lists them.
    const watchesOfWorkspace = () => {
      const hash = nth(fs.readdirSync(workspacesDir), 0, "workspace folder");
      const ino = `ino:${fs.statSync(path.join(workspacesDir, hash)).ino.toString(16)} `;
      return fs
        .readdirSync(`/proc/${pid}/fdinfo`)
        .flatMap((fd) => {
          try {
            return fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8").split("\n");
          } catch {
            return [];
          }
        })
        .filter((line) => line.startsWith("inotify wd:") && line.includes(ino)).length;
    };
    const abort = new AbortController();
    const stream = s.clients.settings.watchSettings(
      { scope: SettingsScope.WORKSPACE, workspaceRoot: "/gone" },
      { signal: abort.signal },
    );
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.revision).toBe(0n);
    expect(watchesOfWorkspace()).toBe(1);
    abort.abort();
    await iterator.next().catch(() => undefined);
    for (let i = 0; i < 100 && watchesOfWorkspace() !== 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(watchesOfWorkspace()).toBe(0);
    expect((await s.clients.system.health({})).status).toBe("ok");
  });

  it("imports host state once; values already in files win", async () => {
    const s = await start();
    await s.clients.settings.updateSettings({ scope: GLOBAL, patch: { mode: "act" } });
    const req = {
      host: "vscode",
      globalState: { mode: "plan", preferredLanguage: "French", lastShownAnnouncementId: "x" },
      workspaces: [{ workspaceRoot: "/ws", state: { panelOpen: true } }],
      secrets: { apiKey: "legacy-key-value" },
    };
    const first = await s.clients.settings.importHostState(req);
    expect([first.importedKeys, first.keptKeys, first.alreadyMigrated]).toEqual([4, 1, false]);
    const again = await s.clients.settings.importHostState(req);
    expect(again.alreadyMigrated).toBe(true);
    expect((await s.clients.settings.getSettings({ scope: GLOBAL })).settings).toEqual({
      mode: "act",
      preferredLanguage: "French",
    });
    expect(readJson(path.join(dataRoot(s), "globalState.json"))).toEqual({
      lastShownAnnouncementId: "x",
      __vscodeMigrationVersion: 1,
    });
  });
});
