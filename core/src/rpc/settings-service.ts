import { create, fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { DlineError } from "../errors.js";
import {
  CapabilityToggleSchema,
  ClearSecretResponseSchema,
  DeleteProfileResponseSchema,
  GetCapabilityTogglesResponseSchema,
  GetSettingsResponseSchema,
  ImportHostStateResponseSchema,
  ListProfilesResponseSchema,
  ProfileSchema,
  ProfileSource,
  ResolveSettingResponseSchema,
  SetCapabilityToggleResponseSchema,
  SetSecretResponseSchema,
  SetSessionOverrideResponseSchema,
  SettingSource,
  SettingsScope,
  ToggleScope,
  ToggleState,
  UpdateSettingsResponseSchema,
  UpsertProfileResponseSchema,
  WatchSettingsResponseSchema,
  type Profile,
  type SettingsService,
  type WatchSettingsResponse,
} from "../gen/dline/v1/settings_pb.js";
import { resolvePrices } from "../agent/index.js";
import type { Lifecycle } from "../lifecycle.js";
import type { Logger } from "../logging/logger.js";
import {
  type CapabilityToggleView,
  type ToggleState as DomainToggleState,
  type ProfileRecord,
  type ProviderKind,
  API_KEY,
  type SettingsDomain,
  type SettingScope,
  type SettingsSnapshot,
  type SettingSourceName,
} from "../storage/index.js";

export interface SettingsServiceDeps {
  settings: SettingsDomain;
  lifecycle: Lifecycle;
  logger: Logger;
}

const SCOPES: Record<SettingsScope, SettingScope> = {
  [SettingsScope.UNSPECIFIED]: "global",
  [SettingsScope.GLOBAL]: "global",
  [SettingsScope.WORKSPACE]: "workspace",
  [SettingsScope.TASK]: "task",
};

const TOGGLE_SCOPES: Record<ToggleScope, SettingScope | undefined> = {
  [ToggleScope.UNSPECIFIED]: undefined,
  [ToggleScope.GLOBAL]: "global",
  [ToggleScope.WORKSPACE]: "workspace",
  [ToggleScope.TASK]: "task",
};

const SOURCES: Record<SettingSourceName, SettingSource> = {
  remote: SettingSource.REMOTE,
  session: SettingSource.SESSION,
  task: SettingSource.TASK,
  workspace: SettingSource.WORKSPACE,
  global: SettingSource.GLOBAL,
  legacy: SettingSource.LEGACY,
  default: SettingSource.DEFAULT,
};

const TOGGLE_STATES: Record<DomainToggleState, ToggleState> = {
  inherit: ToggleState.INHERIT,
  enabled: ToggleState.ENABLED,
  disabled: ToggleState.DISABLED,
};

function scopeOf(scope: SettingsScope): SettingScope {
  const mapped = SCOPES[scope];
  if (!mapped) throw new DlineError("invalid_argument", `Unknown settings scope ${scope}.`);
  return mapped;
}

function toggleScopeName(scope: SettingScope | undefined): ToggleScope {
  if (scope === "global") return ToggleScope.GLOBAL;
  if (scope === "workspace") return ToggleScope.WORKSPACE;
  if (scope === "task") return ToggleScope.TASK;
  return ToggleScope.UNSPECIFIED;
}

function toggleMessage(view: CapabilityToggleView) {
  return create(CapabilityToggleSchema, {
    kind: view.kind,
    resource: view.resource,
    enabled: view.enabled,
    decidedBy: toggleScopeName(view.decidedBy),
    global: TOGGLE_STATES[view.global],
    workspace: TOGGLE_STATES[view.workspace],
    task: TOGGLE_STATES[view.task],
  });
}

function profileMessage(record: ProfileRecord, secretsSet: string[], source = ProfileSource.STORED): Profile {
  return create(ProfileSchema, {
    id: record.id,
    name: record.name,
    provider: record.provider,
    baseUrl: record.baseUrl,
    model: record.model,
    contextWindow: BigInt(Math.trunc(record.contextWindow)),
    maxOutputTokens: BigInt(Math.trunc(record.maxOutputTokens)),
    inputPricePerMtok: record.inputPricePerMtok,
    outputPricePerMtok: record.outputPricePerMtok,
    cacheReadPricePerMtok: record.cacheReadPricePerMtok,
    cacheWritePricePerMtok: record.cacheWritePricePerMtok,
    firstByteTimeoutSeconds: Math.trunc(record.firstByteTimeoutSeconds),
    reasoningEffort: record.reasoningEffort,
    thinkingBudgetTokens: BigInt(Math.trunc(record.thinkingBudgetTokens)),
    toolCallFormat: record.toolCallFormat,
    zeroCost: record.zeroCost,
    priceSource: describePriceSource(record),
    secretsSet,
    source,
  });
}

function describePriceSource(record: ProfileRecord): string {
  return resolvePrices({
    model: record.model,
    inputPerMTok: record.inputPricePerMtok,
    outputPerMTok: record.outputPricePerMtok,
    cacheReadPerMTok: record.cacheReadPricePerMtok,
    cacheWritePerMTok: record.cacheWritePricePerMtok,
    zeroCost: record.zeroCost,
  }).source;
}

function profileRecord(profile: Profile): ProfileRecord {
  return {
    id: profile.id,
    name: profile.name,
    provider: profile.provider as ProviderKind,
    baseUrl: profile.baseUrl,
    model: profile.model,
    contextWindow: Number(profile.contextWindow),
    maxOutputTokens: Number(profile.maxOutputTokens),
    inputPricePerMtok: profile.inputPricePerMtok,
    outputPricePerMtok: profile.outputPricePerMtok,
    cacheReadPricePerMtok: profile.cacheReadPricePerMtok,
    cacheWritePricePerMtok: profile.cacheWritePricePerMtok,
    firstByteTimeoutSeconds: profile.firstByteTimeoutSeconds,
    reasoningEffort: profile.reasoningEffort,
    thinkingBudgetTokens: Number(profile.thinkingBudgetTokens),
    toolCallFormat: profile.toolCallFormat,
    zeroCost: profile.zeroCost,
  };
}

function target(scope: SettingScope, workspaceRoot: string, taskId: string) {
  return { scope, workspaceRoot: workspaceRoot || undefined, taskId: taskId || undefined };
}

/** Waits for the next wake-up or abort; returns false when aborted. */
function waitFor(signal: AbortSignal, register: (wake: () => void) => void): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
    register(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    });
  });
}

