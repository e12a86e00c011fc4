import * as fs from "node:fs";
import * as path from "node:path";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import type { FileLocks } from "./file-lock.js";
import type { InstanceLayout } from "./instance-layout.js";
import { assertSafeId } from "./instance-layout.js";
import { isPlainObject } from "./settings-registry.js";
import {
  loadJsonRecordOrKeepAside,
  readJsonRecord,
  repairMode,
  writeJsonAtomic,
  type JsonRecord,
} from "./json-file.js";

const SECRET_MODE = 0o600;
const SECRET_DIR_MODE = 0o700;
/** Secret names become JSON keys: plain characters only, and never `__proto__`-like keys. */
const NAME_PATTERN = /^(?!__)[A-Za-z0-9_.-]{1,64}$/;

/** Secret names with a file of their own; every other profile secret is a provider secret. */
export const API_KEY = "api_key";
export const OAUTH = "oauth";

/** Where one secret lives: a file and the path of keys inside it. */
interface SecretSlot {
  file: string;
  keys: string[];
}

/**
 * Owner of every secret file: `secrets.json` (typed secrets that belong to no profile),
 * `secrets/api_keys.json` and `secrets/provider_secrets.json` keyed by profile id, and one
 * OAuth file per profile. Files are 0600 in a 0700 folder, repaired when found wider.
 *
 * Values never leave this module except through `get` (for the code that calls a provider):
 * no log line, error message or listing carries one. Errors name files and secret names only.
 */
export class SecretsStore {
  constructor(
    private readonly layout: InstanceLayout,
    private readonly locks: FileLocks,
    private readonly logger: Logger,
  ) {}

  private slot(profileId: string, name: string): SecretSlot {
    if (!NAME_PATTERN.test(name))
      throw new DlineError(
        "invalid_argument",
        "A secret name must be 1-64 letters, digits, '_', '.' or '-', not starting with '__'.",
      );
    if (profileId === "") return { file: this.layout.secretsJson, keys: [name] };
    assertSafeId("profile id", profileId);
    if (name === API_KEY) return { file: this.layout.apiKeysJson, keys: [profileId] };
    if (name === OAUTH) return { file: this.layout.oauthCredentialsJson(profileId), keys: ["credentials"] };
    return { file: this.layout.providerSecretsJson, keys: [profileId, name] };
  }

  async set(profileId: string, name: string, value: string): Promise<void> {
    if (value === "") throw new DlineError("invalid_argument", "A secret value must not be empty; use ClearSecret.");
    const { file, keys } = this.slot(profileId, name);
    await this.mutate(file, (data) => setPath(data, keys, value));
    this.logger.info("secret set", { profileId, name });
  }

  async clear(profileId: string, name: string): Promise<void> {
    const { file, keys } = this.slot(profileId, name);
    await this.mutate(file, (data) => deletePath(data, keys));
    this.logger.info("secret cleared", { profileId, name });
  }

  async get(profileId: string, name: string): Promise<string | undefined> {
    const { file, keys } = this.slot(profileId, name);
    const value = getPath(await this.read(file), keys);
    return typeof value === "string" ? value : undefined;
  }

  /** Names of the secrets set for each profile (never their values); shared files read once. */
  async namesByProfile(profileIds: string[]): Promise<Map<string, string[]>> {
    const apiKeys = await this.read(this.layout.apiKeysJson);
    const providerSecrets = await this.read(this.layout.providerSecretsJson);
    const result = new Map<string, string[]>();
    for (const profileId of profileIds) {
      assertSafeId("profile id", profileId);
      const names: string[] = [];
      if (typeof apiKeys[profileId] === "string") names.push(API_KEY);
      const provider = providerSecrets[profileId];
      if (isPlainObject(provider)) names.push(...Object.keys(provider).filter((k) => typeof provider[k] === "string"));
      if (fs.existsSync(this.layout.oauthCredentialsJson(profileId))) {
        if (typeof (await this.read(this.layout.oauthCredentialsJson(profileId))).credentials === "string")
          names.push(OAUTH);
      }
      result.set(profileId, names.sort());
    }
    return result;
  }

