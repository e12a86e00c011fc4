/**
 * A model profile from the sidecar's environment, for this process only: OPENAI_BASE_URL and/or
 * OPENAI_MODEL (+ OPENAI_API_KEY, OPENAI_CONTEXT_WINDOW) for any OpenAI-compatible endpoint, or
 * ANTHROPIC_API_KEY (+ ANTHROPIC_BASE_URL, ANTHROPIC_MODEL). Editors that start agents pass
 * their settings this way (Zed's `env` of an agent server; a shell for the CLI). Nothing of it
 * is ever written to disk, its key included: it lives as long as the process.
 */
import type { ProfileRecord } from "./profile-catalog.js";

export interface EnvironmentProfile {
  profile: ProfileRecord;
  /** "" when the environment names no key (local servers often need none). */
  apiKey: string;
}

export const ENV_OPENAI_PROFILE_ID = "env-openai";
export const ENV_ANTHROPIC_PROFILE_ID = "env-anthropic";

const empty = {
  maxOutputTokens: 0,
  inputPricePerMtok: 0,
  outputPricePerMtok: 0,
  cacheReadPricePerMtok: 0,
  cacheWritePricePerMtok: 0,
  firstByteTimeoutSeconds: 0,
  reasoningEffort: "",
  thinkingBudgetTokens: 0,
  toolCallFormat: "",
  zeroCost: false,
};

export function environmentProfile(env: NodeJS.ProcessEnv): EnvironmentProfile | undefined {
  const value = (name: string) => env[name]?.trim() ?? "";
  if (value("OPENAI_BASE_URL") || value("OPENAI_MODEL")) {
    return {
      profile: {
        ...empty,
        id: ENV_OPENAI_PROFILE_ID,
        name: "OpenAI-compatible (from environment)",
        provider: "openai",
        baseUrl: value("OPENAI_BASE_URL") || "https://api.openai.com/v1",
        model: value("OPENAI_MODEL") || "gpt-4o-mini",
        contextWindow: Number(value("OPENAI_CONTEXT_WINDOW")) || 128_000,
      },
      apiKey: value("OPENAI_API_KEY"),
    };
  }
  if (value("ANTHROPIC_API_KEY")) {
    return {
      profile: {
        ...empty,
        id: ENV_ANTHROPIC_PROFILE_ID,
        name: "Anthropic (from environment)",
        provider: "anthropic",
        baseUrl: value("ANTHROPIC_BASE_URL") || "https://api.anthropic.com",
        model: value("ANTHROPIC_MODEL") || "claude-sonnet-4-5",
        contextWindow: 200_000,
        // No prices here: the model ANTHROPIC_MODEL names is priced from the price table
        // (cache reads and writes included), or its cost is unknown.
      },
      apiKey: value("ANTHROPIC_API_KEY"),
    };
  }
  return undefined;
}