/**
 * One WatchSettings stream: the scope's settings now, then every newer revision (a write, or a
 * hand edit the repository's watch saw) until the client goes or the sidecar stops.
 */
async function* watchScope(
  deps: SettingsServiceDeps,
  scope: SettingScope,
  workspaceRoot: string,
  ctx: HandlerContext,
): AsyncGenerator<WatchSettingsResponse> {
  const { stores } = deps.settings;
  const repo = stores.repositoryFor(target(scope, workspaceRoot, ""));
  const signal = AbortSignal.any([ctx.signal, deps.lifecycle.signal]);
  const queue: SettingsSnapshot[] = [];
  let wake: (() => void) | undefined;
  // Subscribe before the first read, so no change between the two is missed.
  const unsubscribe = repo.subscribe((snapshot) => {
    queue.push(snapshot);
    wake?.();
  });
  const message = (snapshot: SettingsSnapshot) =>
    create(WatchSettingsResponseSchema, {
      scope: scope === "global" ? SettingsScope.GLOBAL : SettingsScope.WORKSPACE,
      workspaceRoot,
      settings: snapshot.settings as JsonObject,
      revision: BigInt(snapshot.revision),
    });
  try {
    let last = await repo.read();
    yield message(last);
    while (!signal.aborted) {
      if (queue.length === 0 && !(await waitFor(signal, (w) => (wake = w)))) break;
      wake = undefined;
      while (queue.length > 0) {
        const next = queue.shift()!;
        if (next.revision < last.revision) continue;
        if (next.revision === last.revision && JSON.stringify(next.settings) === JSON.stringify(last.settings))
          continue;
        last = next;
        yield message(next);
      }
    }
  } finally {
    unsubscribe();
    deps.logger.debug("settings watch ended", { settingsScope: scope, aborted: signal.aborted });
  }
}

