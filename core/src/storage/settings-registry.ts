import { DlineError } from "../errors.js";

/** The scopes a setting may be written in. */
export type SettingScope = "global" | "workspace" | "task";

export type SettingType =
  | { kind: "boolean" }
  | { kind: "integer"; min?: number; max?: number }
  | { kind: "string"; values?: readonly string[] }
  | { kind: "object"; fields: Record<string, SettingType>; partial: true }
  | { kind: "toggles" };

export interface SettingDeclaration {
  key: string;
  type: SettingType;
  default: unknown;
  /** Scopes that may hold the setting; the order of resolution is fixed (setting-resolver.ts). */
  scopes: readonly SettingScope[];
  /**
   * Reads only the global setting (and remote configuration): a task snapshot or a session
   * must not widen what is auto-approved (docs/storage.md, "Setting resolution").
   */
  globalOnly?: boolean;
  description: string;
}

const ALL_SCOPES: readonly SettingScope[] = ["global", "workspace", "task"];
const MiB = 1024 * 1024;

/**
 * Every setting, declared once: key, type, default. Keys and defaults are part of the protocol
 * (clients send patches by key), so keys are never renamed.
 */
export const SETTINGS: readonly SettingDeclaration[] = [
  {
    key: "autoApprovalSettings",
    type: {
      kind: "object",
      partial: true,
      fields: {
        enabled: { kind: "boolean" },
        readFiles: { kind: "boolean" },
        editFiles: { kind: "boolean" },
        executeSafeCommands: { kind: "boolean" },
        executeAllCommands: { kind: "boolean" },
        useMcp: { kind: "boolean" },
        maxRequests: { kind: "integer", min: 1, max: 10_000 },
      },
    },
    default: {
      enabled: false,
      readFiles: false,
      editFiles: false,
      executeSafeCommands: false,
      executeAllCommands: false,
      useMcp: false,
      maxRequests: 20,
    },
    scopes: ["global"],
    globalOnly: true,
    description: "What the agent may do without asking; maxRequests bounds consecutive auto-approvals.",
  },
  {
    key: "checkpointsEnabled",
    type: { kind: "boolean" },
    default: true,
    scopes: ALL_SCOPES,
    description: "Save shadow-git checkpoints.",
  },
  {
    key: "checkpointMaxFileBytes",
    type: { kind: "integer", min: 0 },
    default: 5 * MiB,
    scopes: ALL_SCOPES,
    description: "Files larger than this are not captured by checkpoints.",
  },
  {
    key: "checkpointRepoBudgetBytes",
    type: { kind: "integer", min: 0 },
    default: 2 * 1024 * MiB,
    scopes: ["global", "workspace"],
    description: "Size budget of one workspace's shadow repository.",
  },
  {
    key: "defaultProfileId",
    type: { kind: "string" },
    default: "",
    scopes: ALL_SCOPES,
    description: "Profile used for new tasks.",
  },
  {
    key: "commandTimeoutSeconds",
    type: { kind: "integer", min: 1, max: 24 * 3600 },
    default: 600,
    scopes: ALL_SCOPES,
    description: "A command still running after this long is stopped.",
  },
  {
    key: "commandLogBudgetBytes",
    type: { kind: "integer", min: 0 },
    default: 200 * MiB,
    scopes: ["global", "workspace"],
    description: "Per-task budget of tmp/command-logs; the oldest logs go first.",
  },
  {
    key: "mode",
    type: { kind: "string", values: ["act", "plan"] },
    default: "act",
    scopes: ALL_SCOPES,
    description: "Plan or act mode.",
  },
  {
    key: "maxConsecutiveMistakes",
    type: { kind: "integer", min: 1, max: 100 },
    default: 3,
    scopes: ALL_SCOPES,
    description: "Tool errors in a row before the task asks the user.",
  },
  {
    key: "terminalOutputLineLimit",
    type: { kind: "integer", min: 1 },
    default: 500,
    scopes: ALL_SCOPES,
    description: "Lines of command output given to the model.",
  },
  {
    key: "preferredLanguage",
    type: { kind: "string" },
    default: "English",
    scopes: ALL_SCOPES,
    description: "Language of answers.",
  },
  {
    key: "customInstructions",
    type: { kind: "string" },
    default: "",
    scopes: ALL_SCOPES,
    description: "Appended to the system prompt.",
  },
  {
    key: "hookTimeoutSeconds",
    type: { kind: "integer", min: 1, max: 3600 },
    default: 30,
    scopes: ALL_SCOPES,
    description:
      "A capability hook still running after this long is killed (a PreToolUse hook that times out blocks its tool).",
  },
  {
    key: "workspaceTrusted",
    type: { kind: "boolean" },
    default: false,
    // Only the workspace's own settings file (in the data root, never in the repository) says so.
    scopes: ["workspace"],
    description: "The person trusted this workspace: its .agents/hooks and .agents/mcp servers may run.",
  },
  {
    key: "capabilityToggles",
    type: { kind: "toggles" },
    default: {},
    scopes: ALL_SCOPES,
    description: "Sparse {kind: {resource: enabled}} per scope; see capability-toggles.ts.",
  },
];

