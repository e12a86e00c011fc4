import { createModelProvider } from "../agent/providers/create-provider.js";
import { knownMaxOutputTokens } from "../agent/providers/price-table.js";
import { resolvePrices } from "../agent/providers/pricing.js";
import { DlineError } from "../errors.js";
import type { ProfileCatalogRepository } from "../storage/profile-catalog.js";
import { API_KEY, type SecretsStore } from "../storage/secrets-store.js";
import type { SettingResolver } from "../storage/setting-resolver.js";
import type { RunnerModel } from "./ports.js";

/**
 * Turns a profile id into a ready model provider: "" means the `defaultProfileId` setting, or
 * the only profile when there is exactly one. The API key comes from the secrets store (it may
 * be absent for local OpenAI-compatible servers) and goes only into the provider's headers.
 */
export class ModelResolver {
  constructor(
    private readonly profiles: ProfileCatalogRepository,
    private readonly secrets: SecretsStore,
    private readonly settings: SettingResolver,
  ) {}

  async resolve(profileId: string, taskId: string): Promise<RunnerModel> {
    let id = profileId;
    if (!id) {
      const configured = await this.settings.resolve("defaultProfileId", { taskId: taskId || undefined });
      id = typeof configured.value === "string" ? configured.value : "";
    }
    const all = await this.profiles.list();
    if (!id && all.length === 1) id = all[0].id;
    if (!id) {
      throw new DlineError(
        "failed_precondition",
        all.length === 0
          ? "No model is configured: add a profile (dline profile add) or set OPENAI_BASE_URL/OPENAI_MODEL or ANTHROPIC_API_KEY."
          : "Several model profiles exist and none is the default: pass a profile id or set defaultProfileId.",
      );
    }
    const profile = all.find((p) => p.id === id);
    if (!profile) throw new DlineError("not_found", `Model profile "${id}" does not exist.`);
    const apiKey = (await this.secrets.get(profile.id, API_KEY)) ?? "";
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
      thinkingBudgetTokens: profile.provider === "anthropic" && profile.thinkingBudgetTokens > 0 ? profile.thinkingBudgetTokens : undefined,
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
