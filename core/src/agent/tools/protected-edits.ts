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
 * - what the repository's git config makes git run or read from the work tree: the hooks folder
 *   `core.hooksPath` names (`.githooks`, husky's `.husky/_` and the `.husky` scripts it runs) and
 *   the files `include.path` / `includeIf.<cond>.path` name (a config file of the work tree).
 * Such an edit is always shown to the person first. "Those paths" are also where they really are:
 * a `.agents/mcp` that links to an ordinary folder of the repository, a hook that links to a
 * script in it, or a `.git` file naming a folder inside the workspace make an edit there one of
 * them too (the loaders and git follow the links).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { isInsideFolder, realpathOrUndefined } from "./real-paths.js";
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
    if (isProtected(resolved.requestedRelative) || isProtected(resolved.relative)) return true;
    return realProtectedLocations(workspaceRoot).some((p) => isInsideFolder(p, resolved.absolute));
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

/**
 * Where the workspace's git folder, hooks and MCP descriptors really are: the real paths of its
 * `.git` (a folder, a link, or a file naming the folder), of `.agents/hooks` and `.agents/mcp`,
 * and of each entry in them (a hook or a descriptor may itself be a link), one level into a
 * hook's `<Event>/` folder.
 */
function realProtectedLocations(workspaceRoot: string): string[] {
  const out: string[] = [];
  const add = (p: string) => {
    const real = realpathOrUndefined(p);
    if (real) out.push(real);
  };
  const dotGit = path.join(workspaceRoot, ".git");
  add(dotGit);
  const gitdir = /^gitdir:\s*(.+)$/m.exec(readSmallFile(dotGit) ?? "")?.[1]?.trim();
  const gitDir = gitdir ? path.resolve(workspaceRoot, gitdir) : dotGit;
  if (gitdir) add(gitDir);
  // What the config makes git run: the real path, or where it would be once created.
  const realRoot = realpathOrUndefined(workspaceRoot) ?? workspaceRoot;
  const addNamed = (p: string) => out.push(realpathOrUndefined(p) ?? p);
  for (const named of gitConfigNamedPaths(gitDir)) {
    if (named.kind === "hooks") {
      const hooks = path.resolve(realRoot, named.value);
      addNamed(hooks);
      // husky: `.husky/_` runs the scripts of `.husky/` itself.
      if (path.basename(hooks) === "_") addNamed(path.dirname(hooks));
    } else {
      addNamed(path.resolve(named.configDir, named.value));
    }
  }
  for (const kind of ["hooks", "mcp"]) {
    const dir = path.join(workspaceRoot, ".agents", kind);
    add(dir);
    for (const entry of entriesOf(dir)) {
      const full = path.join(dir, entry);
      add(full);
      if (kind === "hooks") for (const inner of entriesOf(full)) add(path.join(full, inner));
    }
  }
  return out;
}

function entriesOf(dir: string): string[] {
  try {
    return fs.readdirSync(dir).slice(0, 1000);
  } catch {
    return [];
  }
}

/** A small file's text (a gitfile is one short line); undefined for a folder or anything large. */
function readSmallFile(p: string, maxBytes = 4096): string | undefined {
  try {
    const st = fs.lstatSync(p);
    return st.isFile() && st.size < maxBytes ? fs.readFileSync(p, "utf8") : undefined;
  } catch {
    return undefined;
  }
}

interface NamedPath {
  kind: "hooks" | "include";
  value: string;
  /** The folder of the config file that names it (an include is relative to it). */
  configDir: string;
}

/**
 * `core.hooksPath`, `include.path` and `includeIf.*.path` of the repository's config (and of the
 * common git folder's, for a linked worktree), read as text: no git process runs. Paths in the
 * home folder (`~/`) are left out: the tools never write outside the workspace anyway.
 */
function gitConfigNamedPaths(gitDir: string): NamedPath[] {
  const configs = [path.join(gitDir, "config")];
  const common = readSmallFile(path.join(gitDir, "commondir"))?.trim();
  if (common) configs.push(path.join(path.resolve(gitDir, common), "config"));
  const out: NamedPath[] = [];
  for (const config of configs) {
    let section = "";
    for (const raw of (readSmallFile(config, 256 * 1024) ?? "").split(/\r?\n/)) {
      let line = raw.trim();
      // A section header, possibly followed by an entry on the same line (`[core] hooksPath = x`).
      const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]\s*/.exec(line);
      if (header) {
        section = (header[1] ?? "").toLowerCase();
        line = line.slice(header[0].length);
      }
      const [, rawKey = "", rawValue = ""] = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line) ?? [];
      const key = rawKey.toLowerCase();
      const value = unquote(rawValue);
      if (!value || value.startsWith("~")) continue;
      const configDir = path.dirname(config);
      if (section === "core" && key === "hookspath") out.push({ kind: "hooks", value, configDir });
      if ((section === "include" || section === "includeif") && key === "path")
        out.push({ kind: "include", value, configDir });
    }
  }
  return out;
}

/** A git config value: surrounding quotes and a trailing comment removed. */
function unquote(value: string): string {
  const text = value.replace(/\s+[#;].*$/, "").trim();
  return text.startsWith('"') && text.endsWith('"') && text.length >= 2 ? text.slice(1, -1) : text;
}
