import {
  McpServerState,
  ToggleScope,
  ToggleState,
  type Capability,
} from "../../../../core/src/gen/dline/v1/settings_pb.js";

/** The kinds in the order the view shows them, with their group titles. */
export const CAPABILITY_KINDS: readonly { kind: string; title: string }[] = [
  { kind: "rules", title: "Rules" },
  { kind: "workflows", title: "Workflows" },
  { kind: "skills", title: "Skills" },
  { kind: "subagents", title: "Subagents" },
  { kind: "hooks", title: "Hooks" },
  { kind: "mcp", title: "MCP Servers" },
];

export interface CapabilityGroup {
  kind: string;
  title: string;
  capabilities: Capability[];
}

/** Groups by kind in the view's order (a kind the view does not know goes last, by name). */
export function groupCapabilities(capabilities: readonly Capability[]): CapabilityGroup[] {
  const known = new Map(CAPABILITY_KINDS.map((k, i) => [k.kind, i]));
  const groups = new Map<string, CapabilityGroup>();
  for (const c of capabilities) {
    let group = groups.get(c.kind);
    if (!group) {
      group = {
        kind: c.kind,
        title: CAPABILITY_KINDS.find((k) => k.kind === c.kind)?.title ?? c.kind,
        capabilities: [],
      };
      groups.set(c.kind, group);
    }
    group.capabilities.push(c);
  }
  const order = (kind: string) => known.get(kind) ?? CAPABILITY_KINDS.length;
  return [...groups.values()]
    .sort((a, b) => order(a.kind) - order(b.kind) || a.kind.localeCompare(b.kind))
    .map((g) => ({
      ...g,
      capabilities: [...g.capabilities].sort((a, b) => (a.name || a.resource).localeCompare(b.name || b.resource)),
    }));
}

export function toggleStateWord(state: ToggleState): string {
  switch (state) {
    case ToggleState.ENABLED:
      return "enabled";
    case ToggleState.DISABLED:
      return "disabled";
    default:
      return "inherit";
  }
}

export function toggleScopeWord(scope: ToggleScope): string {
  switch (scope) {
    case ToggleScope.GLOBAL:
      return "global";
    case ToggleScope.WORKSPACE:
      return "workspace";
    case ToggleScope.TASK:
      return "task";
    default:
      return "default";
  }
}

export function mcpStateWord(state: McpServerState): string {
  switch (state) {
    case McpServerState.STOPPED:
      return "stopped";
    case McpServerState.STARTING:
      return "starting";
    case McpServerState.CONNECTED:
      return "connected";
    case McpServerState.RESTARTING:
      return "restarting";
    case McpServerState.FAILED:
      return "failed";
    case McpServerState.UNTRUSTED:
      return "untrusted";
    default:
      return "";
  }
}

export interface CapabilityRow {
  label: string;
  description: string;
  /** Tooltip lines (plain text). */
  tooltip: string[];
  /** The tree item's contextValue: the toggle command is offered on every capability; an untrusted one also offers trusting. */
  contextValue: "dlineCapability" | "dlineCapabilityUntrusted";
  icon: "pass" | "circle-slash" | "error" | "warning" | "workspace-untrusted";
}

/** Why an untrusted capability does not run (tooltip and the trust prompt say it the same way). */
export const UNTRUSTED_NOTE =
  "Untrusted: this workspace's own hooks and MCP servers do not run until you trust the workspace.";

