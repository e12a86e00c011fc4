/**
 * A compact gitignore-syntax matcher (used for `.agentignore`, and for `.gitignore` files when
 * the workspace is not a git repository). Supports comments, `\` escapes, trailing-space
 * trimming, `!` negation (last matching rule wins), `/` anchoring, trailing `/` for
 * directories only, `*`, `?`, `[...]` and `**`. As in git, a path inside an ignored directory
 * is ignored whatever later rules say about the path itself.
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";

interface Rule {
  base: string; // directory (workspace-relative, "" = root) of the file the rule came from
  regex: RegExp;
  negated: boolean;
  dirOnly: boolean;
}

export class IgnoreMatcher {
  private readonly rules: Rule[] = [];

  /** Adds the rules of one ignore file found in `baseDir` (workspace-relative, "" for the root). */
  add(text: string, baseDir = ""): this {
    for (const rawLine of text.split(/\r?\n/)) {
      const rule = compileRule(rawLine, baseDir.replace(/\\/g, "/").replace(/\/+$/, ""));
      if (rule) this.rules.push(rule);
    }
    return this;
  }

  get isEmpty(): boolean {
    return this.rules.length === 0;
  }

  /** Whether a workspace-relative path (forward slashes) is ignored. */
  ignores(relativePath: string, isDirectory = false): boolean {
    if (this.rules.length === 0) return false;
    const parts = relativePath
      .replace(/\\/g, "/")
      .split("/")
      .filter((p) => p !== "" && p !== ".");
    for (let i = 1; i < parts.length; i++) {
      if (this.matchesSelf(parts.slice(0, i).join("/"), true)) return true;
    }
    return parts.length > 0 && this.matchesSelf(parts.join("/"), isDirectory);
  }

  private matchesSelf(rel: string, isDirectory: boolean): boolean {
    let ignored = false;
    for (const rule of this.rules) {
      if (rule.dirOnly && !isDirectory) continue;
      let candidate = rel;
      if (rule.base) {
        if (!rel.startsWith(`${rule.base}/`)) continue;
        candidate = rel.slice(rule.base.length + 1);
      }
      if (rule.regex.test(candidate)) ignored = !rule.negated;
    }
    return ignored;
  }
}

function compileRule(rawLine: string, base: string): Rule | undefined {
  let line = rawLine;
  if (line.startsWith("#")) return undefined;
  // Trailing spaces are dropped unless escaped with a backslash.
  line = line.replace(/(?<!\\)\s+$/, "");
  if (line === "") return undefined;
  let negated = false;
  if (line.startsWith("!")) {
    negated = true;
    line = line.slice(1);
  } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
    line = line.slice(1);
  }
  let dirOnly = false;
  if (line.endsWith("/") && !line.endsWith("\\/")) {
    dirOnly = true;
    line = line.replace(/\/+$/, "");
  }
  if (line === "") return undefined;
  const anchored = line.includes("/");
  if (line.startsWith("/")) line = line.slice(1);
  const body = globToRegexSource(line);
  return { base, negated, dirOnly, regex: new RegExp(`^${anchored ? "" : "(?:.*/)?"}${body}$`) };
}

/** Converts one gitignore/glob pattern (no leading slash) to a regex source. */
export function globToRegexSource(glob: string): string {
  let out = "";
  let i = 0;
  while (i < glob.length) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      const atStart = i === 0 || glob[i - 1] === "/";
      const atEnd = i + 2 === glob.length || glob[i + 2] === "/";
      if (atStart && atEnd) {
        if (i + 2 === glob.length) {
          out += ".*"; // trailing "/**": everything inside
          i += 2;
        } else {
          out += "(?:.*/)?"; // "**/": zero or more directories
          i += 3;
        }
        continue;
      }
      out += "[^/]*";
      i += 2;
      continue;
    }
    if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "\\" && i + 1 < glob.length) {
      out += escapeRegex(glob[i + 1]!);
      i += 2;
      continue;
    } else if (c === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close === -1) out += "\\[";
      else {
        let cls = glob.slice(i + 1, close);
        if (cls.startsWith("!")) cls = `^${cls.slice(1)}`;
        out += `[${cls.replace(/\\/g, "\\\\")}]`;
        i = close + 1;
        continue;
      }
    } else out += escapeRegex(c);
    i++;
  }
  return out;
}

function escapeRegex(c: string): string {
  return /[.+^${}()|[\]\\/-]/.test(c) ? `\\${c}` : c;
}

/** The workspace files that keep paths away from the agent: ours, and Cline's (same syntax). */
export const AGENT_IGNORE_FILES = [".agentignore", ".clineignore"] as const;

/** Reads `<workspace>/.agentignore` and `.clineignore` (absent files = nothing ignored). */
export async function loadAgentIgnore(workspaceRoot: string): Promise<IgnoreMatcher> {
  const matcher = new IgnoreMatcher();
  for (const name of AGENT_IGNORE_FILES) {
    const file = path.join(workspaceRoot, name);
    try {
      // Regular files only: reading a FIFO of that name would never return.
      if (!(await fs.stat(file)).isFile()) continue;
      matcher.add(await fs.readFile(file, "utf8"));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "EISDIR") throw err;
    }
  }
  return matcher;
}
