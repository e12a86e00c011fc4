/**
 * The runtime's CapabilitiesPort: at every turn, the locations are re-scanned (cheaply: file
 * contents are cached by mtime) and the scoped toggles read, so a change applies to the next
 * turn. Also lists every capability with its source, toggles and status for the RPC.
 *
 * Trust: a workspace's hooks and MCP servers (`.agents/hooks`, `.agents/mcp`) come from the
 * repository; they are listed as untrusted and never run until the person trusted the
 * workspace. Global ones (documents root) and a session's servers (given by the editor) are
 * trusted. An MCP server that is toggled off or no longer trusted has its process stopped.
 */
import type { EnabledRule, ToolDefinition } from "../agent/index.js";
import type { Logger } from "../logging/logger.js";
import {
  SKILLS_RULE_NAME,
  type CapabilitiesPort,
  type CapabilityContext,
  type HookEvent,
  type HookOutcome,
  type SubagentDefinition,
} from "../runtime/index.js";
import {
  assertKind,
  type CapabilityToggles,
  type CapabilityToggleView,
  type ToggleContext,
  type InstanceLayout,
  type CapabilityKind,
} from "../storage/index.js";
import { CapabilityCatalog, type CapabilityOrigin, type FileCapabilities, type FileKind } from "./catalog.js";
import { FileCache } from "./file-cache.js";
import { runHooks } from "./hook-runner.js";
import { loadSkillTool, loadWorkflowTool } from "./loader-tools.js";
import type { CapabilitySettings } from "./capability-settings.js";
import { readMcpServers, type McpFileProblem, type McpServerEntry } from "./mcp/config.js";
import type { McpState } from "./mcp/connection.js";
import { McpHub, type McpServerStatus } from "./mcp/hub.js";
import { sessionServerEntries, type SessionMcpServer } from "./mcp/session-servers.js";

/** An MCP server's state as listed: a connection's state, or "untrusted" (never started). */
export type McpListedState = McpState | "untrusted";

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
  /** A workspace hook or MCP server of a workspace the person has not trusted: it does not run. */
  untrusted: boolean;
  mcp?: Omit<McpServerStatus, "state"> & { state: McpListedState; transport: string };
}

export interface CapabilityListing {
  capabilities: CapabilityView[];
  /** Malformed files that were kept as they are (MCP descriptors). */
  problems: McpFileProblem[];
  /** Whether the workspace asked about is trusted (false without a workspace). */
  workspaceTrusted: boolean;
}

interface Snapshot {
  files: FileCapabilities;
  /** File servers (global, workspace), then the task's session servers. */
  mcp: { servers: McpServerEntry[]; problems: McpFileProblem[] };
  enabled: (kind: CapabilityKind, resource: string) => boolean;
  toggles: Map<string, CapabilityToggleView>;
  /** The workspace is trusted (read only when it has hooks or MCP servers). */
  trusted: boolean;
}

