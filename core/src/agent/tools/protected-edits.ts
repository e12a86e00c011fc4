/**
 * Edits no auto-approval setting may allow: writes into a repository's `.git` folder (its
 * config, hooks, info/attributes and the rest). git runs what `.git/config` and hooks name
 * (core.fsmonitor, core.pager, hooks, filter drivers) the next time the person or a tool runs
 * git there, so such an edit is always shown to the person first.
 */
import { resolveWorkspacePath } from "./workspace-path.js";
import type { ToolDefinition } from "./types.js";

/** Whether this call edits something inside a `.git` folder (as requested, or where a symlink leads). */
export async function editsGitInternals(
  tool: ToolDefinition,
  input: Record<string, unknown>,
  workspaceRoot: string,
): Promise<boolean> {
  if (tool.approvalCategory(input) !== "editFiles" || typeof input.path !== "string") return false;
  if (inGitFolder(input.path)) return true;
  try {
    const resolved = await resolveWorkspacePath(workspaceRoot, input.path, tool.name);
    return inGitFolder(resolved.requestedRelative) || inGitFolder(resolved.relative);
  } catch {
    return false; // the tool refuses the path itself
  }
}

/** A path with a `.git` component (case-insensitive: macOS and Windows file systems are). */
function inGitFolder(p: string): boolean {
  return p.split(/[\\/]+/).some((part) => part.toLowerCase() === ".git");
}