/** What a capability's row shows: effective state, origin, MCP status, errors. */
export function capabilityRow(c: Capability): CapabilityRow {
  const mcpState = c.mcp ? mcpStateWord(c.mcp.state) : "";
  const mcpError = c.mcp?.lastError ?? "";
  const problem = c.error || mcpError;
  const description = [
    c.enabled ? "enabled" : "disabled",
    c.origin,
    c.untrusted && mcpState !== "untrusted" ? "untrusted" : "",
    mcpState,
    c.mcp && c.mcp.tools.length > 0 ? `${c.mcp.tools.length} tool${c.mcp.tools.length === 1 ? "" : "s"}` : "",
    problem ? `⚠ ${problem}` : "",
  ]
    .filter(Boolean)
    .join(" · ");
  const t = c.toggle;
  const tooltip = [
    `${c.name || c.resource} (${c.kind})`,
    c.description,
    `Effective: ${c.enabled ? "enabled" : "disabled"}${t ? ` (decided by ${toggleScopeWord(t.decidedBy)})` : ""}`,
    t
      ? `Toggles: global ${toggleStateWord(t.global)} · workspace ${toggleStateWord(t.workspace)} · task ${toggleStateWord(t.task)}`
      : "",
    `Source: ${c.origin}${c.sourcePath ? ` — ${c.sourcePath}` : ""}`,
    c.mcp
      ? `MCP: ${mcpState}${c.mcp.transport ? ` over ${c.mcp.transport}` : ""}${c.mcp.restarts ? `, ${c.mcp.restarts} restarts` : ""}`
      : "",
    c.mcp && c.mcp.tools.length > 0 ? `Tools: ${c.mcp.tools.join(", ")}` : "",
    c.error ? `Error: ${c.error}` : "",
    mcpError && mcpError !== c.error ? `Last MCP error: ${mcpError}` : "",
    c.untrusted ? UNTRUSTED_NOTE : "",
  ].filter(Boolean);
  return {
    label: c.name || c.resource,
    description,
    tooltip,
    contextValue: c.untrusted ? "dlineCapabilityUntrusted" : "dlineCapability",
    icon: c.error
      ? "error"
      : mcpError || c.mcp?.state === McpServerState.FAILED
        ? "warning"
        : c.untrusted
          ? "workspace-untrusted"
          : c.enabled
            ? "pass"
            : "circle-slash",
  };
}

/** Kinds whose workspace entries run only in a trusted workspace. */
const TRUST_KINDS = new Set(["hooks", "mcp"]);

export interface TrustRow {
  label: string;
  description: string;
  tooltip: string;
  /** contextValue: the inline action is "Trust this workspace" or "Stop trusting". */
  contextValue: "dlineWorkspaceUntrusted" | "dlineWorkspaceTrusted";
  icon: "workspace-untrusted" | "workspace-trusted";
}

/**
 * The row at the top of the view about the workspace's trust: shown when the workspace has its
 * own hooks or MCP servers (or is trusted, so that trust can be withdrawn); none otherwise.
 */
export function trustRow(workspaceTrusted: boolean, capabilities: readonly Capability[]): TrustRow | undefined {
  if (workspaceTrusted) {
    return {
      label: "Workspace trusted",
      description: "its hooks and MCP servers may run",
      tooltip:
        "You trusted this workspace: Dline may run its own hooks (.agents/hooks) and MCP servers (.agents/mcp). Stop trusting it to stop them.",
      contextValue: "dlineWorkspaceTrusted",
      icon: "workspace-trusted",
    };
  }
  const untrusted = capabilities.filter((c) => c.untrusted && TRUST_KINDS.has(c.kind));
  if (untrusted.length === 0) return undefined;
  return {
    label: "Workspace not trusted",
    description: `${untrusted.length} hook${untrusted.length === 1 ? "" : "s"}/MCP server${untrusted.length === 1 ? "" : "s"} not run`,
    tooltip: `${UNTRUSTED_NOTE}\nNot run: ${untrusted.map((c) => `${c.name || c.resource} (${c.kind})`).join(", ")}`,
    contextValue: "dlineWorkspaceUntrusted",
    icon: "workspace-untrusted",
  };
}

/** The modal confirmation before trusting: what trusting allows, in plain words. */
export function trustConfirmation(workspaceRoot: string): { message: string; detail: string; confirm: string } {
  return {
    message: `Trust the workspace ${workspaceRoot}?`,
    detail:
      "Trusting it allows Dline to run this workspace's own hooks (.agents/hooks) and MCP servers (.agents/mcp). " +
      "They come from the repository and run as programs with your permissions. Only trust a workspace whose files you trust.",
    confirm: "Trust",
  };
}

export interface ToggleChoice {
  label: string;
  description: string;
  state: ToggleState;
}

/** The toggle pick's three choices, the current workspace state marked. */
export function toggleChoices(current: ToggleState | undefined): ToggleChoice[] {
  const mark = (s: ToggleState) =>
    (current ?? ToggleState.INHERIT) === s || (s === ToggleState.INHERIT && current === ToggleState.UNSPECIFIED)
      ? "current"
      : "";
  return [
    { label: "Enabled", description: mark(ToggleState.ENABLED), state: ToggleState.ENABLED },
    { label: "Disabled", description: mark(ToggleState.DISABLED), state: ToggleState.DISABLED },
    {
      label: "Inherit",
      description: [mark(ToggleState.INHERIT), "use the global setting"].filter(Boolean).join(" · "),
      state: ToggleState.INHERIT,
    },
  ];
}
