/**
 * The "always" answers of a permission request. "Allow always" turns on the matching switch of
 * the global `autoApprovalSettings` (the approval rules every editor reads), so the next call
 * of that kind runs without asking, here and in every other client. "Reject always" turns that
 * switch off in the same setting and, as Dline stores no deny rules, rejects later requests of
 * the kind in this session without asking (for as long as the session is open here).
 */
import { parseAutoApprovalSettings, type AutoApprovalSettings } from "../agent/approval.js";
import { findTool } from "../agent/tools/registry.js";
import type { ApprovalCategory } from "../agent/tools/types.js";
import type { SettingsDomain } from "../storage/settings-domain.js";

const SETTING = "autoApprovalSettings";
const CATEGORIES: readonly ApprovalCategory[] = ["readFiles", "editFiles", "executeSafeCommands", "executeAllCommands", "useMcp"];

/** What "always" covers, in the words of the permission prompt. */
const ALWAYS_NAMES: Record<ApprovalCategory, string> = {
  readFiles: "reading files",
  editFiles: "editing files",
  executeSafeCommands: "safe commands",
  executeAllCommands: "all commands",
  useMcp: "MCP tools",
};

/**
 * The approval switch of a call of a built-in tool (`detail` is its JSON input); undefined
 * for tools the core does not know here (their "always" cannot be mapped, so it is not offered).
 */
export function approvalCategoryOf(tool: string, detail: string): ApprovalCategory | undefined {
  const definition = findTool(tool);
  if (!definition) return undefined;
  let input: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(detail) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) input = parsed as Record<string, unknown>;
  } catch {
    // unparseable input: the tool's default category
  }
  try {
    return definition.approvalCategory(input);
  } catch {
    return undefined;
  }
}

export function alwaysName(category: ApprovalCategory): string {
  return ALWAYS_NAMES[category];
}

export class AlwaysAnswers {
  constructor(private readonly settings: SettingsDomain) {}

  /**
   * Allows `category` from now on. When auto-approval was off as a whole, it is turned on with
   * only this switch set, so nothing the person had not allowed becomes allowed with it.
   */
  async allow(category: ApprovalCategory): Promise<void> {
    await this.update((current) => {
      if (current.enabled && current[category]) return undefined; // allowed already (e.g. asked at maxRequests)
      const base: AutoApprovalSettings = current.enabled ? current : { ...current, ...Object.fromEntries(CATEGORIES.map((c) => [c, false])) };
      return { ...base, enabled: true, [category]: true };
    });
  }

  /** Stops auto-approving `category` (executeAllCommands off also stops safe commands passing under it). */
  async reject(category: ApprovalCategory): Promise<void> {
    await this.update((current) => (current[category] ? { ...current, [category]: false } : undefined));
  }

  private async update(change: (current: AutoApprovalSettings) => AutoApprovalSettings | undefined): Promise<void> {
    const { registry, stores } = this.settings;
    await stores.globalSettings.update((snapshot) => {
      const stored = snapshot.settings[SETTING];
      const current = parseAutoApprovalSettings(registry.withDefaults(SETTING, stored ?? {}));
      const next = change(current);
      if (!next) return undefined;
      const value = { ...next };
      registry.validatePatch({ [SETTING]: value }, "global");
      return { ...snapshot.reserved, ...snapshot.settings, [SETTING]: value };
    });
  }
}
