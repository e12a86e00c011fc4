import type { Lifecycle } from "../lifecycle.js";
import type { Logger } from "../logging/logger.js";
import { CapabilityToggles } from "./capability-toggles.js";
import { environmentProfile, type EnvironmentProfile } from "./environment-profile.js";
import type { InstanceLayout } from "./instance-layout.js";
import { StorageMigrations } from "./migrations.js";
import { REMOTE_CONFIG_ENV, RemoteConfig } from "./remote-config.js";
import { SessionOverrides } from "./session-overrides.js";
import { SettingResolver } from "./setting-resolver.js";
import { SettingsRegistry } from "./settings-registry.js";
import { SettingsStores } from "./settings-stores.js";

/** Everything SettingsService (and later the agent) needs from storage, wired once per process. */
export interface SettingsDomain {
  registry: SettingsRegistry;
  stores: SettingsStores;
  session: SessionOverrides;
  resolver: SettingResolver;
  toggles: CapabilityToggles;
  migrations: StorageMigrations;
  /** The model profile the process's environment names, if any (never stored). */
  environmentProfile: EnvironmentProfile | undefined;
}

export async function createSettingsDomain(
  layout: InstanceLayout,
  logger: Logger,
  env: NodeJS.ProcessEnv,
  lifecycle: Lifecycle,
): Promise<SettingsDomain> {
  const registry = new SettingsRegistry();
  const stores = new SettingsStores(layout, registry, logger);
  const session = new SessionOverrides(registry);
  const remote = new RemoteConfig(env[REMOTE_CONFIG_ENV] || undefined, registry, logger);
  const resolver = new SettingResolver(stores, session, remote, logger);
  const toggles = new CapabilityToggles(stores);
  const migrations = new StorageMigrations(stores, logger);
  // Buffered state is written before exit; new changes are refused from then on.
  lifecycle.onStop("settings and state", () => stores.close());
  try {
    await migrations.migrateLegacySettings();
  } catch (err) {
    // A malformed file was kept aside (data_loss) or the disk failed: the sidecar still
    // starts; the next read of that file reports the problem to the client.
    logger.error("legacy settings migration failed", { error: (err as Error).message });
  }
  return { registry, stores, session, resolver, toggles, migrations, environmentProfile: environmentProfile(env) };
}
