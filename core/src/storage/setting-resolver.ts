import type { Logger } from "../logging/logger.js";
import type { RemoteConfig } from "./remote-config.js";
import type { SessionOverrides } from "./session-overrides.js";
import type { SettingsStores } from "./settings-stores.js";

/** Where a resolved value came from, strongest first. */
export type SettingSourceName = "remote" | "session" | "task" | "workspace" | "global" | "legacy" | "default";

export interface ResolvedSetting {
  value: unknown;
  source: SettingSourceName;
}

export interface ResolveContext {
  workspaceRoot?: string;
  taskId?: string;
}

/**
 * Resolves a setting; the first hit wins: remote configuration, session override, task
 * setting, workspace setting, global setting, legacy global-state copy (during migration),
 * declared default. Workspace settings sit between task and
 * global, the narrower scope being stronger. `globalOnly` settings (autoApprovalSettings)
 * skip session, task and workspace, so a task snapshot cannot widen approvals.
 * A stored value of the wrong type (a hand edit) is skipped with a warning.
 */
export class SettingResolver {
  constructor(
    private readonly stores: SettingsStores,
    private readonly session: SessionOverrides,
    private readonly remote: RemoteConfig,
    private readonly logger: Logger,
  ) {}

  async resolve(key: string, context: ResolveContext = {}): Promise<ResolvedSetting> {
    const registry = this.stores.registry;
    const declaration = registry.require(key);
    const finish = (value: unknown, source: SettingSourceName): ResolvedSetting => ({
      value: registry.withDefaults(key, value),
      source,
    });

    const remote = this.remote.get(key);
    if (remote.found) return finish(remote.value, "remote");

    if (!declaration.globalOnly) {
      const session = this.session.get(key);
      if (session.found) return finish(session.value, "session");
      if (context.taskId) {
        const task = await this.stores.taskSettings(context.taskId).read();
        if (this.usable(key, task.settings[key], "task")) return finish(task.settings[key], "task");
      }
      if (context.workspaceRoot) {
        const workspace = await this.stores.workspaceSettings(context.workspaceRoot).read();
        if (this.usable(key, workspace.settings[key], "workspace")) return finish(workspace.settings[key], "workspace");
      }
    }

    const global = await this.stores.globalSettings.read();
    if (this.usable(key, global.settings[key], "global")) return finish(global.settings[key], "global");

    const legacy = await this.stores.globalState.get(key);
    if (this.usable(key, legacy, "legacy")) return finish(legacy, "legacy");

    return { value: declaration.default, source: "default" };
  }

  private usable(key: string, value: unknown, where: string): boolean {
    if (value === undefined) return false;
    try {
      this.stores.registry.validateValue(key, value);
      return true;
    } catch {
      this.logger.warn("stored setting of the wrong type ignored", { key, where });
      return false;
    }
  }
}
