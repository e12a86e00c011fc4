import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { Lifecycle } from "../../core/src/lifecycle.js";
import { FileLocks } from "../../core/src/storage/file-lock.js";
import { ProfileCatalogRepository, type ProfileRecord } from "../../core/src/storage/profile-catalog.js";
import { createSettingsDomain } from "../../core/src/storage/settings-domain.js";
import { corruptCopies, readJson, recordingLogger, tempLayout } from "./helpers.js";
import { nth } from "../helpers/items.js";

function profile(id: string, extra: Partial<ProfileRecord> = {}): ProfileRecord {
  return {
    id,
    name: `Profile ${id}`,
    provider: "anthropic",
    baseUrl: "",
    model: "claude-x",
    contextWindow: 200_000,
    maxOutputTokens: 8192,
    inputPricePerMtok: 3,
    outputPricePerMtok: 15,
    cacheReadPricePerMtok: 0,
    cacheWritePricePerMtok: 0,
    firstByteTimeoutSeconds: 0,
    reasoningEffort: "",
    thinkingBudgetTokens: 0,
    toolCallFormat: "",
    zeroCost: false,
    ...extra,
  };
}

function catalog(file: string) {
  const { logger } = recordingLogger();
  return new ProfileCatalogRepository(file, new FileLocks(logger), logger);
}

describe("ProfileCatalogRepository", () => {
  it("merges concurrent upserts from two owners by id, losing none", async () => {
    const { layout } = tempLayout();
    const a = catalog(layout.apiProfilesJson);
    const b = catalog(layout.apiProfilesJson);
    const ops: Promise<unknown>[] = [];
    for (let i = 0; i < 30; i++) {
      ops.push(a.upsert(profile(`a${i}`)));
      ops.push(b.upsert(profile(`b${i}`)));
    }
    await Promise.all(ops);
    await a.upsert(profile("b3", { name: "renamed" }));
    const list = await b.list();
    expect(list).toHaveLength(60);
    expect(list.find((p) => p.id === "b3")?.name).toBe("renamed");
    expect(readJson(layout.apiProfilesJson).__revision).toBe(61);
  });

  it("generates an id, validates fields, and answers not_found for unknown deletes", async () => {
    const { layout } = tempLayout();
    const repo = catalog(layout.apiProfilesJson);
    const stored = await repo.upsert(profile("", { provider: "openai", baseUrl: "http://127.0.0.1:9/v1" }));
    expect(stored.id).toMatch(/^[0-9a-f-]{36}$/);
    await expect(repo.upsert(profile("x", { provider: "gemini" as never }))).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(repo.upsert(profile("x", { name: " " }))).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(repo.upsert(profile("x", { baseUrl: "file:///etc" }))).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(repo.delete("nope")).rejects.toMatchObject({ code: "not_found" });
    await repo.delete(stored.id);
    expect(await repo.list()).toEqual([]);
  });

  it("keeps a malformed or wrongly shaped catalog aside", async () => {
    const { layout } = tempLayout();
    fs.mkdirSync(path.dirname(layout.apiProfilesJson), { recursive: true });
    fs.writeFileSync(layout.apiProfilesJson, '{"profiles": {"id": "x"}}');
    const repo = catalog(layout.apiProfilesJson);
    await expect(repo.list()).rejects.toMatchObject({ code: "data_loss" });
    expect(corruptCopies(layout.apiProfilesJson)).toHaveLength(1);
    await repo.upsert(profile("p1"));
    expect((await repo.list()).map((p) => p.id)).toEqual(["p1"]);
    expect(fs.readFileSync(nth(corruptCopies(layout.apiProfilesJson), 0, "corrupt copy"), "utf8")).toBe(
      '{"profiles": {"id": "x"}}',
    );
  });
});

async function domainAt(layout: ReturnType<typeof tempLayout>["layout"]) {
  const { logger } = recordingLogger();
  return createSettingsDomain(layout, logger, {}, new Lifecycle(logger, () => {}));
}

describe("migrations", () => {
  it("moves legacy global-state settings into settings.json, then drops the legacy copies", async () => {
    const { layout } = tempLayout();
    fs.mkdirSync(layout.roots.dataRoot, { recursive: true });
    fs.writeFileSync(
      layout.globalStateJson,
      JSON.stringify({ mode: "plan", checkpointsEnabled: "bad", lastVersion: "1" }),
    );
    fs.mkdirSync(layout.settingsDir, { recursive: true });
    fs.writeFileSync(layout.globalSettingsJson, JSON.stringify({ __revision: 3, commandTimeoutSeconds: 30 }));
    await domainAt(layout); // runs the migration at start
    expect(readJson(layout.globalSettingsJson)).toEqual({
      __revision: 4,
      __settingsMigrationVersion: 1,
      commandTimeoutSeconds: 30,
      mode: "plan",
    });
    // The invalid legacy value is not a setting the file owns: it stays where it was.
    expect(readJson(layout.globalStateJson)).toEqual({ checkpointsEnabled: "bad", lastVersion: "1" });
    // A second start changes nothing.
    await domainAt(layout);
    expect(readJson(layout.globalSettingsJson).__revision).toBe(4);
  });

  it("finishes an interrupted migration: legacy copies the file already owns are removed", async () => {
    const { layout } = tempLayout();
    fs.mkdirSync(layout.settingsDir, { recursive: true });
    fs.writeFileSync(
      layout.globalSettingsJson,
      JSON.stringify({ __revision: 1, __settingsMigrationVersion: 1, mode: "act" }),
    );
    fs.writeFileSync(layout.globalStateJson, JSON.stringify({ mode: "plan" }));
    await domainAt(layout);
    expect(readJson(layout.globalSettingsJson).mode).toBe("act"); // the file's value wins
    expect(readJson(layout.globalStateJson)).toEqual({});
  });

  it("imports host state once per scope, values already in files winning", async () => {
    const { layout } = tempLayout();
    const d = await domainAt(layout);
    await d.stores.globalSettings.applyPatch({ mode: "act" });
    d.stores.workspaceState("/ws").set("recent", "mine");
    await d.stores.flushPendingState();
    const input = {
      host: "vscode",
      globalState: { mode: "plan", checkpointsEnabled: false, welcomeShown: true },
      workspaces: [{ workspaceRoot: "/ws", state: { recent: "theirs", panel: 2 } }],
      secrets: { telemetryToken: "tok-123" },
    };
    const first = await d.migrations.importHostState(input);
    expect(first).toEqual({ importedKeys: 4, keptKeys: 2, alreadyMigrated: false });
    const settings = (await d.stores.globalSettings.read()).settings;
    expect(settings).toEqual({ mode: "act", checkpointsEnabled: false });
    expect(readJson(layout.globalStateJson)).toEqual({ welcomeShown: true, __vscodeMigrationVersion: 1 });
    expect(readJson(layout.workspaceStateJson("/ws"))).toEqual({
      recent: "mine",
      panel: 2,
      __vscodeMigrationVersion: 1,
    });
    expect(readJson(layout.secretsJson)).toEqual({ telemetryToken: "tok-123" });
    const again = await d.migrations.importHostState(input);
    expect(again).toEqual({ importedKeys: 0, keptKeys: 0, alreadyMigrated: true });
    // A new workspace is still imported on a later call.
    const third = await d.migrations.importHostState({
      ...input,
      workspaces: [{ workspaceRoot: "/ws2", state: { a: 1 } }],
    });
    expect(third).toEqual({ importedKeys: 1, keptKeys: 0, alreadyMigrated: false });
  });
});