export const CAPABILITY_KINDS = ["rules", "workflows", "skills", "subagents", "hooks", "mcp"] as const;
export type CapabilityKind = (typeof CAPABILITY_KINDS)[number];

/** Keys starting with `__` are bookkeeping (revision, migration versions), not settings. */
export function isReservedKey(key: string): boolean {
  return key.startsWith("__");
}

export class SettingsRegistry {
  private readonly byKey: Map<string, SettingDeclaration>;

  constructor(readonly declarations: readonly SettingDeclaration[] = SETTINGS) {
    this.byKey = new Map(declarations.map((d) => [d.key, d]));
  }

  get(key: string): SettingDeclaration | undefined {
    return this.byKey.get(key);
  }

  require(key: string): SettingDeclaration {
    const declaration = this.byKey.get(key);
    if (!declaration) throw new DlineError("invalid_argument", `Unknown setting "${key.slice(0, 100)}".`);
    return declaration;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /**
   * Checks a patch before anything is written: every key declared and allowed in `scope`,
   * every value of the declared type (null removes the key). Throws `invalid_argument` naming
   * the first bad key.
   */
  validatePatch(patch: Record<string, unknown>, scope: SettingScope): void {
    for (const [key, value] of Object.entries(patch)) {
      const declaration = this.require(key);
      if (!declaration.scopes.includes(scope)) {
        throw new DlineError("invalid_argument", `Setting "${key}" cannot be set in the ${scope} scope.`);
      }
      if (value === null) continue;
      this.validateValue(key, value);
    }
  }

  validateValue(key: string, value: unknown): void {
    const problem = typeProblem(this.require(key).type, value);
    if (problem) throw new DlineError("invalid_argument", `Setting "${key}": ${problem}.`);
  }

  /** The declared default merged with a stored partial object (objects), or the value itself. */
  withDefaults(key: string, value: unknown): unknown {
    const declaration = this.require(key);
    if (declaration.type.kind === "object" && isPlainObject(value)) {
      return { ...(declaration.default as Record<string, unknown>), ...value };
    }
    return value;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function typeProblem(type: SettingType, value: unknown, where = ""): string | undefined {
  switch (type.kind) {
    case "boolean":
      return typeof value === "boolean" ? undefined : `${where}expected a boolean`;
    case "integer":
      if (typeof value !== "number" || !Number.isInteger(value)) return `${where}expected an integer`;
      if (type.min !== undefined && value < type.min) return `${where}must be at least ${type.min}`;
      if (type.max !== undefined && value > type.max) return `${where}must be at most ${type.max}`;
      return undefined;
    case "string":
      if (typeof value !== "string") return `${where}expected a string`;
      if (type.values && !type.values.includes(value)) return `${where}expected one of ${type.values.join(", ")}`;
      return undefined;
    case "object": {
      if (!isPlainObject(value)) return `${where}expected an object`;
      for (const [field, fieldValue] of Object.entries(value)) {
        const fieldType = type.fields[field];
        if (!fieldType) return `unknown field "${where}${field}"`;
        const problem = typeProblem(fieldType, fieldValue, `${where}${field}: `);
        if (problem) return problem;
      }
      return undefined;
    }
    case "toggles": {
      if (!isPlainObject(value)) return `${where}expected an object of kinds`;
      for (const [kind, resources] of Object.entries(value)) {
        if (!(CAPABILITY_KINDS as readonly string[]).includes(kind)) return `unknown capability kind "${kind}"`;
        if (!isPlainObject(resources)) return `${kind}: expected an object of resources`;
        for (const [resource, enabled] of Object.entries(resources)) {
          if (typeof enabled !== "boolean") return `${kind}.${resource}: expected a boolean`;
        }
      }
      return undefined;
    }
  }
}