  /**
   * Every stored secret value, for one purpose only: redacting them from what tools print
   * (agent/tools/tool-guard.ts). Never logged, never sent anywhere.
   */
  async values(): Promise<string[]> {
    const out: string[] = [];
    const collect = (node: unknown): void => {
      if (typeof node === "string") out.push(node);
      else if (isPlainObject(node)) for (const v of Object.values(node)) collect(v);
    };
    collect(await this.read(this.layout.secretsJson));
    collect(await this.read(this.layout.apiKeysJson));
    collect(await this.read(this.layout.providerSecretsJson));
    const oauth = await fs.promises.readdir(this.layout.secretsDir).catch(() => [] as string[]);
    for (const name of oauth) {
      const file = path.join(this.layout.secretsDir, name);
      if (name.endsWith(".json") && file !== this.layout.apiKeysJson && file !== this.layout.providerSecretsJson)
        collect(await this.read(file));
    }
    return out;
  }

  /** Typed secrets of `secrets.json` (no profile), names only. */
  async globalNames(): Promise<string[]> {
    return Object.keys(await this.read(this.layout.secretsJson)).sort();
  }

  /** Removes every secret of a deleted profile. */
  async deleteProfile(profileId: string): Promise<void> {
    assertSafeId("profile id", profileId);
    await this.mutate(this.layout.apiKeysJson, (data) => deletePath(data, [profileId]));
    await this.mutate(this.layout.providerSecretsJson, (data) => deletePath(data, [profileId]));
    await fs.promises.rm(this.layout.oauthCredentialsJson(profileId), { force: true });
  }

  /** Sets typed secrets that are not yet present (host import: values already in files win). */
  async importGlobal(secrets: Record<string, string>): Promise<{ imported: number; kept: number }> {
    let imported = 0;
    let kept = 0;
    await this.mutate(this.layout.secretsJson, (data) => {
      for (const [name, value] of Object.entries(secrets)) {
        if (!NAME_PATTERN.test(name) || value === "") continue;
        if (name in data) kept++;
        else {
          data[name] = value;
          imported++;
        }
      }
      return imported > 0;
    });
    return { imported, kept };
  }

  private async read(file: string): Promise<JsonRecord> {
    await this.repair(file);
    // Writes are atomic renames, so a plain read sees a whole file; only a malformed one
    // needs the lock (to keep it aside exactly once).
    const read = await readJsonRecord(file);
    if (read.kind === "ok") return read.value;
    if (read.kind === "missing") return {};
    return (await this.locks.withLock(file, () => this.load(file))) ?? {};
  }

  private async mutate(file: string, change: (data: JsonRecord) => boolean): Promise<void> {
    await this.locks.withLock(file, async () => {
      await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: SECRET_DIR_MODE });
      await this.repair(file);
      const data = (await this.load(file)) ?? {};
      if (change(data)) await writeJsonAtomic(file, data, { mode: SECRET_MODE });
    });
  }

  private async load(file: string): Promise<JsonRecord | undefined> {
    try {
      return await loadJsonRecordOrKeepAside(file, "A secrets file");
    } catch (err) {
      if (err instanceof DlineError) this.logger.error("malformed secrets file kept aside", { file });
      throw err;
    }
  }

  private async repair(file: string): Promise<void> {
    if (path.dirname(file) === this.layout.secretsDir) await repairMode(this.layout.secretsDir, SECRET_DIR_MODE);
    await repairMode(file, SECRET_MODE);
  }
}

function getPath(data: JsonRecord, keys: string[]): unknown {
  let node: unknown = data;
  for (const key of keys) node = isPlainObject(node) ? node[key] : undefined;
  return node;
}

function setPath(data: JsonRecord, keys: string[], value: string): boolean {
  const last = keys.at(-1);
  if (last === undefined) return false;
  let node = data;
  for (const key of keys.slice(0, -1)) {
    if (!isPlainObject(node[key])) node[key] = {};
    node = node[key] as JsonRecord;
  }
  node[last] = value;
  return true;
}

function deletePath(data: JsonRecord, keys: string[]): boolean {
  const parent = getPath(data, keys.slice(0, -1));
  const last = keys.at(-1);
  if (last === undefined || !isPlainObject(parent) || !(last in parent)) return false;
  delete parent[last];
  if (keys.length > 1 && Object.keys(parent).length === 0) delete data[keys[0]!];
  return true;
}