type SettingsServiceImpl = Partial<ServiceImpl<typeof SettingsService>>;

/** SettingsService: maps proto <-> the storage domain (storage/settings-domain.ts), nothing else. */
export function settingsService(deps: SettingsServiceDeps): SettingsServiceImpl {
  return {
    ...settingsMethods(deps),
    ...profileAndSecretMethods(deps),
    ...toggleMethods(deps),
    ...hostStateMethods(deps),
  };
}

/** Settings by scope, their resolution and the session's overrides. */
function settingsMethods(deps: SettingsServiceDeps): SettingsServiceImpl {
  const { registry, stores, session, resolver } = deps.settings;
  return {
    async getSettings(req) {
      const snapshot = await stores.repositoryFor(target(scopeOf(req.scope), req.workspaceRoot, req.taskId)).read();
      return create(GetSettingsResponseSchema, {
        settings: snapshot.settings as JsonObject,
        revision: BigInt(snapshot.revision),
      });
    },

    async updateSettings(req) {
      const scope = scopeOf(req.scope);
      const patch = (req.patch ?? {}) as Record<string, unknown>;
      // Validation first: an unknown key or a wrong type writes nothing.
      registry.validatePatch(patch, scope);
      const repo = stores.repositoryFor(target(scope, req.workspaceRoot, req.taskId));
      const expected = req.expectedRevision === undefined ? undefined : Number(req.expectedRevision);
      const snapshot = Object.keys(patch).length === 0 ? await repo.read() : await repo.applyPatch(patch, expected);
      if (expected !== undefined && snapshot.revision !== expected && Object.keys(patch).length === 0) {
        throw new DlineError("aborted", `Settings are at revision ${snapshot.revision}, not ${expected}.`);
      }
      return create(UpdateSettingsResponseSchema, {
        revision: BigInt(snapshot.revision),
        settings: snapshot.settings as JsonObject,
      });
    },

    async resolveSetting(req) {
      const resolved = await resolver.resolve(req.key, {
        workspaceRoot: req.workspaceRoot || undefined,
        taskId: req.taskId || undefined,
      });
      return create(ResolveSettingResponseSchema, {
        value: fromJson(ValueSchema, resolved.value as JsonValue),
        source: SOURCES[resolved.source],
      });
    },

    setSessionOverride(req) {
      if (req.clear) session.clear(req.key);
      else {
        if (!req.value)
          throw new DlineError("invalid_argument", `A value is required to override "${req.key.slice(0, 100)}".`);
        session.set(req.key, toJson(ValueSchema, req.value));
      }
      return create(SetSessionOverrideResponseSchema, {});
    },

    watchSettings(req, ctx) {
      const scope = scopeOf(req.scope);
      if (scope === "task")
        throw new DlineError("invalid_argument", "WatchSettings serves the global and workspace scopes.");
      return watchScope(deps, scope, req.workspaceRoot, ctx);
    },
  };
}

