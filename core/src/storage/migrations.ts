import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import { isReservedKey } from "./settings-registry.js";
import type { SettingsStores } from "./settings-stores.js";
import type { StateStore } from "./state-store.js";
import type { JsonRecord } from "./json-file.js";

/** Version of the legacy-settings move, kept in the global settings file. */
export const SETTINGS_MIGRATION_KEY = "__settingsMigrationVersion";
export const SETTINGS_MIGRATION_VERSION = 1;
/** Version of a host-state import, kept per scope in globalState.json / workspaceState.json. */
export const HOST_MIGRATION_VERSION = 1;

export function hostMigrationKey(host: string): string {
  if (!/^[a-z][a-z0-9]{0,31}$/.test(host))
    throw new DlineError("invalid_argument", 'host must be a short lower-case name such as "vscode".');
  return `__${host}MigrationVersion`;
}

export interface HostStateImport {
  host: string;
  globalState: JsonRecord;
  workspaces: { workspaceRoot: string; state: JsonRecord }[];
  secrets: Record<string, string>;
}

export interface ImportResult {
  importedKeys: number;
  keptKeys: number;
  alreadyMigrated: boolean;
}

/**
 * The migrations owned by storage. Both are safe to interrupt and retry: values are written
 * before the version that records them, and a value already in a file is never replaced.
 */
export class StorageMigrations {
  constructor(
    private readonly stores: SettingsStores,
    private readonly logger: Logger,
  ) {}

  /**
   * Moves supported legacy settings from globalState.json into settings/settings.json
   * (`__settingsMigrationVersion`), then removes the legacy copies, only the ones the settings
   * file now owns. Touches no file when globalState.json holds no legacy setting.
   */
  async migrateLegacySettings(): Promise<{ moved: number; removed: number }> {
    const registry = this.stores.registry;
    // A malformed file is left for the first client read to report; the migration runs at the
    // next start.
    if (!(await this.stores.globalFilesWellFormed())) {
      this.logger.warn(
        "legacy settings migration skipped: a malformed settings or state file waits for its first reader",
      );
      return { moved: 0, removed: 0 };
    }
    const state = await this.stores.globalState.getAll();
    const legacy = Object.keys(state).filter((key) => registry.has(key) && isValid(registry, key, state[key]));
    if (legacy.length === 0) return { moved: 0, removed: 0 };
    let moved = 0;
    const settings = await this.stores.globalSettings.update((current) => {
      const version = Number(current.reserved[SETTINGS_MIGRATION_KEY] ?? 0);
      if (version >= SETTINGS_MIGRATION_VERSION) return undefined;
      const next: JsonRecord = {
        ...current.reserved,
        ...current.settings,
        [SETTINGS_MIGRATION_KEY]: SETTINGS_MIGRATION_VERSION,
      };
      for (const key of legacy) {
        if (!(key in current.settings) && registry.require(key).scopes.includes("global")) {
          next[key] = state[key];
          moved++;
        }
      }
      return next;
    });
    // Only now that the settings file (at the migrated version) is on disk: drop legacy copies.
    const owned = legacy.filter((key) => key in settings.settings);
    this.stores.globalState.setMany(Object.fromEntries(owned.map((key) => [key, undefined])));
    await this.stores.globalState.flushPendingState();
    this.logger.info("legacy settings migrated", { moved, removed: owned.length });
    return { moved, removed: owned.length };
  }

  /**
   * Imports an editor's old host storage once per scope (`__<host>MigrationVersion` in that
   * scope's state file). Declared settings go to the global settings file, other keys to the
   * state files, secrets to secrets.json; a value already present in Dline's files wins.
   */
  async importHostState(input: HostStateImport): Promise<ImportResult> {
    const markerKey = hostMigrationKey(input.host);
    const registry = this.stores.registry;
    const result: ImportResult = { importedKeys: 0, keptKeys: 0, alreadyMigrated: true };

    const global = this.stores.globalState;
    if (!(await migrated(global, markerKey))) {
      result.alreadyMigrated = false;
      const settingsPatch: JsonRecord = {};
      const current = await this.stores.globalSettings.read();
      const state = await global.getAll();
      const stateChanges: JsonRecord = {};
      for (const [key, value] of Object.entries(input.globalState)) {
        if (isReservedKey(key) || value === null || value === undefined) continue;
        const isSetting =
          registry.has(key) && registry.require(key).scopes.includes("global") && isValid(registry, key, value);
        const present = isSetting ? key in current.settings : key in state;
        if (present) result.keptKeys++;
        else {
          if (isSetting) settingsPatch[key] = value;
          else stateChanges[key] = value;
          result.importedKeys++;
        }
      }
      if (Object.keys(settingsPatch).length > 0) {
        // Re-checked inside the lock: a key written meanwhile by another window wins too.
        await this.stores.globalSettings.update((latest) => {
          const fresh = Object.entries(settingsPatch).filter(([key]) => !(key in latest.settings));
          return fresh.length === 0
            ? undefined
            : { ...latest.reserved, ...latest.settings, ...Object.fromEntries(fresh) };
        });
      }
      const secrets = await this.stores.secrets.importGlobal(input.secrets);
      result.importedKeys += secrets.imported;
      result.keptKeys += secrets.kept;
      global.setMany(stateChanges);
      await global.flushPendingState();
      global.set(markerKey, HOST_MIGRATION_VERSION);
      await global.flushPendingState();
    }

    for (const workspace of input.workspaces) {
      const store = this.stores.workspaceState(workspace.workspaceRoot);
      if (await migrated(store, markerKey)) continue;
      result.alreadyMigrated = false;
      const state = await store.getAll();
      const changes: JsonRecord = {};
      for (const [key, value] of Object.entries(workspace.state)) {
        if (isReservedKey(key) || value === null || value === undefined) continue;
        if (key in state) result.keptKeys++;
        else {
          changes[key] = value;
          result.importedKeys++;
        }
      }
      store.setMany(changes);
      await store.flushPendingState();
      store.set(markerKey, HOST_MIGRATION_VERSION);
      await store.flushPendingState();
    }
    this.logger.info("host state imported", { host: input.host, imported: result.importedKeys, kept: result.keptKeys });
    return result;
  }
}

async function migrated(store: StateStore, markerKey: string): Promise<boolean> {
  return Number((await store.get(markerKey)) ?? 0) >= HOST_MIGRATION_VERSION;
}

function isValid(registry: SettingsStores["registry"], key: string, value: unknown): boolean {
  try {
    registry.validateValue(key, value);
    return true;
  } catch {
    return false;
  }
}
