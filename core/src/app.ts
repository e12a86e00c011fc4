import { gitVersionProbe } from "./git-version.js";
import type { Lifecycle } from "./lifecycle.js";
import type { Logger } from "./logging/logger.js";
import { loadSqliteBinding } from "./native/sqlite-addon.js";
import { InstanceLayout } from "./storage/instance-layout.js";
import type { StorageRoots } from "./storage/roots.js";
import { SqliteFactory } from "./storage/sqlite.js";
import { SQLITE_ADDON_HASH } from "./version.js";

/** Everything the RPC layer needs, constructed once per process by `createApp` (no singletons). */
export interface App {
  roots: StorageRoots;
  layout: InstanceLayout;
  logger: Logger;
  logFile: string | undefined;
  lifecycle: Lifecycle;
  sqlite: SqliteFactory;
  startedAt: number;
  gitVersion: () => Promise<string>;
  env: NodeJS.ProcessEnv;
}

export interface AppOptions {
  roots: StorageRoots;
  logger: Logger;
  logFile: string | undefined;
  lifecycle: Lifecycle;
  env: NodeJS.ProcessEnv;
}

/** Wires the domain modules. Each later module is constructed here and given what it needs. */
export async function createApp(options: AppOptions): Promise<App> {
  const layout = new InstanceLayout(options.roots);
  const sqlite = new SqliteFactory(() => loadSqliteBinding((hash) => layout.nativeAddonDir(hash), SQLITE_ADDON_HASH));
  return {
    roots: options.roots,
    layout,
    logger: options.logger,
    logFile: options.logFile,
    lifecycle: options.lifecycle,
    sqlite,
    startedAt: Date.now(),
    gitVersion: gitVersionProbe(options.env),
    env: options.env,
  };
}
