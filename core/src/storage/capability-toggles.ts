import { DlineError } from "../errors.js";
import { CAPABILITY_KINDS, isPlainObject, type CapabilityKind, type SettingScope } from "./settings-registry.js";
import type { SettingsStores } from "./settings-stores.js";
import type { SettingsSnapshot } from "./settings-repository.js";
import { compareNames } from "../text/name-order.js";

/** The settings key holding a scope's sparse toggles: `{ kind: { resource: enabled } }`. */
export const TOGGLES_KEY = "capabilityToggles";

export type ToggleState = "inherit" | "enabled" | "disabled";

export interface CapabilityToggleView {
  kind: CapabilityKind;
  resource: string;
  enabled: boolean;
  /** The scope whose entry decided `enabled`; undefined when no scope has one (enabled). */
  decidedBy: SettingScope | undefined;
  global: ToggleState;
  workspace: ToggleState;
  task: ToggleState;
}

export interface ToggleContext {
  workspaceRoot?: string;
  taskId?: string;
}

type SparseToggles = Record<string, Record<string, boolean>>;

function togglesOf(snapshot: SettingsSnapshot | undefined): SparseToggles {
  const value = snapshot?.settings[TOGGLES_KEY];
  if (!isPlainObject(value)) return {};
  const result: SparseToggles = {};
  for (const [kind, resources] of Object.entries(value)) {
    if (!(CAPABILITY_KINDS as readonly string[]).includes(kind) || !isPlainObject(resources)) continue;
    result[kind] = {};
    for (const [resource, enabled] of Object.entries(resources)) {
      if (typeof enabled === "boolean" && resource !== "__proto__") result[kind][resource] = enabled;
    }
  }
  return result;
}

function stateOf(toggles: SparseToggles, kind: string, resource: string): ToggleState {
  const entry = toggles[kind]?.[resource];
  return entry === undefined ? "inherit" : entry ? "enabled" : "disabled";
}

export function assertKind(kind: string): asserts kind is CapabilityKind {
  if (!(CAPABILITY_KINDS as readonly string[]).includes(kind)) {
    throw new DlineError(
      "invalid_argument",
      `Unknown capability kind "${kind.slice(0, 40)}"; expected ${CAPABILITY_KINDS.join(", ")}.`,
    );
  }
}

/**
 * Capability toggles in three sparse scopes (global, workspace, task; the task scope is the
 * strongest). A missing entry means "inherit", never "disabled"; with no entry anywhere a
 * resource is enabled. Each scope's entries live in that scope's settings file under
 * `capabilityToggles`, changed through the file's owner inside its lock.
 */
export class CapabilityToggles {
  constructor(private readonly stores: SettingsStores) {}

  async list(context: ToggleContext, kind?: string): Promise<CapabilityToggleView[]> {
    if (kind) assertKind(kind);
    const scopes = await this.readScopes(context);
    const seen = new Set<string>();
    const views: CapabilityToggleView[] = [];
    for (const toggles of [scopes.task, scopes.workspace, scopes.global]) {
      for (const [k, resources] of Object.entries(toggles)) {
        if (kind && k !== kind) continue;
        if (!(CAPABILITY_KINDS as readonly string[]).includes(k)) continue;
        for (const resource of Object.keys(resources)) {
          const id = `${k}\u0000${resource}`;
          if (seen.has(id)) continue;
          seen.add(id);
          views.push(this.view(scopes, k as CapabilityKind, resource));
        }
      }
    }
    return views.sort((a, b) => compareNames(a.kind, b.kind) || compareNames(a.resource, b.resource));
  }

  async get(context: ToggleContext, kind: string, resource: string): Promise<CapabilityToggleView> {
    assertKind(kind);
    return this.view(await this.readScopes(context), kind, resource);
  }

  /** Sets, clears (inherit) one scope's entry, merged into the latest file inside its lock. */
  async set(
    scope: SettingScope,
    context: ToggleContext,
    kind: string,
    resource: string,
    state: ToggleState,
  ): Promise<CapabilityToggleView> {
    assertKind(kind);
    // Resources become JSON object keys: `__proto__` would be swallowed by the object model.
    if (!resource || resource.length > 1024 || resource === "__proto__") {
      throw new DlineError("invalid_argument", 'resource must be 1-1024 characters and not "__proto__".');
    }
    const repo = this.stores.repositoryFor({ scope, ...context });
    await repo.update((current) => {
      const toggles = togglesOf(current);
      const before = stateOf(toggles, kind, resource);
      if (before === state) return undefined;
      if (state === "inherit") {
        delete toggles[kind]?.[resource];
        if (toggles[kind] && Object.keys(toggles[kind]).length === 0) delete toggles[kind];
      } else {
        toggles[kind] ??= {};
        toggles[kind][resource] = state === "enabled";
      }
      const next = { ...current.reserved, ...current.settings };
      if (Object.keys(toggles).length === 0) delete next[TOGGLES_KEY];
      else next[TOGGLES_KEY] = toggles;
      return next;
    });
    return this.get(context, kind, resource);
  }

  private async readScopes(context: ToggleContext) {
    const global = togglesOf(await this.stores.globalSettings.read());
    const workspace = context.workspaceRoot
      ? togglesOf(await this.stores.workspaceSettings(context.workspaceRoot).read())
      : {};
    const task = context.taskId ? togglesOf(await this.stores.taskSettings(context.taskId).read()) : {};
    return { global, workspace, task };
  }

  private view(
    scopes: { global: SparseToggles; workspace: SparseToggles; task: SparseToggles },
    kind: CapabilityKind,
    resource: string,
  ): CapabilityToggleView {
    const global = stateOf(scopes.global, kind, resource);
    const workspace = stateOf(scopes.workspace, kind, resource);
    const task = stateOf(scopes.task, kind, resource);
    let decidedBy: SettingScope | undefined;
    let enabled = true;
    for (const [scope, state] of [
      ["task", task],
      ["workspace", workspace],
      ["global", global],
    ] as const) {
      if (state !== "inherit") {
        decidedBy = scope;
        enabled = state === "enabled";
        break;
      }
    }
    return { kind, resource, enabled, decidedBy, global, workspace, task };
  }
}
