import type { DlineClients } from "../../../core/src/client/index.js";

/**
 * The README's way to point the CLI at a model without a profile: environment variables.
 * OPENAI_BASE_URL + OPENAI_MODEL (+ OPENAI_API_KEY) make an "env-openai" profile for any
 * OpenAI-compatible endpoint; ANTHROPIC_API_KEY (+ ANTHROPIC_BASE_URL, ANTHROPIC_MODEL) an
 * "env-anthropic" one. The profile is upserted and its key stored (write-only) each time, so
 * changing the variables takes effect. Returns the profile id, or undefined without variables.
 */
export async function profileFromEnv(clients: DlineClients, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (env.OPENAI_BASE_URL || env.OPENAI_MODEL) {
    const id = "env-openai";
    await clients.settings.upsertProfile({
      profile: {
        id,
        name: "OpenAI-compatible (from environment)",
        provider: "openai",
        baseUrl: env.OPENAI_BASE_URL || "https://api.openai.com/v1",
        model: env.OPENAI_MODEL || "gpt-4o-mini",
        contextWindow: BigInt(Number(env.OPENAI_CONTEXT_WINDOW) || 128_000),
      },
    });
    if (env.OPENAI_API_KEY) await clients.settings.setSecret({ profileId: id, name: "api_key", value: env.OPENAI_API_KEY });
    return id;
  }
  if (env.ANTHROPIC_API_KEY) {
    const id = "env-anthropic";
    await clients.settings.upsertProfile({
      profile: {
        id,
        name: "Anthropic (from environment)",
        provider: "anthropic",
        baseUrl: env.ANTHROPIC_BASE_URL || "https://api.anthropic.com",
        model: env.ANTHROPIC_MODEL || "claude-sonnet-4-5",
        contextWindow: 200_000n,
        // No prices here: the core prices the model ANTHROPIC_MODEL names (cache reads and
        // writes included) from its price table, or says the cost is unknown.
      },
    });
    await clients.settings.setSecret({ profileId: id, name: "api_key", value: env.ANTHROPIC_API_KEY });
    return id;
  }
  return undefined;
}
