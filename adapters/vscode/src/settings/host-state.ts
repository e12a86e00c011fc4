import type { JsonObject, JsonValue } from "./settings-mapping.js";

/**
 * Secret names the extension's earlier versions kept in `ExtensionContext.secrets` (VS Code
 * cannot list secrets, so they are read by name).
 */
export const LEGACY_SECRET_KEYS: readonly string[] = [
  "apiKey",
  "anthropicApiKey",
  "openAiApiKey",
  "openAiNativeApiKey",
  "openRouterApiKey",
  "geminiApiKey",
  "deepSeekApiKey",
  "mistralApiKey",
  "xaiApiKey",
  "requestyApiKey",
  "togetherApiKey",
  "liteLlmApiKey",
  "awsAccessKey",
  "awsSecretKey",
  "awsSessionToken",
  "clineAccountId",
];

/**
 * Turns host state (key -> value, as ExtensionContext returns it) into the JSON object
 * ImportHostState carries: values that JSON cannot carry, and the reserved `__` keys (the
 * core's migration markers), are left out.
 */
export function toImportableState(entries: Iterable<[string, unknown]>): JsonObject {
  const state: JsonObject = {};
  for (const [key, value] of entries) {
    if (key.startsWith("__") || value === undefined) continue;
    const json = toJson(value);
    if (json !== undefined) state[key] = json;
  }
  return state;
}

function toJson(value: unknown): JsonValue | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
  } catch {
    return undefined; // cycles, bigint: not state a file can hold
  }
}
