import { DlineError } from "../errors.js";
import type { SettingsRegistry } from "./settings-registry.js";

/** Session overrides: validated values kept in memory for this sidecar's life, never persisted. */
export class SessionOverrides {
  private readonly values = new Map<string, unknown>();

  constructor(private readonly registry: SettingsRegistry) {}

  set(key: string, value: unknown): void {
    if (this.registry.require(key).globalOnly) {
      throw new DlineError(
        "invalid_argument",
        `Setting "${key}" reads only the global setting; it has no session override.`,
      );
    }
    this.registry.validateValue(key, value);
    this.values.set(key, value);
  }

  clear(key: string): void {
    this.registry.require(key);
    this.values.delete(key);
  }

  get(key: string): { found: boolean; value?: unknown } {
    return this.values.has(key) ? { found: true, value: this.values.get(key) } : { found: false };
  }
}
