/**
 * Edits no auto-approval setting may allow, because what they write runs later without anyone
 * being asked:
 * - a repository's `.git` folder (its config, hooks, info/attributes and the rest): git runs what
 *   `.git/config` and hooks name (core.fsmonitor, core.pager, hooks, filter drivers) the next
 *   time the person or a tool runs git there;
 * - a workspace's `.agents/hooks` and `.agents/mcp`: once the person trusted the workspace, its
 *   hooks run at the task's events and its MCP servers start, as they are on disk at that turn.
 *   Trust covers what the person let in, not what a model writes there afterwards (with edits
 *   auto-approved, a model could otherwise run any command by writing a hook or a server).
 * Such an edit is always shown to the person first.
 */
import { resolveWorkspacePath } from "./workspace-path.js";
import type { ToolDefinition } from "./types.js";

/** Whether this call edits one of those paths (as requested, or where a symlink leads). */
export async function editsProtectedPath(
  tool: ToolDefinition,
  input: Record<string, unknown>,
  workspaceRoot: string,
): Promise<boolean> {
  if (tool.approvalCategory(input) !== "editFiles" || typeof input.path !== "string") return false;
  if (isProtected(input.path)) return true;
  try {
    const resolved = await resolveWorkspacePath(workspaceRoot, input.path, tool.name);
    return isProtected(resolved.requestedRelative) || isProtected(resolved.relative);
  } catch {
    return false; // the tool refuses the path itself
  }
}

/**
 * A path with a `.git` component, or inside `.agents/hooks` or `.agents/mcp` at any depth (a
 * folder of the repository may be another window's workspace). Case-insensitive: macOS and
 * Windows file systems are.
 */
function isProtected(p: string): boolean {
  const parts = p.split(/[\\/]+/).map((part) => part.toLowerCase());
  return parts.some(
    (part, i) => part === ".git" || (part === ".agents" && (parts[i + 1] === "hooks" || parts[i + 1] === "mcp")),
  );
}