/** Trust gates what runs code from the repository: hooks and MCP servers. */
const needsTrust = (entry: { origin: CapabilityOrigin }, trusted: boolean) => entry.origin === "workspace" && !trusted;

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
  /** MCP servers given to one task for its lifetime (ACP session/new), by task id. */
  private readonly sessionServers = new Map<string, McpServerEntry[]>();
  readonly mcp: McpHub;

  constructor(
    private readonly layout: InstanceLayout,
    private readonly toggleStore: CapabilityToggles,
    private readonly settings: CapabilitySettings,
    private readonly logger: Logger,
  ) {
    this.catalog = new CapabilityCatalog(layout);
    this.mcp = new McpHub(logger.child("mcp"));
  }

  /** Reads the given kinds' locations (and MCP descriptors) and, when any exist, the toggles. */
  private async snapshot(ctx: ToggleContext, kinds?: readonly FileKind[], withMcp = true): Promise<Snapshot> {
    const files = this.catalog.scan(ctx.workspaceRoot, kinds);
    const mcpDirs = this.catalog.locations("mcp", ctx.workspaceRoot);
    const mcp = withMcp
      ? readMcpServers(
          this.mcpFiles,
          { globalSettingsFile: this.layout.mcpSettingsJson, dirs: mcpDirs },
          ctx.workspaceRoot ? this.catalog.boundaryOf(ctx.workspaceRoot) : undefined,
        )
      : { servers: [], problems: [] };
    // A malformed file hides its servers without removing them: only prune when all files parsed.
    if (withMcp && mcp.problems.length === 0)
      this.mcp.prune(mcp.servers, [this.layout.mcpSettingsJson, ...mcpDirs.map((d) => d.dir)]);
    const session = withMcp && ctx.taskId ? (this.sessionServers.get(ctx.taskId) ?? []) : [];
    // A session's server wins over a file's server of the same name.
    if (session.length > 0)
      mcp.servers = [...mcp.servers.filter((s) => !session.some((x) => x.name === s.name)), ...session];
    const found = Object.values(files).some((list: readonly unknown[]) => list.length > 0) || mcp.servers.length > 0;
    const views = found ? await this.toggleStore.list(ctx) : [];
    const toggles = new Map(views.map((v) => [`${v.kind}\u0000${v.resource}`, v]));
    const fromRepository =
      files.hooks.some((h) => h.origin === "workspace") || mcp.servers.some((s) => s.origin === "workspace");
    const trusted =
      fromRepository && ctx.workspaceRoot ? await this.settings.isWorkspaceTrusted(ctx.workspaceRoot) : false;
    const snap: Snapshot = {
      files,
      mcp,
      toggles,
      trusted,
      enabled: (kind, resource) => toggles.get(`${kind}\u0000${resource}`)?.enabled ?? true,
    };
    if (withMcp) await this.stopUnwanted(snap);
    return snap;
  }

  /**
   * Stops running servers this context shows as unwanted: untrusted, or toggled off at a scope
   * that applies to every user of the connection (global; workspace for a workspace's own
   * server). A task-scope toggle stops it only when set (applyToggle): other tasks may use it.
   */
  private async stopUnwanted(snap: Snapshot): Promise<void> {
    const unwanted = snap.mcp.servers.filter((s) => {
      if (s.origin === "session" || !this.mcp.has(s)) return false;
      if (needsTrust(s, snap.trusted)) return true;
      const toggle = snap.toggles.get(`mcp\u0000${s.name}`);
      if (!toggle || toggle.enabled) return false;
      return toggle.decidedBy === "global" || (toggle.decidedBy === "workspace" && s.origin === "workspace");
    });
    if (unwanted.length > 0) await this.mcp.stopServers(unwanted);
  }

  private usable<T extends { resource: string; error?: string }>(
    snap: Snapshot,
    kind: CapabilityKind,
    entries: T[],
  ): T[] {
    return entries.filter((e) => !e.error && snap.enabled(kind, e.resource));
  }

  private usableMcp(snap: Snapshot): McpServerEntry[] {
    return snap.mcp.servers.filter(
      (s) =>
        s.config &&
        !s.error &&
        !needsTrust(s, snap.trusted) &&
        (s.origin === "session" || (!s.disabledInFile && snap.enabled("mcp", s.name))),
    );
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
        name: SKILLS_RULE_NAME,
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
    for (const [, , name] of text.matchAll(/(^|\s)\/([A-Za-z0-9][A-Za-z0-9._-]*)(?=$|[\s.,;:!?)])/g)) {
      if (name !== undefined && workflows.has(name) && !used.includes(name)) used.push(name);
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
    const hooks = this.usable(snap, "hooks", snap.files.hooks).filter(
      (h) => h.event === event && !needsTrust(h, snap.trusted),
    );
    if (hooks.length === 0) return { runs: [] };
    await ctx.beforeHooks?.();
    return runHooks(
      hooks.map((h) => ({
        name: `${h.origin === "global" ? "hooks" : ".agents/hooks"}/${h.resource}`,
        path: h.sourcePath,
      })),
      event,
      { workspaceRoot: ctx.workspaceRoot, ...payload },
      ctx.workspaceRoot,
      {
        timeoutMs: await this.settings.hookTimeoutMs({ workspaceRoot: ctx.workspaceRoot, taskId: ctx.taskId }),
        signal: ctx.signal,
        secrets: await ctx.secrets?.(),
      },
    );
  }

  /** Every capability visible from a workspace (and task), with toggles and status. */
  async list(ctx: ToggleContext & { kind?: string; connectMcp?: boolean }): Promise<CapabilityListing> {
    if (ctx.kind) assertKind(ctx.kind);
    const snap = await this.snapshot(ctx);
    if (ctx.connectMcp) await Promise.all(this.usableMcp(snap).map((s) => this.mcp.start(s, ctx.workspaceRoot)));
    const toggle = (kind: CapabilityKind, resource: string): CapabilityToggleView =>
      snap.toggles.get(`${kind}\u0000${resource}`) ?? {
        kind,
        resource,
        enabled: true,
        decidedBy: undefined,
        global: "inherit",
        workspace: "inherit",
        task: "inherit",
      };
    const out: CapabilityView[] = [];
    for (const kind of ["rules", "workflows", "skills", "subagents", "hooks"] as const) {
      for (const e of snap.files[kind]) {
        const untrusted = kind === "hooks" && needsTrust(e, snap.trusted);
        out.push({
          kind,
          resource: e.resource,
          name: e.name,
          description: e.description,
          origin: e.origin,
          sourcePath: e.sourcePath,
          toggle: toggle(kind, e.resource),
          enabled: !e.error && !untrusted && toggle(kind, e.resource).enabled,
          error: e.error,
          untrusted,
        });
      }
    }
    for (const s of snap.mcp.servers) {
      const status = this.mcp.status(s);
      const untrusted = needsTrust(s, snap.trusted);
      const transport = s.config?.transport === "http" ? "streamable HTTP" : s.config ? "stdio" : "";
      out.push({
        kind: "mcp",
        resource: s.name,
        name: s.name,
        description: s.disabledInFile ? `${transport} (disabled in its file)` : transport,
        origin: s.origin,
        sourcePath: s.sourcePath,
        toggle: toggle("mcp", s.name),
        enabled:
          !!s.config &&
          !s.error &&
          !untrusted &&
          (s.origin === "session" || (!s.disabledInFile && toggle("mcp", s.name).enabled)),
        error: s.error ?? status.lastError,
        untrusted,
        mcp: { ...status, state: untrusted ? "untrusted" : status.state, transport },
      });
    }
    const filtered = ctx.kind ? out.filter((c) => c.kind === ctx.kind) : out;
    const workspaceTrusted = ctx.workspaceRoot
      ? snap.trusted || (await this.settings.isWorkspaceTrusted(ctx.workspaceRoot))
      : false;
    return {
      capabilities: filtered,
      problems: !ctx.kind || ctx.kind === "mcp" ? snap.mcp.problems : [],
      workspaceTrusted,
    };
  }

  /**
   * After a toggle was set in `ctx`: an MCP server it turned off (at any scope) is stopped now;
   * turned on again, it starts on demand (the next turn, or a listing with connect_mcp).
   */
  async applyToggle(ctx: ToggleContext, kind: string, resource: string): Promise<void> {
    if (kind !== "mcp") return;
    const snap = await this.snapshot(ctx, []);
    const off = snap.mcp.servers.filter(
      (s) => s.name === resource && s.origin !== "session" && !snap.enabled("mcp", s.name),
    );
    if (off.length > 0) await this.mcp.stopServers(off);
  }

  /** Trusts (or no longer trusts) a workspace's hooks and MCP servers; distrust stops its servers. */
  async trustWorkspace(workspaceRoot: string, trusted: boolean): Promise<void> {
    await this.settings.setWorkspaceTrusted(workspaceRoot, trusted);
    this.logger.info(trusted ? "workspace trusted" : "workspace no longer trusted", { workspaceRoot });
    if (!trusted) await this.snapshot({ workspaceRoot }, []);
  }

  /** Gives a task extra MCP servers for its lifetime (replacing earlier ones); they start on demand. */
  async setSessionMcpServers(taskId: string, servers: readonly SessionMcpServer[]): Promise<void> {
    const next = sessionServerEntries(taskId, servers);
    const previous = this.sessionServers.get(taskId) ?? [];
    const replaced = previous.filter((p) => !next.some((n) => n.name === p.name && n.configKey === p.configKey));
    if (next.length > 0) this.sessionServers.set(taskId, next);
    else this.sessionServers.delete(taskId);
    for (const entry of next.filter((e) => e.error))
      this.logger.warn("session mcp server refused", { server: entry.name, error: entry.error });
    await this.mcp.stopServers(replaced);
  }

  /** The task's session ended (closed, deleted): its session servers stop. */
  async endSession(taskId: string): Promise<void> {
    const entries = this.sessionServers.get(taskId) ?? [];
    this.sessionServers.delete(taskId);
    await this.mcp.stopServers(entries);
  }

  async stop(): Promise<void> {
    await this.mcp.stopAll();
  }
}
