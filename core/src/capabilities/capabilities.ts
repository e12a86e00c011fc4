/**
 * The runtime's CapabilitiesPort: at every turn, the locations are re-scanned (cheaply: file
 * contents are cached by mtime) and the scoped toggles read, so a change applies to the next
 * turn. Also lists every capability with its source, toggles and status for the RPC.
 */
import type { EnabledRule } from "../agent/system-prompt.js";
import type { ToolDefinition } from "../agent/tools/types.js";
import type { Logger } from "../logging/logger.js";
import type { CapabilitiesPort, CapabilityContext, HookEvent, HookOutcome, SubagentDefinition } from "../runtime/capabilities-port.js";
import { assertKind, type CapabilityToggles, type CapabilityToggleView, type ToggleContext } from "../storage/capability-toggles.js";
import type { InstanceLayout } from "../storage/instance-layout.js";
import type { CapabilityKind } from "../storage/settings-registry.js";
import { CapabilityCatalog, type CapabilityOrigin, type FileCapabilities, type FileKind } from "./catalog.js";
import { FileCache } from "./file-cache.js";
import { runHooks } from "./hook-runner.js";
import { loadSkillTool, loadWorkflowTool } from "./loader-tools.js";
import { readMcpServers, type McpFileProblem, type McpServerEntry } from "./mcp/config.js";
import { McpHub, type McpServerStatus } from "./mcp/hub.js";

export interface CapabilityView {
  kind: CapabilityKind;
  resource: string;
  name: string;
  description: string;
  origin: CapabilityOrigin;
  sourcePath: string;
  toggle: CapabilityToggleView;
  /** The toggles enable it and its definition is usable. */
  enabled: boolean;
  /** Why it cannot be used (malformed, not executable, a failing MCP server). */
  error?: string;
  mcp?: McpServerStatus & { transport: string };
}

export interface CapabilityListing {
  capabilities: CapabilityView[];
  /** Malformed files that were kept as they are (MCP descriptors). */
  problems: McpFileProblem[];
}

interface Snapshot {
  files: FileCapabilities;
  mcp: { servers: McpServerEntry[]; problems: McpFileProblem[] };
  enabled: (kind: CapabilityKind, resource: string) => boolean;
  toggles: Map<string, CapabilityToggleView>;
}

/** Named entries: workspace ones override global ones of the same name. */
function byName<T extends { name: string; origin: CapabilityOrigin }>(entries: T[]): Map<string, T> {
  const map = new Map<string, T>();
  for (const e of entries.filter((x) => x.origin === "global")) map.set(e.name, e);
  for (const e of entries.filter((x) => x.origin === "workspace")) map.set(e.name, e);
  return map;
}

export class Capabilities implements CapabilitiesPort {
  private readonly catalog: CapabilityCatalog;
  private readonly mcpFiles = new FileCache();
  readonly mcp: McpHub;

  constructor(
    private readonly layout: InstanceLayout,
    private readonly toggleStore: CapabilityToggles,
    private readonly logger: Logger,
    private readonly hookTimeoutMs?: number,
  ) {
    this.catalog = new CapabilityCatalog(layout);
    this.mcp = new McpHub(logger.child("mcp"));
  }

  /** Reads the given kinds' locations (and MCP descriptors) and, when any exist, the toggles. */
  private async snapshot(ctx: ToggleContext, kinds?: readonly FileKind[], withMcp = true): Promise<Snapshot> {
    const files = this.catalog.scan(ctx.workspaceRoot, kinds);
    const mcpDirs = this.catalog.locations("mcp", ctx.workspaceRoot);
    const mcp = withMcp ? readMcpServers(this.mcpFiles, { globalSettingsFile: this.layout.mcpSettingsJson, dirs: mcpDirs }) : { servers: [], problems: [] };
    // A malformed file hides its servers without removing them: only prune when all files parsed.
    if (withMcp && mcp.problems.length === 0) this.mcp.prune(mcp.servers, [this.layout.mcpSettingsJson, ...mcpDirs.map((d) => d.dir)]);
    const found = Object.values(files).some((list) => list.length > 0) || mcp.servers.length > 0;
    const views = found ? await this.toggleStore.list(ctx) : [];
    const toggles = new Map(views.map((v) => [`${v.kind}\u0000${v.resource}`, v]));
    return { files, mcp, toggles, enabled: (kind, resource) => toggles.get(`${kind}\u0000${resource}`)?.enabled ?? true };
  }

  private usable<T extends { resource: string; error?: string }>(snap: Snapshot, kind: CapabilityKind, entries: T[]): T[] {
    return entries.filter((e) => !e.error && snap.enabled(kind, e.resource));
  }

  private usableMcp(snap: Snapshot): McpServerEntry[] {
    return snap.mcp.servers.filter((s) => s.config && !s.error && !s.disabledInFile && snap.enabled("mcp", s.name));
  }

