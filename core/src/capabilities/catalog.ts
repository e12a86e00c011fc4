/**
 * The file-based capabilities found in a workspace's locations (global under the documents
 * root, workspace under `<project>/.agents/`): rules, workflows, skills, subagent definitions
 * and hooks. MCP servers are read by mcp/config.ts. Each entry keeps its source path and a
 * problem (a malformed definition) instead of failing the whole scan.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { HookEvent, SubagentDefinition } from "../runtime/index.js";
import type { InstanceLayout, CapabilityKind } from "../storage/index.js";
import { FileCache, listDir, listFilesRecursive } from "./file-cache.js";
import { OUTSIDE_WORKSPACE, ReadBoundary } from "./read-boundary.js";
import { listField, parseFrontMatter, stringField } from "./front-matter.js";

/** "session": an MCP server an editor gave one task for its lifetime (ACP session/new). */
export type CapabilityOrigin = "global" | "workspace" | "session";

export const HOOK_EVENTS: readonly HookEvent[] = [
  "TaskStart",
  "TaskResume",
  "TaskCancel",
  "TaskComplete",
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
];

interface EntryBase {
  /** The toggle resource: a path relative to its location (a skill: its folder name). */
  resource: string;
  /** The name the model or the person uses (`/name`, load_skill name, subagent name). */
  name: string;
  description: string;
  origin: CapabilityOrigin;
  sourcePath: string;
  /** Why the entry cannot be used (it is listed, never used). */
  error?: string;
}

export interface RuleEntry extends EntryBase {
  text: string;
}
export interface WorkflowEntry extends EntryBase {
  text: string;
}
export interface SkillEntry extends EntryBase {
  instructions: string;
  dir: string;
  /** A workspace's skill: its files are read only within this (load_skill checks again). */
  boundary?: ReadBoundary;
  /** The skill's other files, relative to its folder. */
  files: string[];
}
export interface SubagentEntry extends EntryBase {
  definition: SubagentDefinition;
}
export interface HookEntry extends EntryBase {
  event: HookEvent;
}

export interface FileCapabilities {
  rules: RuleEntry[];
  workflows: WorkflowEntry[];
  skills: SkillEntry[];
  subagents: SubagentEntry[];
  hooks: HookEntry[];
}

export type FileKind = Exclude<CapabilityKind, "mcp">;

const TEXT_FILE = (name: string) => /\.(md|markdown|txt)$/i.test(name);
/** Rule files of other agents, at the workspace root. */
const ROOT_RULE_FILES = [".clinerules", "AGENTS.md", ".cursorrules", ".windsurfrules"] as const;
const baseName = (rel: string) => path.basename(rel).replace(/\.(md|markdown|txt|json)$/i, "");

export class CapabilityCatalog {
  private readonly cache = new FileCache();

  constructor(private readonly layout: InstanceLayout) {}

  /** Global locations first, then the workspace's; named entries of the workspace win on lookup. */
  locations(kind: FileKind | "mcp", workspaceRoot: string | undefined): { origin: CapabilityOrigin; dir: string }[] {
    const out: { origin: CapabilityOrigin; dir: string }[] = [
      { origin: "global", dir: this.layout.capabilityDir(kind) },
    ];
    if (workspaceRoot) out.push({ origin: "workspace", dir: this.layout.workspaceCapabilityDir(workspaceRoot, kind) });
    return out;
  }

  /** Scans the given kinds (default all); the others come back empty. */
  scan(
    workspaceRoot: string | undefined,
    kinds: readonly FileKind[] = ["rules", "workflows", "skills", "subagents", "hooks"],
  ): FileCapabilities {
    const want = (k: FileKind) => kinds.includes(k);
    const boundary = workspaceRoot ? this.boundaryOf(workspaceRoot) : undefined;
    return {
      rules: want("rules") ? this.scanRules(workspaceRoot, boundary) : [],
      workflows: want("workflows") ? this.scanWorkflows(workspaceRoot, boundary) : [],
      skills: want("skills") ? this.scanSkills(workspaceRoot, boundary) : [],
      subagents: want("subagents") ? this.scanSubagents(workspaceRoot, boundary) : [],
      hooks: want("hooks") ? this.scanHooks(workspaceRoot) : [],
    };
  }

