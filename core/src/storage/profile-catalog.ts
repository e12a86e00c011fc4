import { randomUUID } from "node:crypto";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import type { FileLocks } from "./file-lock.js";
import { assertSafeId } from "./instance-layout.js";
import { isPlainObject } from "./settings-registry.js";
import { keepAside, loadJsonRecordOrKeepAside, readJsonRecord, writeJsonAtomic, type JsonRecord } from "./json-file.js";

export const PROVIDERS = ["anthropic", "openai"] as const;
export type ProviderKind = (typeof PROVIDERS)[number];

/** One API profile as stored in `settings/api_profiles.json` (no secrets: those are in secrets/). */
export interface ProfileRecord {
  id: string;
  name: string;
  provider: ProviderKind;
  baseUrl: string;
  model: string;
  contextWindow: number;
  maxOutputTokens: number;
  inputPricePerMtok: number;
  outputPricePerMtok: number;
  cacheReadPricePerMtok: number;
  cacheWritePricePerMtok: number;
  /** Seconds without a byte (before the first one, and between) before a request is abandoned; 0 = 60 s. */
  firstByteTimeoutSeconds: number;
  /** OpenAI-style `reasoning_effort` ("" = not sent). */
  reasoningEffort: string;
  /** Anthropic extended thinking budget (0 = off). */
  thinkingBudgetTokens: number;
  /** "" / "native": native tool calling (text fallback when the server rejects tools); "xml": tools in text. */
  toolCallFormat: string;
  /** The model costs nothing: $0 rather than unknown when no price is set. */
  zeroCost: boolean;
}

export const TOOL_CALL_FORMATS = ["", "native", "xml"] as const;
export const REASONING_EFFORTS = ["", "minimal", "low", "medium", "high"] as const;

const NUMBER_FIELDS = [
  "contextWindow",
  "maxOutputTokens",
  "inputPricePerMtok",
  "outputPricePerMtok",
  "cacheReadPricePerMtok",
  "cacheWritePricePerMtok",
  "firstByteTimeoutSeconds",
  "thinkingBudgetTokens",
] as const;

/** Checks a profile from a client; throws invalid_argument naming the field. */
export function validateProfile(profile: ProfileRecord): void {
  if (profile.id) assertSafeId("profile id", profile.id);
  if (!profile.name.trim()) throw new DlineError("invalid_argument", 'Profile field "name" must not be empty.');
  if (!(PROVIDERS as readonly string[]).includes(profile.provider)) {
    throw new DlineError(
      "invalid_argument",
      `Profile field "provider" must be "anthropic" or "openai", not "${String(profile.provider).slice(0, 40)}".`,
    );
  }
  if (profile.baseUrl) {
    try {
      const url = new URL(profile.baseUrl);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("scheme");
    } catch {
      throw new DlineError("invalid_argument", 'Profile field "base_url" must be an http(s) URL.');
    }
  }
  for (const field of NUMBER_FIELDS) {
    const value = profile[field];
    if (!Number.isFinite(value) || value < 0)
      throw new DlineError("invalid_argument", `Profile field "${field}" must be a number >= 0.`);
  }
  if (!(TOOL_CALL_FORMATS as readonly string[]).includes(profile.toolCallFormat)) {
    throw new DlineError(
      "invalid_argument",
      `Profile field "tool_call_format" must be "native" or "xml", not "${profile.toolCallFormat.slice(0, 40)}".`,
    );
  }
  if (!(REASONING_EFFORTS as readonly string[]).includes(profile.reasoningEffort)) {
    throw new DlineError(
      "invalid_argument",
      `Profile field "reasoning_effort" must be one of minimal, low, medium, high, not "${profile.reasoningEffort.slice(0, 40)}".`,
    );
  }
  if (profile.thinkingBudgetTokens > 0 && profile.thinkingBudgetTokens < 1024) {
    throw new DlineError(
      "invalid_argument",
      'Profile field "thinking_budget_tokens" must be 0 (off) or at least 1024.',
    );
  }
}

