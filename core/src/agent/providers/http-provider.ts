import { inspect } from "node:util";
import { makeErrorContext } from "./http-errors.js";
import { assertHttpBaseUrl } from "./stream-runner.js";
import type { ModelProvider, ModelRequest, ModelStreamEvent, ProviderConfig } from "./types.js";

/**
 * What both wire formats share: a checked http(s) base URL, and a provider that never shows its
 * key when logged or inspected. Subclasses build their request and parse their stream.
 */
export abstract class HttpModelProvider implements ModelProvider {
  abstract readonly id: ModelProvider["id"];

  constructor(protected readonly config: ProviderConfig) {
    assertHttpBaseUrl(config.baseUrl);
  }

  get model(): string {
    return this.config.model;
  }

  /** What logging or inspecting a provider shows: never the key. */
  toJSON(): Record<string, string> {
    return { id: this.id, model: this.config.model, baseUrl: makeErrorContext("", this.config).baseUrl };
  }

  [inspect.custom](): string {
    // Not the class name: the sidecar's bundle is minified without keeping names.
    return `ModelProvider ${JSON.stringify(this.toJSON())}`;
  }

  abstract stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent>;
}
