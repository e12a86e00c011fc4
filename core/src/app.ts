import type { Lifecycle } from "./lifecycle.js";
import type { Logger } from "./logging/logger.js";
import { loadSqliteBinding } from "./native/sqlite-addon.js";
import {
  InstanceLayout,
  type StorageRoots,
  SqliteFactory,
  createSettingsDomain,
  type SettingsDomain,
  securePrivateRoots,
} from "./storage/index.js";
import { SQLITE_ADDON_HASH } from "./version.js";
import { lazyTaskStorage, type TaskStorage } from "./tasks/index.js";
import { homedir } from "node:os";
import { CheckpointDeletionHook, CheckpointManager } from "./checkpoints/index.js";
import { CheckpointStatusRelay, lazyTaskRuntime, type TaskRuntime } from "./runtime/index.js";
import { Capabilities, StoredCapabilitySettings } from "./capabilities/index.js";
import { ClineImporter } from "./import/index.js";
import { PeerConnections, PeerRegistry, startPeerEndpoint, TaskRouter } from "./peer/index.js";
import { createPeerHandler } from "./rpc/peer-handler.js";

/** Everything the RPC layer needs, constructed once per process by `createApp` (no singletons). */
export interface App {
  roots: StorageRoots;
  layout: InstanceLayout;
  logger: Logger;
  logFile: string | undefined;
  lifecycle: Lifecycle;
  sqlite: SqliteFactory;
  env: NodeJS.ProcessEnv;
  /** Settings, state, secrets, profiles, toggles (storage/settings-domain.ts). */
  settings: SettingsDomain;
  /** Everything under tasks/ (history, task stores, deletion); opened right after start (tasks/task-storage.ts). */
  tasks: () => Promise<TaskStorage>;
  /** Shadow-git checkpoints (checkpoints/); the task runtime calls it at the save points. */
  checkpoints: CheckpointManager;
  /** Runs tasks (the agent turn loop); built once the task storage is open. */
  runtime: () => Promise<TaskRuntime>;
  /** Registered with the task deletion coordinator: removes a deleted task's checkpoint refs. */
  checkpointDeletionHook: CheckpointDeletionHook;
  /** Rules, workflows, skills, subagents, hooks and MCP servers (capabilities/). */
  capabilities: Capabilities;
  /** The explicit, read-only import from Cline (import/). */
  clineImporter: ClineImporter;
  /** Where calls about a task go: here, or the sidecar that runs it (peer/). */
  taskRouter: TaskRouter;
}

export interface AppOptions {
  roots: StorageRoots;
  logger: Logger;
  logFile: string | undefined;
  lifecycle: Lifecycle;
  env: NodeJS.ProcessEnv;
  /** The client stops this process after one command (the CLI): nothing is begun for a later task. */
  oneCommand?: boolean;
}

/** Wires the domain modules. Each later module is constructed here and given what it needs. */
export async function createApp(options: AppOptions): Promise<App> {
  const layout = new InstanceLayout(options.roots);
  // The roots are the user's alone (0700), whatever the umask and whatever an older version left.
  securePrivateRoots([options.roots.dataRoot, options.roots.homeRoot, options.roots.documentsRoot]);
  const sqlite = new SqliteFactory(() => loadSqliteBinding((hash) => layout.nativeAddonDir(hash), SQLITE_ADDON_HASH));
  const settings = await createSettingsDomain(layout, options.logger.child("storage"), options.env, options.lifecycle);
  // Read once, here. With a malformed settings or state file the defaults apply (until the next
  // start) and the file is left for the first client read to keep aside and report.
  const numberSetting = async (key: string): Promise<number | undefined> => {
    if (!(await settings.stores.globalFilesWellFormed().catch(() => false))) return undefined;
    const value = (await settings.resolver.resolve(key).catch(() => undefined))?.value;
    return typeof value === "number" && value > 0 ? value : undefined;
  };
  const checkpointStatus = new CheckpointStatusRelay();
  const checkpoints = new CheckpointManager({
    onStatus: (workspaceRoot, status) => checkpointStatus.emit(workspaceRoot, status),
    layout,
    env: options.env,
    homeDir: options.env.HOME?.trim() || options.env.USERPROFILE?.trim() || homedir(),
    logger: options.logger.child("checkpoints"),
    sizeLimitBytes: await numberSetting("checkpointMaxFileBytes"),
    budgetBytes: await numberSetting("checkpointRepoBudgetBytes"),
    watchBetweenTasks: !options.oneCommand,
    isEnabled: async (workspaceRoot) =>
      (await settings.resolver.resolve("checkpointsEnabled", { workspaceRoot }).catch(() => undefined))?.value !==
      false,
  });
  const checkpointDeletionHook = new CheckpointDeletionHook(checkpoints, options.logger.child("checkpoints"));
  // Opened just after start; deletion hooks are registered before it finishes interrupted deletions.
  const tasks = lazyTaskStorage({
    layout,
    sqlite,
    logger: options.logger.child("tasks"),
    lifecycle: options.lifecycle,
    deletionHooks: () => [checkpointDeletionHook],
  });
  const capabilities = new Capabilities(
    layout,
    settings.toggles,
    new StoredCapabilitySettings(settings.stores, settings.resolver),
    options.logger.child("capabilities"),
  );
  // Registered before the runtime's flusher: flushers run in reverse, so runs stop first.
  options.lifecycle.onStop("checkpoint maintenance", () => checkpoints.stop());
  // A restore under way (one another window forwarded here, say) ends before anything stops:
  // its conversation part goes through the task runtime, whose flusher stops it.
  options.lifecycle.onStop("checkpoint restores", () => checkpoints.restoresEnded(1_000), { first: true });
  options.lifecycle.onStop("mcp servers", () => capabilities.stop());
  // Other sidecars over the same roots reach this one through its peer endpoint, published in
  // the registry before the runtime claims any task; calls about tasks they run go to them.
  const peerLogger = options.logger.child("peers");
  const peerRegistry = new PeerRegistry(layout, peerLogger);
  const taskRouter = new TaskRouter({
    ownership: async () => (await tasks()).ownership,
    registry: peerRegistry,
    connections: new PeerConnections(),
    logger: peerLogger,
  });
  let settleReachable!: () => void;
  const reachable = new Promise<void>((resolve) => (settleReachable = resolve));
  const runtime = lazyTaskRuntime({
    reachable,
    checkpointStatus,
    capabilities,
    layout,
    sqlite,
    settings,
    tasks,
    checkpoints,
    lifecycle: options.lifecycle,
    logger: options.logger.child("runtime"),
    env: options.env,
  });
  const clineImporter = new ClineImporter({
    env: options.env,
    layout,
    sqlite,
    tasks,
    logger: options.logger.child("import"),
  });
  startPeerEndpoint({
    registry: peerRegistry,
    lifecycle: options.lifecycle,
    logger: peerLogger,
    handler: (token) =>
      createPeerHandler(
        { tasks, runtime, checkpoints, stopSignal: options.lifecycle.signal, logger: peerLogger },
        token,
      ),
  })
    .catch((err: Error) =>
      peerLogger.warn("other Dline windows cannot reach this one: tasks it runs can be followed only here", {
        error: err.message,
      }),
    )
    .finally(settleReachable);
  return {
    taskRouter,
    clineImporter,
    capabilities,
    runtime,
    checkpoints,
    checkpointDeletionHook,
    tasks,
    settings,
    roots: options.roots,
    layout,
    logger: options.logger,
    logFile: options.logFile,
    lifecycle: options.lifecycle,
    sqlite,
    env: options.env,
  };
}
