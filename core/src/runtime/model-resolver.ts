import { createModelProvider, knownMaxOutputTokens, resolvePrices } from "../agent/index.js";
import { DlineError } from "../errors.js";
import {
  type EnvironmentProfile,
  type ProfileCatalogRepository,
  type ProfileRecord,
  API_KEY,
  type SecretsStore,
  type SettingResolver,
} from "../storage/index.js";
import type { RunnerModel } from "./ports.js";

/** Where to set up a model, in the words every "no model" error uses. */
export const SET_UP_A_MODEL =
  "add a profile (dline profile add, or the model settings of any Dline editor), or start Dline with OPENAI_BASE_URL and OPENAI_MODEL (and OPENAI_API_KEY), or ANTHROPIC_API_KEY, in its environment";

/**
 * Turns a profile id into a ready model provider. "" means: the `defaultProfileId` setting,
 * else the profile the sidecar's environment names (kept for this process only), else the only
 * stored profile. A stored profile's API key comes from the secrets store (it may be absent for
 * local OpenAI-compatible servers), the environment profile's from the environment; either goes
 * only into the provider's headers.
 */
export class ModelResolver {
  constructor(
    private readonly profiles: ProfileCatalogRepository,
    private readonly secrets: SecretsStore,
    private readonly settings: SettingResolver,
    private readonly environment: EnvironmentProfile | undefined,
  ) {}

  async resolve(profileId: string, taskId: string): Promise<RunnerModel> {
    let id = profileId;
    const all = await this.profiles.list();
    let missingDefault = "";
    if (!id) {
      const configured = await this.settings.resolve("defaultProfileId", { taskId: taskId || undefined });
      id = typeof configured.value === "string" ? configured.value : "";
      // A default that names a removed profile is no default (a settings file of a workspace or
      // task can still name one): the rules below choose, and say so when they cannot.
      if (id && this.environment?.profile.id !== id && !all.some((p) => p.id === id)) {
        missingDefault = id;
        id = "";
      }
    }
    if (!id && this.environment) id = this.environment.profile.id;
    const only = all.length === 1 ? all[0] : undefined;
    if (!id && only) id = only.id;
    if (!id) {
      if (all.length === 0)
        throw new DlineError("failed_precondition", `No model is configured: ${SET_UP_A_MODEL}.`, {
          errorReason: "no_model",
        });
      const why = missingDefault
        ? `The default model profile "${missingDefault.slice(0, 128)}" does not exist any more, and several others do`
        : "Several model profiles exist and none is the default";
      throw new DlineError("failed_precondition", `${why}: pass a profile id or set defaultProfileId.`, {
        errorReason: "no_default_profile",
      });
    }
    // The environment's profile is the one this process was started with: it wins over a stored one of the same id.
    const fromEnvironment = this.environment?.profile.id === id ? this.environment : undefined;
    const profile: ProfileRecord | undefined = fromEnvironment?.profile ?? all.find((p) => p.id === id);
    if (!profile)
      throw new DlineError("not_found", `Model profile "${id.slice(0, 128)}" does not exist.`, {
        errorReason: "profile_not_found",
      });
    const apiKey = fromEnvironment ? fromEnvironment.apiKey : ((await this.secrets.get(profile.id, API_KEY)) ?? "");
    const { prices } = resolvePrices({
      model: profile.model,
      inputPerMTok: profile.inputPricePerMtok,
      outputPerMTok: profile.outputPricePerMtok,
      cacheReadPerMTok: profile.cacheReadPricePerMtok,
      cacheWritePerMTok: profile.cacheWritePricePerMtok,
      zeroCost: profile.zeroCost,
    });
    const provider = createModelProvider(profile.provider, {
      baseUrl: profile.baseUrl,
      model: profile.model,
      apiKey,
      prices,
      idleTimeoutMs: profile.firstByteTimeoutSeconds > 0 ? profile.firstByteTimeoutSeconds * 1000 : undefined,
      reasoningEffort: profile.reasoningEffort || undefined,
      thinkingBudgetTokens:
        profile.provider === "anthropic" && profile.thinkingBudgetTokens > 0 ? profile.thinkingBudgetTokens : undefined,
    });
    return {
      provider,
      contextWindow: profile.contextWindow || 128_000,
      profileId: profile.id,
      maxOutputTokens: profile.maxOutputTokens,
      modelMaxOutputTokens: knownMaxOutputTokens(profile.model),
      thinkingBudgetTokens: profile.provider === "anthropic" ? profile.thinkingBudgetTokens : 0,
      toolCallFormat: profile.toolCallFormat === "xml" ? "xml" : "native",
    };
  }
}
