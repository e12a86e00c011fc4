/**
 * The settings capabilities read: whether a workspace is trusted (its `.agents/hooks` and
 * `.agents/mcp` servers come from the repository and run only once the person trusted it) and
 * the hook timeout. Trust is the `workspaceTrusted` key of the workspace's own settings file
 * (under the data root, so a repository cannot trust itself); it is read from that file only,
 * never from remote configuration, session overrides or a task, which cannot widen it.
 */
import type { SettingResolver, SettingsStores, ToggleContext } from "../storage/index.js";
import { DEFAULT_HOOK_TIMEOUT_MS } from "./hook-runner.js";

export const WORKSPACE_TRUSTED_KEY = "workspaceTrusted";

export interface CapabilitySettings {
  isWorkspaceTrusted(workspaceRoot: string): Promise<boolean>;
  setWorkspaceTrusted(workspaceRoot: string, trusted: boolean): Promise<void>;
  hookTimeoutMs(ctx: ToggleContext): Promise<number>;
}

export class StoredCapabilitySettings implements CapabilitySettings {
  constructor(
    private readonly stores: SettingsStores,
    private readonly resolver: SettingResolver,
  ) {}

  async isWorkspaceTrusted(workspaceRoot: string): Promise<boolean> {
    return (await this.stores.workspaceSettings(workspaceRoot).read()).settings[WORKSPACE_TRUSTED_KEY] === true;
  }

  async setWorkspaceTrusted(workspaceRoot: string, trusted: boolean): Promise<void> {
    await this.stores.workspaceSettings(workspaceRoot).update((current) => {
      if ((current.settings[WORKSPACE_TRUSTED_KEY] === true) === trusted) return undefined;
      const next = { ...current.reserved, ...current.settings };
      if (trusted) next[WORKSPACE_TRUSTED_KEY] = true;
      else delete next[WORKSPACE_TRUSTED_KEY];
      return next;
    });
  }

  async hookTimeoutMs(ctx: ToggleContext): Promise<number> {
    const value = (await this.resolver.resolve("hookTimeoutSeconds", ctx).catch(() => undefined))?.value;
    return typeof value === "number" && value > 0 ? value * 1000 : DEFAULT_HOOK_TIMEOUT_MS;
  }
}
