import { AnthropicProvider } from "./anthropic.js";
import { OpenAiCompatibleProvider } from "./openai.js";
import { DlineError } from "../../errors.js";
import type { ModelProvider, ProviderConfig } from "./types.js";

/** Builds the provider a profile names (`"anthropic"` or `"openai"` for any compatible endpoint). */
export function createModelProvider(kind: string, config: ProviderConfig): ModelProvider {
  if (kind === "anthropic") return new AnthropicProvider(config);
  if (kind === "openai") return new OpenAiCompatibleProvider(config);
  throw new DlineError("invalid_argument", `Unknown model provider "${kind}": use "anthropic" or "openai".`);
}
