/**
 * How the core's global settings appear as VS Code settings (the core's files are the truth;
 * VS Code's `dline.*` settings mirror them). Pure, so both directions can be tested.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

const AUTO_APPROVAL_FIELDS = [
  "enabled",
  "readFiles",
  "editFiles",
  "executeSafeCommands",
  "executeAllCommands",
  "useMcp",
  "maxRequests",
] as const;

const DEFAULTS = {
  "checkpoints.enabled": true,
  defaultProfile: "",
  "autoApproval.enabled": false,
  "autoApproval.readFiles": false,
  "autoApproval.editFiles": false,
  "autoApproval.executeSafeCommands": false,
  "autoApproval.executeAllCommands": false,
  "autoApproval.useMcp": false,
  "autoApproval.maxRequests": 20,
} satisfies Record<string, JsonValue>;

/** A VS Code key (under `dline.`) of a core setting. */
export type HostKey = keyof typeof DEFAULTS;
export type HostValues = Record<HostKey, JsonValue>;

/** The VS Code keys (under `dline.`) and their defaults, which are the core's defaults. */
export const HOST_DEFAULTS: Readonly<HostValues> = DEFAULTS;
// Object.keys lists the object's own keys: these are its literal keys.
export const HOST_KEYS = Object.keys(HOST_DEFAULTS) as HostKey[];

/** VS Code values (keys under `dline.`) for the core's global settings; unset keys take defaults. */
export function hostValuesFromCore(core: JsonObject): HostValues {
  const values: HostValues = { ...HOST_DEFAULTS };
  if (typeof core.checkpointsEnabled === "boolean") values["checkpoints.enabled"] = core.checkpointsEnabled;
  if (typeof core.defaultProfileId === "string") values.defaultProfile = core.defaultProfileId;
  const auto = core.autoApprovalSettings;
  if (auto && typeof auto === "object" && !Array.isArray(auto)) {
    for (const field of AUTO_APPROVAL_FIELDS) {
      const value = auto[field];
      if (value !== undefined && typeof value === typeof HOST_DEFAULTS[`autoApproval.${field}`])
        values[`autoApproval.${field}`] = value;
    }
  }
  return values;
}

/**
 * The UpdateSettings patch that brings the core in line with values a person changed in VS Code;
 * undefined when they already agree (so mirroring the core into VS Code never echoes back).
 */
export function corePatchFromHost(host: HostValues, core: JsonObject): JsonObject | undefined {
  const current = hostValuesFromCore(core);
  const patch: JsonObject = {};
  if (host["checkpoints.enabled"] !== current["checkpoints.enabled"])
    patch.checkpointsEnabled = host["checkpoints.enabled"];
  if (host.defaultProfile !== current.defaultProfile) patch.defaultProfileId = host.defaultProfile;
  if (AUTO_APPROVAL_FIELDS.some((f) => host[`autoApproval.${f}`] !== current[`autoApproval.${f}`])) {
    patch.autoApprovalSettings = Object.fromEntries(AUTO_APPROVAL_FIELDS.map((f) => [f, host[`autoApproval.${f}`]]));
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}