function fromStored(value: unknown): ProfileRecord | undefined {
  if (!isPlainObject(value) || typeof value.id !== "string") return undefined;
  const str = (k: string) => (typeof value[k] === "string" ? value[k] : "");
  const num = (k: string) => (typeof value[k] === "number" ? value[k] : 0);
  return {
    id: value.id,
    name: str("name"),
    provider: (PROVIDERS as readonly string[]).includes(str("provider")) ? (str("provider") as ProviderKind) : "openai",
    baseUrl: str("baseUrl"),
    model: str("model"),
    contextWindow: num("contextWindow"),
    maxOutputTokens: num("maxOutputTokens"),
    inputPricePerMtok: num("inputPricePerMtok"),
    outputPricePerMtok: num("outputPricePerMtok"),
    cacheReadPricePerMtok: num("cacheReadPricePerMtok"),
    cacheWritePricePerMtok: num("cacheWritePricePerMtok"),
    firstByteTimeoutSeconds: num("firstByteTimeoutSeconds"),
    reasoningEffort: str("reasoningEffort"),
    thinkingBudgetTokens: num("thinkingBudgetTokens"),
    toolCallFormat: str("toolCallFormat"),
    zeroCost: value.zeroCost === true,
  };
}

/**
 * Owner of the profile catalog `settings/api_profiles.json`: `{ "__revision": n, "profiles":
 * [...] }`. Every change merges one profile, keyed by its stable id, into the latest version
 * on disk inside the cross-process lock, so concurrent windows never drop each other's edits.
 */
export class ProfileCatalogRepository {
  constructor(
    readonly file: string,
    private readonly locks: FileLocks,
    private readonly logger: Logger,
  ) {}

  async list(): Promise<ProfileRecord[]> {
    const read = await readJsonRecord(this.file);
    if (read.kind === "missing") return [];
    const healthy = read.kind === "ok" && (read.value.profiles === undefined || Array.isArray(read.value.profiles));
    const record = healthy && read.kind === "ok" ? read.value : await this.locks.withLock(this.file, () => this.load());
    return profilesOf(record);
  }

  async get(id: string): Promise<ProfileRecord | undefined> {
    return (await this.list()).find((p) => p.id === id);
  }

  /** Inserts or replaces by id (a new id is generated when empty); returns the stored profile. */
  async upsert(profile: ProfileRecord): Promise<ProfileRecord> {
    validateProfile(profile);
    const stored: ProfileRecord = { ...profile, id: profile.id || randomUUID() };
    await this.mutate((profiles) => {
      const index = profiles.findIndex((p) => p.id === stored.id);
      if (index >= 0) profiles[index] = stored;
      else profiles.push(stored);
      return true;
    });
    return stored;
  }

  async delete(id: string): Promise<void> {
    assertSafeId("profile id", id);
    let found = false;
    await this.mutate((profiles) => {
      const index = profiles.findIndex((p) => p.id === id);
      found = index >= 0;
      if (found) profiles.splice(index, 1);
      return found;
    });
    if (!found) throw new DlineError("not_found", `No profile with id "${id}".`);
  }

  private async mutate(change: (profiles: ProfileRecord[]) => boolean): Promise<void> {
    await this.locks.withLock(this.file, async () => {
      const record = await this.load();
      const profiles = profilesOf(record);
      if (!change(profiles)) return;
      const revision = typeof record?.__revision === "number" ? record.__revision + 1 : 1;
      await writeJsonAtomic(this.file, { ...record, __revision: revision, profiles });
    });
  }

  private async load(): Promise<JsonRecord | undefined> {
    try {
      const record = await loadJsonRecordOrKeepAside(this.file, "The profile catalog");
      // Valid JSON of the wrong shape would be emptied by the next write: keep it aside too.
      if (record && record.profiles !== undefined && !Array.isArray(record.profiles)) {
        const error = await keepAside(this.file, "The profile catalog");
        if (error) throw error;
        return undefined;
      }
      return record;
    } catch (err) {
      if (err instanceof DlineError) this.logger.error("malformed profile catalog kept aside", { file: this.file });
      throw err;
    }
  }
}

function profilesOf(record: JsonRecord | undefined): ProfileRecord[] {
  const list = Array.isArray(record?.profiles) ? record.profiles : [];
  return list.map(fromStored).filter((p): p is ProfileRecord => p !== undefined);
}
