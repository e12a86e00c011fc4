/**
 * Resolves a path a model gave to a place inside the workspace, or refuses it: `..` escapes,
 * absolute paths elsewhere, and symlinks whose target lies outside (checked on the real path of
 * the deepest existing ancestor, so a new file under a symlinked folder is caught too).
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { isProtectedPath, type ToolGuard } from "./tool-guard.js";
import { ToolError, type ToolContext } from "./types.js";

export interface WorkspacePath {
  /** The real location: symlinks inside the workspace are followed (to the file they point at). */
  absolute: string;
  /** Forward-slash path of `absolute` relative to the workspace root; "." for the root. */
  relative: string;
  /** The path as requested, relative to the root (differs from `relative` through a symlink). */
  requestedRelative: string;
}

export async function resolveWorkspacePath(
  workspaceRoot: string,
  requested: string,
  tool: string,
  guard?: ToolGuard,
): Promise<WorkspacePath> {
  if (requested.includes("\0")) throw new ToolError(`${tool}: the path contains a NUL byte.`);
  const root = path.resolve(workspaceRoot);
  const realRoot = await fs.realpath(root);
  const candidate = path.resolve(root, requested);
  const relative = insideOrUndefined(root, candidate) ?? insideOrUndefined(realRoot, candidate);
  if (relative === undefined) {
    throw new ToolError(
      `${tool}: "${requested}" is outside the workspace ${root}; only paths inside it are allowed.`,
      "permission_denied",
    );
  }
  const absolute = path.join(realRoot, relative);
  const existing = await realpathOfDeepestExisting(absolute);
  if (insideOrUndefined(realRoot, existing.real) === undefined) {
    throw new ToolError(
      `${tool}: "${requested}" leads outside the workspace through a symbolic link; refused.`,
      "permission_denied",
    );
  }
  // The core's own storage (settings, secrets, tasks, shadow repositories) may lie inside the
  // workspace (a workspace at the home folder): never reachable, whatever the approval.
  if (guard && (isProtectedPath(guard, existing.real) || isProtectedPath(guard, candidate))) {
    throw new ToolError(
      `${tool}: "${requested}" is inside Dline's own storage; tools never read, list or change it.`,
      "permission_denied",
    );
  }
  const realRelative = insideOrUndefined(realRoot, existing.real) ?? "";
  return { absolute: existing.real, relative: toSlashes(realRelative), requestedRelative: toSlashes(relative) };
}

function toSlashes(relative: string): string {
  return relative === "" ? "." : relative.split(path.sep).join("/");
}

/** Resolves and also refuses paths that `.agentignore` blocks, as requested or through a symlink. */
export async function resolveAllowedPath(
  ctx: Pick<ToolContext, "workspaceRoot" | "guard" | "agentIgnore">,
  requested: string,
  tool: string,
  isDirectory = false,
): Promise<WorkspacePath> {
  const resolved = await resolveWorkspacePath(ctx.workspaceRoot, requested, tool, ctx.guard);
  for (const rel of new Set([resolved.requestedRelative, resolved.relative])) {
    if (rel !== "." && ctx.agentIgnore.ignores(rel, isDirectory)) {
      throw new ToolError(
        `${tool}: access to "${rel}" is blocked by the workspace's ignore file (.agentignore or .clineignore).`,
        "permission_denied",
      );
    }
  }
  return resolved;
}

function insideOrUndefined(root: string, target: string): string | undefined {
  const rel = path.relative(root, target);
  if (rel === "") return "";
  if (rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return undefined;
  return rel;
}

async function realpathOfDeepestExisting(absolute: string): Promise<{ real: string }> {
  let current = absolute;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = await fs.realpath(current);
      return { real: path.join(real, ...rest) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
      // A dangling symlink: follow its target lexically so that a link to outside is refused.
      try {
        const target = await fs.readlink(current);
        current = path.resolve(path.dirname(current), target);
        continue;
      } catch {
        // not a symlink: go up one level
      }
      const parent = path.dirname(current);
      if (parent === current) return { real: absolute };
      rest.unshift(path.basename(current));
      current = parent;
    }
  }
}
