import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import { FileLocks } from "./file-lock.js";
import { readJsonRecord } from "./json-file.js";
import type { InstanceLayout } from "./instance-layout.js";
import { normaliseWorkspacePath } from "./instance-layout.js";
import { ProfileCatalogRepository } from "./profile-catalog.js";
import { SecretsStore } from "./secrets-store.js";
import { type SettingsRegistry, type SettingScope } from "./settings-registry.js";
import { SettingsRepository } from "./settings-repository.js";
import { StateStore, type StateStoreOptions } from "./state-store.js";

/** Which settings file a request means. */
export interface ScopeTarget {
  scope: SettingScope;
  workspaceRoot?: string;
  taskId?: string;
}

/**
 * The owners of every settings, state, secret and profile file, one per file, created on first
 * use. Workspace repositories and state stores are kept (they hold watchers and pending
 * writes); task settings repositories are cheap and made per call.
 */
export class SettingsStores {
  readonly locks: FileLocks;
  readonly globalSettings: SettingsRepository;
  readonly globalState: StateStore;
  readonly secrets: SecretsStore;
  readonly profiles: ProfileCatalogRepository;
  private readonly workspaceSettingsByPath = new Map<string, SettingsRepository>();
  private readonly workspaceStateByPath = new Map<string, StateStore>();

  constructor(
    readonly layout: InstanceLayout,
    readonly registry: SettingsRegistry,
    private readonly logger: Logger,
    private readonly stateOptions: StateStoreOptions = {},
  ) {
    this.locks = new FileLocks(logger);
    this.globalSettings = new SettingsRepository(
      layout.globalSettingsJson,
      this.locks,
      logger,
      "The global settings file",
    );
    this.globalState = new StateStore(layout.globalStateJson, this.locks, logger, {
      ...stateOptions,
      what: "The global state file",
    });
    this.secrets = new SecretsStore(layout, this.locks, logger);
    this.profiles = new ProfileCatalogRepository(layout.apiProfilesJson, this.locks, logger);
  }

  workspaceSettings(workspaceRoot: string): SettingsRepository {
    const key = normaliseWorkspacePath(workspaceRoot);
    let repo = this.workspaceSettingsByPath.get(key);
    if (!repo) {
      repo = new SettingsRepository(
        this.layout.workspaceSettingsJson(key),
        this.locks,
        this.logger,
        "The workspace settings file",
      );
      this.workspaceSettingsByPath.set(key, repo);
    }
    return repo;
  }

  workspaceState(workspaceRoot: string): StateStore {
    const key = normaliseWorkspacePath(workspaceRoot);
    let store = this.workspaceStateByPath.get(key);
    if (!store) {
      store = new StateStore(this.layout.workspaceStateJson(key), this.locks, this.logger, {
        ...this.stateOptions,
        what: "The workspace state file",
      });
      this.workspaceStateByPath.set(key, store);
    }
    return store;
  }

  /** Task-level overrides: `tasks/<id>/settings.json`, read-merge-temp-rename under the lock. */
  taskSettings(taskId: string): SettingsRepository {
    return new SettingsRepository(
      this.layout.task(taskId).settingsJson,
      this.locks,
      this.logger,
      "The task settings file",
    );
  }

  /** The repository of a scope; the ids it needs are checked by InstanceLayout. */
  repositoryFor(target: ScopeTarget): SettingsRepository {
    switch (target.scope) {
      case "global":
        return this.globalSettings;
      case "workspace":
        return this.workspaceSettings(requireValue(target.workspaceRoot, "workspace_root"));
      case "task":
        return this.taskSettings(requireValue(target.taskId, "task_id"));
    }
  }

  /**
   * Whether the global settings and state files are well-formed (or missing), read without
   * side effects. The sidecar's own reads at start-up (the legacy migration, settings read once
   * when the app is built) check this first and leave a malformed file where it is, so that
   * the first client call that reads it keeps it aside and is told (data_loss).
   */
  async globalFilesWellFormed(): Promise<boolean> {
    const reads = await Promise.all([readJsonRecord(this.globalSettings.file), readJsonRecord(this.globalState.file)]);
    return reads.every((read) => read.kind !== "malformed");
  }

  /** Every state store's pending changes, until none remain. */
  async flushPendingState(): Promise<void> {
    await Promise.all([this.globalState, ...this.workspaceStateByPath.values()].map((s) => s.flushPendingState()));
  }

  /** Shutdown: state stores refuse new changes, then write what is pending; watchers stop. */
  async close(): Promise<void> {
    for (const repo of [this.globalSettings, ...this.workspaceSettingsByPath.values()]) repo.close();
    await Promise.all([this.globalState, ...this.workspaceStateByPath.values()].map((s) => s.close()));
  }
}

function requireValue(value: string | undefined, field: string): string {
  if (!value) throw new DlineError("invalid_argument", `${field} is required for this scope.`);
  return value;
}
