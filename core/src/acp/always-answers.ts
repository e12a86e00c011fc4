/**
 * The "always" answers of a permission request name an approval kind (the switch of
 * `autoApprovalSettings` that covers the call). They apply to the session's task only (see
 * SessionApprovals and the runtime's approval overlay): the global setting, which every editor
 * and project reads, is never changed from a permission prompt.
 */
import { findTool, type ApprovalCategory } from "../agent/index.js";

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