/** Model profiles and their secrets (write-only: a secret's value never comes back). */
function profileAndSecretMethods(deps: SettingsServiceDeps): SettingsServiceImpl {
  const { stores } = deps.settings;
  return {
    async listProfiles() {
      // The environment's profile (this process only) first; a stored one of the same id is shadowed by it.
      const environment = deps.settings.environmentProfile;
      const stored = (await stores.profiles.list()).filter((p) => p.id !== environment?.profile.id);
      const names = await stores.secrets.namesByProfile(stored.map((p) => p.id));
      const profiles = stored.map((p) => profileMessage(p, names.get(p.id) ?? [], ProfileSource.STORED));
      if (environment)
        profiles.unshift(
          profileMessage(environment.profile, environment.apiKey ? [API_KEY] : [], ProfileSource.ENVIRONMENT),
        );
      return create(ListProfilesResponseSchema, { profiles });
    },

    async upsertProfile(req) {
      if (!req.profile) throw new DlineError("invalid_argument", "profile is required.");
      const stored = await stores.profiles.upsert(profileRecord(req.profile));
      const names = await stores.secrets.namesByProfile([stored.id]);
      return create(UpsertProfileResponseSchema, { profile: profileMessage(stored, names.get(stored.id) ?? []) });
    },

    async deleteProfile(req) {
      await stores.profiles.delete(req.id);
      await stores.secrets.deleteProfile(req.id);
      // The default named the profile just removed: new tasks fall back to what is left.
      const global = stores.repositoryFor(target("global", "", ""));
      if ((await global.read()).settings.defaultProfileId === req.id)
        await global.applyPatch({ defaultProfileId: null });
      return create(DeleteProfileResponseSchema, {});
    },

    async setSecret(req) {
      if (req.profileId && !(await stores.profiles.get(req.profileId))) {
        throw new DlineError("not_found", `No profile with id "${req.profileId.slice(0, 128)}".`);
      }
      await stores.secrets.set(req.profileId, req.name, req.value);
      return create(SetSecretResponseSchema, {});
    },

    async clearSecret(req) {
      await stores.secrets.clear(req.profileId, req.name);
      return create(ClearSecretResponseSchema, {});
    },
  };
}

/** Capability toggles in their three sparse scopes. */
function toggleMethods(deps: SettingsServiceDeps): SettingsServiceImpl {
  const { toggles } = deps.settings;
  return {
    async getCapabilityToggles(req) {
      const views = await toggles.list(
        { workspaceRoot: req.workspaceRoot || undefined, taskId: req.taskId || undefined },
        req.kind || undefined,
      );
      return create(GetCapabilityTogglesResponseSchema, { toggles: views.map(toggleMessage) });
    },

    async setCapabilityToggle(req) {
      const scope = TOGGLE_SCOPES[req.scope];
      if (!scope) throw new DlineError("invalid_argument", "scope must be global, workspace or task.");
      const state =
        req.state === ToggleState.ENABLED
          ? "enabled"
          : req.state === ToggleState.DISABLED
            ? "disabled"
            : req.state === ToggleState.INHERIT
              ? "inherit"
              : undefined;
      if (!state) throw new DlineError("invalid_argument", "state must be inherit, enabled or disabled.");
      const view = await toggles.set(
        scope,
        { workspaceRoot: req.workspaceRoot || undefined, taskId: req.taskId || undefined },
        req.kind,
        req.resource,
        state,
      );
      return create(SetCapabilityToggleResponseSchema, { toggle: toggleMessage(view) });
    },
  };
}

/** An editor's old storage, imported once per scope. */
function hostStateMethods(deps: SettingsServiceDeps): SettingsServiceImpl {
  const { migrations } = deps.settings;
  return {
    async importHostState(req) {
      const result = await migrations.importHostState({
        host: req.host || "vscode",
        globalState: req.globalState ?? {},
        workspaces: req.workspaces.map((w) => {
          if (!w.workspaceRoot) throw new DlineError("invalid_argument", "Every workspace needs a workspace_root.");
          return { workspaceRoot: w.workspaceRoot, state: w.state ?? {} };
        }),
        secrets: { ...req.secrets },
      });
      return create(ImportHostStateResponseSchema, {
        importedKeys: result.importedKeys,
        keptKeys: result.keptKeys,
        alreadyMigrated: result.alreadyMigrated,
      });
    },
  };
}
