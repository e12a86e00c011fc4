/**
 * Whether a tool call runs without asking, from the global `autoApprovalSettings` only (a
 * task's snapshot cannot widen the current permissions). Pure: the runtime keeps the count of
 * consecutive auto-approved requests and resets it when the person answers an ask.
 */
import type { ApprovalCategory } from "./tools/types.js";

export interface AutoApprovalSettings {
  enabled: boolean;
  readFiles: boolean;
  editFiles: boolean;
  executeSafeCommands: boolean;
  executeAllCommands: boolean;
  useMcp: boolean;
  /** Bound on consecutive auto-approved requests; 0 or less = no bound. */
  maxRequests: number;
}

export const defaultAutoApprovalSettings: AutoApprovalSettings = {
  enabled: false,
  readFiles: false,
  editFiles: false,
  executeSafeCommands: false,
  executeAllCommands: false,
  useMcp: false,
  maxRequests: 20,
};

export type ApprovalDecision =
  | { kind: "not_needed" } // questions: the tool itself is the ask
  | { kind: "auto_approved" } // run now; counts toward maxRequests
  | { kind: "ask"; reason: "disabled" | "category_off" | "max_requests_reached" | "always_ask" };

/**
 * `alwaysAsk`: the call is one no setting may approve on the person's behalf (an edit of a
 * repository's `.git` internals, a workspace's hooks or MCP servers: see protected-edits.ts).
 */
export function decideApproval(
  category: ApprovalCategory | undefined,
  settings: AutoApprovalSettings,
  consecutiveAutoApproved: number,
  options: { alwaysAsk?: boolean } = {},
): ApprovalDecision {
  if (category === undefined) return { kind: "not_needed" };
  if (options.alwaysAsk) return { kind: "ask", reason: "always_ask" };
  if (!settings.enabled) return { kind: "ask", reason: "disabled" };
  if (!categoryAllowed(category, settings)) return { kind: "ask", reason: "category_off" };
  if (settings.maxRequests > 0 && consecutiveAutoApproved >= settings.maxRequests)
    return { kind: "ask", reason: "max_requests_reached" };
  return { kind: "auto_approved" };
}

function categoryAllowed(category: ApprovalCategory, s: AutoApprovalSettings): boolean {
  switch (category) {
    case "readFiles":
      return s.readFiles;
    case "editFiles":
      return s.editFiles;
    // A command the model marked safe runs under either switch; one it marked as needing
    // approval only under executeAllCommands.
    case "executeSafeCommands":
      return s.executeSafeCommands || s.executeAllCommands;
    case "executeAllCommands":
      return s.executeAllCommands;
    case "useMcp":
      return s.useMcp;
  }
}

/**
 * Reads the setting's stored value leniently: missing or mistyped fields take the safe default
 * (off), so a hand-edited settings file can never grant more than it says.
 */
export function parseAutoApprovalSettings(value: unknown): AutoApprovalSettings {
  const v = value && typeof value === "object" ? (value as Record<string, unknown>) : {};
  const flag = (name: keyof AutoApprovalSettings) => v[name] === true;
  const max =
    typeof v.maxRequests === "number" && Number.isFinite(v.maxRequests)
      ? Math.floor(v.maxRequests)
      : defaultAutoApprovalSettings.maxRequests;
  return {
    enabled: flag("enabled"),
    readFiles: flag("readFiles"),
    editFiles: flag("editFiles"),
    executeSafeCommands: flag("executeSafeCommands"),
    executeAllCommands: flag("executeAllCommands"),
    useMcp: flag("useMcp"),
    maxRequests: max,
  };
}

/** Approval kinds a person answered "always" for in one session (an ACP session): they apply to its task only. */
export interface ApprovalOverlay {
  readonly allowed: ReadonlySet<ApprovalCategory>;
  readonly rejected: ReadonlySet<ApprovalCategory>;
}

const CATEGORIES: readonly ApprovalCategory[] = [
  "readFiles",
  "editFiles",
  "executeSafeCommands",
  "executeAllCommands",
  "useMcp",
];

/**
 * The settings one task decides with: the global ones, plus the kinds its session allowed
 * always, minus those it rejected always (they are asked, and the session answers). When
 * auto-approval is off as a whole, only the session's kinds are on.
 */
export function withOverlay(
  settings: AutoApprovalSettings,
  overlay: ApprovalOverlay | undefined,
): AutoApprovalSettings {
  if (!overlay || (overlay.allowed.size === 0 && overlay.rejected.size === 0)) return settings;
  const next: AutoApprovalSettings = settings.enabled
    ? { ...settings }
    : { ...settings, ...Object.fromEntries(CATEGORIES.map((c) => [c, false])) };
  next.enabled = true;
  for (const c of overlay.allowed) next[c] = true;
  for (const c of overlay.rejected) next[c] = false;
  return next;
}
