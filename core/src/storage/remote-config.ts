import * as fs from "node:fs";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import { isPlainObject, type SettingsRegistry } from "./settings-registry.js";

/** Environment variable naming the remote configuration file (main.ts sets it from --remote-config). */
export const REMOTE_CONFIG_ENV = "DLINE_REMOTE_CONFIG";

/**
 * Remote configuration: a JSON object `{ "<setting key>": value, ... }` that an organisation
 * provides and that wins over every other source. It is read on each lookup (a small file), so
 * a replaced file takes effect without a restart. Keys that are not declared settings, or
 * values of the wrong type, are ignored with a warning rather than breaking every lookup.
 */
export class RemoteConfig {
  private warned = new Set<string>();

  constructor(
    private readonly file: string | undefined,
    private readonly registry: SettingsRegistry,
    private readonly logger: Logger,
  ) {}

  get(key: string): { found: boolean; value?: unknown } {
    if (!this.file) return { found: false };
    const config = this.load();
    if (!config || !(key in config)) return { found: false };
    try {
      this.registry.validateValue(key, config[key]);
    } catch {
      this.warnOnce(`type:${key}`, "remote configuration value ignored: wrong type", { key });
      return { found: false };
    }
    return { found: true, value: config[key] };
  }

  private load(): Record<string, unknown> | undefined {
    let text: string;
    try {
      text = fs.readFileSync(this.file!, "utf8");
    } catch (err) {
      this.warnOnce("missing", "remote configuration unreadable", {
        file: this.file,
        code: (err as NodeJS.ErrnoException).code,
      });
      return undefined;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!isPlainObject(parsed)) {
      throw new DlineError("failed_precondition", `The remote configuration ${this.file} is not a JSON object.`);
    }
    return parsed;
  }

  private warnOnce(id: string, message: string, fields: Record<string, unknown>): void {
    if (this.warned.has(id)) return;
    this.warned.add(id);
    this.logger.warn(message, fields);
  }
}