  async forTurn(ctx: CapabilityContext): Promise<{ rules: EnabledRule[]; tools: ToolDefinition[] }> {
    const snap = await this.snapshot(ctx, ["rules", "workflows", "skills"]);
    const rules: EnabledRule[] = this.usable(snap, "rules", snap.files.rules)
      .filter((r) => r.text.trim())
      .map((r) => ({ name: r.name, text: r.text }));
    const tools: ToolDefinition[] = [];
    const workflows = byName(this.usable(snap, "workflows", snap.files.workflows));
    if (workflows.size > 0) tools.push(loadWorkflowTool(workflows));
    const skills = byName(this.usable(snap, "skills", snap.files.skills));
    if (skills.size > 0) {
      tools.push(loadSkillTool(skills));
      rules.push({
        name: "Skills",
        text:
          "These skills are available. When a task matches one, load its instructions with load_skill before starting.\n" +
          [...skills.values()].map((s) => `- ${s.name}: ${s.description}`).join("\n"),
      });
    }
    tools.push(...(await this.mcp.toolsFor(this.usableMcp(snap), ctx.workspaceRoot)));
    return { rules, tools };
  }

  async expandUserText(text: string, ctx: CapabilityContext): Promise<string> {
    if (!text.includes("/")) return text;
    const snap = await this.snapshot(ctx, ["workflows"], false);
    const workflows = byName(this.usable(snap, "workflows", snap.files.workflows));
    const used: string[] = [];
    for (const match of text.matchAll(/(^|\s)\/([A-Za-z0-9][A-Za-z0-9._-]*)(?=$|[\s.,;:!?)])/g)) {
      const name = match[2];
      if (workflows.has(name) && !used.includes(name)) used.push(name);
    }
    if (used.length === 0) return text;
    const blocks = used.map((name) => `<workflow name="${name}">\n${workflows.get(name)!.text.trim()}\n</workflow>`);
    return `${text}\n\n${blocks.join("\n\n")}`;
  }

  async subagent(name: string, ctx: CapabilityContext): Promise<SubagentDefinition | undefined> {
    const snap = await this.snapshot(ctx, ["subagents"], false);
    return byName(this.usable(snap, "subagents", snap.files.subagents)).get(name)?.definition;
  }

  async runHooks(event: HookEvent, payload: Record<string, unknown>, ctx: CapabilityContext): Promise<HookOutcome> {
    const snap = await this.snapshot(ctx, ["hooks"], false);
    const hooks = this.usable(snap, "hooks", snap.files.hooks).filter((h) => h.event === event);
    if (hooks.length === 0) return { runs: [] };
    return runHooks(
      hooks.map((h) => ({ name: `${h.origin === "global" ? "hooks" : ".agents/hooks"}/${h.resource}`, path: h.sourcePath })),
      event,
      { workspaceRoot: ctx.workspaceRoot, ...payload },
      ctx.workspaceRoot,
      { timeoutMs: this.hookTimeoutMs, signal: ctx.signal },
    );
  }

  /** Every capability visible from a workspace (and task), with toggles and status. */
  async list(ctx: ToggleContext & { kind?: string; connectMcp?: boolean }): Promise<CapabilityListing> {
    if (ctx.kind) assertKind(ctx.kind);
    const snap = await this.snapshot(ctx);
    if (ctx.connectMcp) await Promise.all(this.usableMcp(snap).map((s) => this.mcp.start(s, ctx.workspaceRoot)));
    const toggle = (kind: CapabilityKind, resource: string): CapabilityToggleView =>
      snap.toggles.get(`${kind}\u0000${resource}`) ?? { kind, resource, enabled: true, decidedBy: undefined, global: "inherit", workspace: "inherit", task: "inherit" };
    const out: CapabilityView[] = [];
    for (const kind of ["rules", "workflows", "skills", "subagents", "hooks"] as const) {
      for (const e of snap.files[kind]) {
        out.push({ kind, resource: e.resource, name: e.name, description: e.description, origin: e.origin, sourcePath: e.sourcePath, toggle: toggle(kind, e.resource), enabled: !e.error && toggle(kind, e.resource).enabled, error: e.error });
      }
    }
    for (const s of snap.mcp.servers) {
      const status = this.mcp.status(s);
      const transport = s.config?.transport === "http" ? "streamable HTTP" : s.config ? "stdio" : "";
      out.push({
        kind: "mcp",
        resource: s.name,
        name: s.name,
        description: s.disabledInFile ? `${transport} (disabled in its file)` : transport,
        origin: s.origin,
        sourcePath: s.sourcePath,
        toggle: toggle("mcp", s.name),
        enabled: !!s.config && !s.error && !s.disabledInFile && toggle("mcp", s.name).enabled,
        error: s.error ?? status.lastError,
        mcp: { ...status, transport },
      });
    }
    const filtered = ctx.kind ? out.filter((c) => c.kind === ctx.kind) : out;
    return { capabilities: filtered, problems: !ctx.kind || ctx.kind === "mcp" ? snap.mcp.problems : [] };
  }

  async stop(): Promise<void> {
    await this.mcp.stopAll();
  }
}
