/**
 * The session's model, chosen from the editor: the model profiles (stored ones and the one
 * the agent's environment names) as ACP's session config option of category "model" (the
 * model selector of editors that show config options), and as the older `models` state with
 * `session/set_model`. Before the first prompt the choice is the session's; once the task
 * exists it is the task's profile, which its next run uses (in every editor).
 */
import { RequestError, type SessionConfigOption } from "@agentclientprotocol/sdk";
import type { ModelResolver, TaskRuntime } from "../runtime/index.js";
import type { ProfileRecord, SettingsDomain } from "../storage/index.js";

export const MODEL_CONFIG_ID = "model";

export interface ModelSession {
  readonly id: string;
  profileId: string;
  started: boolean;
}

/** The older (unstable) model state some ACP clients read from session/new, load and resume. */
export interface SessionModelState {
  currentModelId: string;
  availableModels: { modelId: string; name: string; description?: string }[];
}

export class SessionModels {
  constructor(
    private readonly settings: SettingsDomain,
    private readonly models: ModelResolver,
    private readonly runtime: () => Promise<TaskRuntime>,
  ) {}

  /** Every profile a session can use: the environment's first, then the stored ones. */
  private async profiles(): Promise<ProfileRecord[]> {
    const environment = this.settings.environmentProfile?.profile;
    const stored = (await this.settings.stores.profiles.list()).filter((p) => p.id !== environment?.id);
    return environment ? [environment, ...stored] : stored;
  }

  /** The profile the session runs with: its own choice, the task's, else the one used by default ("" when none resolves). */
  private async current(session: ModelSession): Promise<string> {
    if (session.started) {
      const ofTask = (await this.runtime()).profileOf(session.id);
      if (ofTask) return ofTask;
    }
    if (session.profileId) return session.profileId;
    return this.models.resolve("", "").then(
      (m) => m.profileId,
      () => "",
    );
  }

  /** The `configOptions` and `models` of a session/new, load or resume response (none without any profile). */
  async state(session: ModelSession): Promise<{ configOptions?: SessionConfigOption[]; models?: SessionModelState }> {
    const profiles = await this.profiles();
    if (profiles.length === 0) return {};
    const current = await this.current(session);
    const describe = (p: ProfileRecord) =>
      `${p.model} (${p.provider}${p.id === this.settings.environmentProfile?.profile.id ? ", from the environment" : ""})`;
    return {
      configOptions: [
        {
          id: MODEL_CONFIG_ID,
          name: "Model",
          description: "The model profile this session's task uses.",
          category: "model",
          type: "select",
          currentValue: current,
          options: profiles.map((p) => ({ value: p.id, name: p.name || p.id, description: describe(p) })),
        },
      ],
      models: {
        currentModelId: current,
        availableModels: profiles.map((p) => ({ modelId: p.id, name: p.name || p.id, description: describe(p) })),
      },
    };
  }

  /** session/set_config_option (model) and session/set_model: the session's, or its task's, profile from now on. */
  async set(session: ModelSession, profileId: string): Promise<void> {
    const profiles = await this.profiles();
    if (!profiles.some((p) => p.id === profileId)) {
      throw RequestError.invalidParams(
        undefined,
        `unknown model "${profileId.slice(0, 100)}"; the models are ${profiles.map((p) => p.id).join(", ") || "(none)"}`,
      );
    }
    if (session.started) await (await this.runtime()).setTaskProfile(session.id, profileId);
    session.profileId = profileId;
  }
}
