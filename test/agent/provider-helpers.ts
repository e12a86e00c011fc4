import { AnthropicProvider } from "../../core/src/agent/providers/anthropic.js";
import { OpenAiCompatibleProvider } from "../../core/src/agent/providers/openai.js";
import type {
  ModelProvider,
  ModelRequest,
  ModelStreamEvent,
  ProviderConfig,
} from "../../core/src/agent/providers/types.js";
import { lastOf } from "../helpers/items.js";

export const formats = ["anthropic", "openai"] as const;
export type Format = (typeof formats)[number];

export const testKey = "sk-test-4f9a8b7c6d5e4f3a2b1c0d9e";

/** Fast retries so that tests exercise the retry path without waiting seconds. */
export function makeProvider(format: Format, baseUrl: string, overrides: Partial<ProviderConfig> = {}): ModelProvider {
  const config: ProviderConfig = {
    baseUrl,
    model: "test-model",
    apiKey: testKey,
    retry: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 4 },
    idleTimeoutMs: 5_000,
    ...overrides,
  };
  return format === "anthropic" ? new AnthropicProvider(config) : new OpenAiCompatibleProvider(config);
}

export const simpleRequest: ModelRequest = {
  systemPrompt: "You are a test.",
  messages: [{ role: "user", content: "hello" }],
  tools: [
    {
      name: "read_file",
      description: "Read a file",
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  ],
};

export async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

export function textOf(events: ModelStreamEvent[]): string {
  return events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
}

export function last(events: ModelStreamEvent[]): ModelStreamEvent {
  return lastOf(events, "stream event");
}