  /** What a workspace's files may be read from (read-boundary.ts); the global folders are the person's own. */
  boundaryOf(workspaceRoot: string): ReadBoundary {
    const { dataRoot, homeRoot, documentsRoot } = this.layout.roots;
    return new ReadBoundary(workspaceRoot, [dataRoot, homeRoot, documentsRoot]);
  }

  /** A file's text through the boundary (workspace files), and why there is none. */
  private readFile(file: string, boundary: ReadBoundary | undefined): { text?: string; error?: string } {
    if (boundary && !boundary.allows(file)) return { error: OUTSIDE_WORKSPACE };
    const text = this.cache.read(file);
    return text === undefined ? { error: "unreadable" } : { text };
  }

  private scanRules(workspaceRoot: string | undefined, boundary: ReadBoundary | undefined): RuleEntry[] {
    const out: RuleEntry[] = workspaceRoot && boundary ? this.scanAgentRuleFiles(workspaceRoot, boundary) : [];
    for (const { origin, dir } of this.locations("rules", workspaceRoot)) {
      const within = origin === "workspace" ? boundary : undefined;
      for (const rel of listFilesRecursive(dir, 3, TEXT_FILE, within)) {
        const sourcePath = path.join(dir, rel);
        const { text, error } = this.readFile(sourcePath, within);
        const { fields, body } = parseFrontMatter(text ?? "");
        out.push({
          resource: rel,
          name: `${origin === "global" ? "rules" : ".agents/rules"}/${rel}`,
          description: stringField(fields, "description") ?? "",
          origin,
          sourcePath,
          text: body,
          error,
        });
      }
    }
    return out;
  }

  /**
   * The rule files other agents read at a workspace's root: Cline's `.clinerules` (a file, or a
   * folder of them), `AGENTS.md`, Cursor's `.cursorrules` and Windsurf's `.windsurfrules`. Each
   * is a rule like the others (listed, toggled by its path from the workspace root).
   */
  private scanAgentRuleFiles(workspaceRoot: string, boundary: ReadBoundary): RuleEntry[] {
    const out: RuleEntry[] = [];
    const add = (rel: string) => {
      const sourcePath = path.join(workspaceRoot, rel);
      const { text, error } = this.readFile(sourcePath, boundary);
      const { fields, body } = parseFrontMatter(text ?? "");
      out.push({
        resource: rel,
        name: rel,
        description: stringField(fields, "description") ?? "",
        origin: "workspace",
        sourcePath,
        text: body,
        error,
      });
    };
    for (const rel of ROOT_RULE_FILES) {
      const file = path.join(workspaceRoot, rel);
      if (rel === ".clinerules" && isDirectory(file)) {
        for (const inner of listFilesRecursive(file, 3, (n) => TEXT_FILE(n) || !n.includes("."), boundary))
          add(`${rel}/${inner}`);
      } else if (isFile(file)) add(rel);
    }
    return out;
  }

  private scanWorkflows(workspaceRoot: string | undefined, boundary: ReadBoundary | undefined): WorkflowEntry[] {
    const out: WorkflowEntry[] = [];
    for (const { origin, dir } of this.locations("workflows", workspaceRoot)) {
      const within = origin === "workspace" ? boundary : undefined;
      for (const rel of listFilesRecursive(dir, 0, TEXT_FILE, within)) {
        const sourcePath = path.join(dir, rel);
        const { text, error } = this.readFile(sourcePath, within);
        const { fields, body } = parseFrontMatter(text ?? "");
        out.push({
          resource: rel,
          name: baseName(rel),
          description: stringField(fields, "description") ?? firstLine(body),
          origin,
          sourcePath,
          text: body,
          error,
        });
      }
    }
    return out;
  }

