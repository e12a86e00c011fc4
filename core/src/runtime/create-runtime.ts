import {
  parseAutoApprovalSettings,
  buildSystemPrompt,
  collectWorkspaceFacts,
  createToolGuard,
} from "../agent/index.js";
import type { CheckpointManager, CheckpointStatus } from "../checkpoints/index.js";
import type { Lifecycle } from "../lifecycle.js";
import type { Logger } from "../logging/logger.js";
import type { InstanceLayout, SettingsDomain, SqliteFactory } from "../storage/index.js";
import type { TaskStorage } from "../tasks/index.js";
import type { CapabilitiesPort } from "./capabilities-port.js";
import { runtimeConversationPort } from "./conversation-port.js";
import { ModelResolver } from "./model-resolver.js";
import { taskCheckpoints } from "./task-checkpoints.js";
import { TaskRuntime } from "./task-runtime.js";

/** Carries checkpoint status changes from the checkpoint manager (built first) to the runtime. */
export class CheckpointStatusRelay {
  private listener: ((workspaceRoot: string, status: CheckpointStatus) => void) | undefined;
  /** What each workspace said last before anyone listened (the runtime is made at its first call). */
  private readonly unheard = new Map<string, CheckpointStatus>();

  emit(workspaceRoot: string, status: CheckpointStatus): void {
    if (this.listener) this.listener(workspaceRoot, status);
    else this.unheard.set(workspaceRoot, status);
  }

  /** The listener hears, first, how each workspace last said it was doing before it listened. */
  listen(listener: (workspaceRoot: string, status: CheckpointStatus) => void): void {
    this.listener = listener;
    for (const [workspaceRoot, status] of this.unheard) listener(workspaceRoot, status);
    this.unheard.clear();
  }
}

export interface RuntimeWiring {
  /** Checkpoint status changes, forwarded to the tasks of the workspace as events. */
  checkpointStatus?: CheckpointStatusRelay;
  layout: InstanceLayout;
  sqlite: SqliteFactory;
  settings: SettingsDomain;
  tasks: () => Promise<TaskStorage>;
  checkpoints: CheckpointManager;
  lifecycle: Lifecycle;
  logger: Logger;
  /** Rules, workflows, skills, subagent definitions, hooks, MCP tools (capabilities/). */
  capabilities?: CapabilitiesPort;
  /** The sidecar's environment: session-only model keys and the remote configuration file. */
  env?: NodeJS.ProcessEnv;
  /**
   * Settles once other sidecars can reach this one (or it is known they cannot): the runtime
   * claims no task before, so a task it runs is never one its followers cannot reach.
   */
  reachable?: Promise<unknown>;
}

/** Keys a session-only profile takes from the environment: secrets too, redacted like stored ones. */
const ENV_SECRETS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/**
 * Builds the task runtime once the task storage is open, connects it to settings (model
 * profiles, keys, auto-approval), checkpoints (save points, and the conversation side of
 * restores) and the lifecycle (runs stop before the stores close).
 */
export function lazyTaskRuntime(w: RuntimeWiring): () => Promise<TaskRuntime> {
  let building: Promise<TaskRuntime> | undefined;
  const get = (): Promise<TaskRuntime> => {
    if (building) return building;
    const attempt = build();
    building = attempt;
    // A failed start is not remembered: the next call tries again (the task storage could not
    // open on a full disk, and space was freed since).
    attempt.catch(() => {
      if (building === attempt) building = undefined;
    });
    return attempt;
  };
  const build = (): Promise<TaskRuntime> =>
    (async () => {
      const storage = await w.tasks();
      await w.reachable;
      const { resolver, stores } = w.settings;
      const setting = async (key: string, context: { workspaceRoot?: string; taskId?: string } = {}) =>
        (await resolver.resolve(key, context)).value;
      const models = new ModelResolver(stores.profiles, stores.secrets, resolver, w.settings.environmentProfile);
      const runtime = new TaskRuntime({
        layout: w.layout,
        sqlite: w.sqlite,
        history: storage.history,
        ownership: storage.ownership,
        logger: w.logger,
        resolveModel: (profileId, taskId) => models.resolve(profileId, taskId),
        toolGuard: async () => {
          const env = w.env ?? {};
          const { dataRoot, homeRoot, documentsRoot } = w.layout.roots;
          // The remote configuration wins over every setting: a tool that could write it could approve anything.
          const remoteConfig = env.DLINE_REMOTE_CONFIG ? [env.DLINE_REMOTE_CONFIG] : [];
          const secrets = [...(await stores.secrets.values()), ...ENV_SECRETS.map((k) => env[k] ?? "")];
          return createToolGuard([dataRoot, homeRoot, documentsRoot, ...remoteConfig], secrets);
        },
        autoApproval: async () => parseAutoApprovalSettings(await setting("autoApprovalSettings")),
        commandTimeoutMs: async () => Number(await setting("commandTimeoutSeconds")) * 1000 || 600_000,
        commandLogBudgetBytes: async () => Number(await setting("commandLogBudgetBytes")) || 200 * 1024 * 1024,
        checkpointsFor: (taskId, workspaceRoot) => taskCheckpoints(w.checkpoints, taskId, workspaceRoot),
        prepareCheckpoints: (workspaceRoot) => w.checkpoints.prepareWorkspace(workspaceRoot),
        systemPrompt: (workspaceRoot, _taskId, rules, tools, options) =>
          buildSystemPrompt(collectWorkspaceFacts(workspaceRoot, new Date()), tools, rules, options),
        shutdownSignal: w.lifecycle.signal,
        capabilities: w.capabilities,
        taskMode: async (taskId, workspaceRoot) =>
          (await setting("mode", { workspaceRoot, taskId })) === "plan" ? "plan" : "act",
      });
      w.checkpointStatus?.listen((workspaceRoot, status) => runtime.checkpointStatusChanged(workspaceRoot, status));
      // A deleted task's runs stop and its streams end, in this process too.
      storage.deletion.registerHook({
        name: "task runtime",
        onTaskDeleted: (taskId) => runtime.unload(taskId, { release: false }),
        onAllTasksDeleted: () => runtime.unloadAll(),
      });
      // Registered after the task storage: flushers run in reverse, so runs stop first.
      w.lifecycle.onStop("task runtime", () => runtime.stopAll());
      return runtime;
    })();
  w.checkpoints.attachConversation(runtimeConversationPort(get, w.tasks, w.layout));
  return get;
}