  private scanSkills(workspaceRoot: string | undefined, boundary: ReadBoundary | undefined): SkillEntry[] {
    const out: SkillEntry[] = [];
    for (const { origin, dir } of this.locations("skills", workspaceRoot)) {
      const within = origin === "workspace" ? boundary : undefined;
      for (const entry of listDir(dir)) {
        const skillDir = path.join(dir, entry.name);
        if (!isDirectory(skillDir)) continue;
        const sourcePath = path.join(skillDir, "SKILL.md");
        const outside = within !== undefined && !within.allows(sourcePath) && fs.existsSync(sourcePath);
        const text = outside ? undefined : this.readFile(sourcePath, within).text;
        const { fields, body } = parseFrontMatter(text ?? "");
        const name = stringField(fields, "name") ?? entry.name;
        const description = stringField(fields, "description") ?? "";
        let error: string | undefined;
        if (outside) error = `SKILL.md ${OUTSIDE_WORKSPACE}`;
        else if (text === undefined) error = "SKILL.md is missing";
        else if (!description) error = "SKILL.md has no description in its front matter";
        out.push({
          resource: entry.name,
          name,
          description,
          origin,
          sourcePath,
          instructions: body,
          dir: skillDir,
          boundary: within,
          files:
            text === undefined
              ? []
              : listFilesRecursive(skillDir, 3, undefined, within)
                  .filter((f) => f !== "SKILL.md" && (!within || within.allows(path.join(skillDir, f))))
                  .slice(0, 100),
          error,
        });
      }
    }
    return out;
  }

  private scanSubagents(workspaceRoot: string | undefined, boundary: ReadBoundary | undefined): SubagentEntry[] {
    const out: SubagentEntry[] = [];
    for (const { origin, dir } of this.locations("subagents", workspaceRoot)) {
      const within = origin === "workspace" ? boundary : undefined;
      for (const rel of listFilesRecursive(dir, 0, (n) => TEXT_FILE(n) || /\.json$/i.test(n), within)) {
        const sourcePath = path.join(dir, rel);
        const { text, error } = this.readFile(sourcePath, within);
        const parsed = text === undefined ? { error: error ?? "unreadable" } : parseSubagent(text, rel);
        const definition = "definition" in parsed ? parsed.definition : { name: baseName(rel), instructions: "" };
        out.push({
          resource: rel,
          name: definition.name,
          description: "description" in parsed ? parsed.description : "",
          origin,
          sourcePath,
          definition,
          error: "error" in parsed ? parsed.error : undefined,
        });
      }
    }
    return out;
  }

  /** A hook is an executable named after its event (`PreToolUse`, `PreToolUse.sh`) or inside `<Event>/`. */
  private scanHooks(workspaceRoot: string | undefined): HookEntry[] {
    const out: HookEntry[] = [];
    for (const { origin, dir } of this.locations("hooks", workspaceRoot)) {
      for (const rel of listFilesRecursive(dir, 1)) {
        // listFilesRecursive's depth 1: `<file>` or `<Event>/<file>`.
        const [first = "", second] = rel.split("/");
        const eventName = second === undefined ? first.replace(/\.[^.]*$/, "") : first;
        const event = HOOK_EVENTS.find((e) => e === eventName);
        if (!event) continue;
        const sourcePath = path.join(dir, rel);
        out.push({
          resource: rel,
          name: rel,
          description: `${event} hook`,
          origin,
          sourcePath,
          event,
          error: isExecutable(sourcePath) ? undefined : "not executable (chmod +x it)",
        });
      }
    }
    return out;
  }
}

function firstLine(text: string): string {
  return (text.split("\n").find((l) => l.trim()) ?? "").replace(/^#+\s*/, "").slice(0, 200);
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A subagent definition: markdown with front matter, or JSON `{name, description, tools, profile, instructions}`. */
export function parseSubagent(
  text: string,
  rel: string,
): { definition: SubagentDefinition; description: string } | { error: string } {
  if (/\.json$/i.test(rel)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return { error: `malformed JSON: ${(err as Error).message}` };
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) return { error: "expected a JSON object" };
    const v = value as Record<string, unknown>;
    const str = (k: string) => (typeof v[k] === "string" && v[k].length > 0 ? v[k] : undefined);
    const tools =
      v.tools === undefined
        ? undefined
        : Array.isArray(v.tools) && v.tools.every((t) => typeof t === "string")
          ? v.tools
          : null;
    if (tools === null) return { error: "tools must be a list of tool names" };
    return {
      definition: {
        name: str("name") ?? baseName(rel),
        instructions: str("instructions") ?? "",
        tools,
        profileId: str("profileId") ?? str("profile"),
      },
      description: str("description") ?? "",
    };
  }
  const { fields, body } = parseFrontMatter(text);
  return {
    definition: {
      name: stringField(fields, "name") ?? baseName(rel),
      instructions: body.trim(),
      tools: listField(fields, "tools"),
      profileId: stringField(fields, "profileId") ?? stringField(fields, "profile"),
    },
    description: stringField(fields, "description") ?? "",
  };
}
