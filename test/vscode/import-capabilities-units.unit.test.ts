/**
 * Pure parts of "Dline: Import from Cline" (pick rows, outcomes, summary) and of the
 * Capabilities view (grouping by kind, a row's description and tooltip, the toggle choices,
 * untrusted workspace hooks/MCP servers and the trust row and confirmation).
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ImportItemKind, ImportItemSchema, ImportResultSchema } from "../../core/src/gen/dline/v1/import_pb.js";
import { CapabilitySchema, McpServerState, ToggleScope, ToggleState } from "../../core/src/gen/dline/v1/settings_pb.js";
import {
  capabilityRow,
  groupCapabilities,
  toggleChoices,
  trustConfirmation,
  trustRow,
} from "../../adapters/vscode/src/capabilities/capability-mapping.js";
import {
  importPickRows,
  importResultLines,
  importSummary,
  outcomeWord,
} from "../../adapters/vscode/src/import/import-mapping.js";
import { nth } from "../helpers/items.js";

describe("import from Cline: mapping", () => {
  const items = [
    create(ImportItemSchema, {
      sourceKey: "legacy:1",
      kind: ImportItemKind.LEGACY_TASK,
      title: "Old task",
      workspaceNote: "legacy tasks do not record their folder",
      messageCount: 5n,
      models: ["claude-sonnet-4-5"],
      createdAt: 1_717_000_000_000n,
      updatedAt: 1_717_000_000_000n,
    }),
    create(ImportItemSchema, {
      sourceKey: "legacy:2",
      kind: ImportItemKind.LEGACY_TASK,
      title: "",
      skippedReason: "ui_messages.json is not valid JSON",
      skippedCode: "malformed",
      updatedAt: 1_717_000_009_000n,
    }),
    create(ImportItemSchema, {
      sourceKey: "session:3",
      kind: ImportItemKind.SESSION,
      title: "New session",
      workspaceRoot: "/p",
      messageCount: 1n,
      importedTaskId: "t-3",
      updatedAt: 1_717_000_005_000n,
    }),
  ];

  it("lists importable items newest first, then skipped ones (not selectable) with their reason", () => {
    const rows = importPickRows(items);
    expect(rows.map((r) => [r.sourceKey, r.selectable])).toEqual([
      ["session:3", true],
      ["legacy:1", true],
      ["legacy:2", false],
    ]);
    expect(rows[0]).toMatchObject({
      label: "New session",
      description: "Cline session · /p · already imported",
      detail: "1 message",
    });
    expect(rows[1]).toMatchObject({
      description: "Cline task · legacy tasks do not record their folder",
      detail: "5 messages · claude-sonnet-4-5 · 2024-05-29",
    });
    expect(rows[2]).toMatchObject({ label: "(untitled)", detail: "Skipped: ui_messages.json is not valid JSON" });
  });

  const results = [
    create(ImportResultSchema, {
      sourceKey: "legacy:1",
      title: "Old task",
      outcome: "imported",
      taskId: "t-1",
      notCarriedOver: ["images", "checkpoints"],
    }),
    create(ImportResultSchema, {
      sourceKey: "session:3",
      title: "New session",
      outcome: "already_imported",
      taskId: "t-3",
    }),
    create(ImportResultSchema, { sourceKey: "legacy:9", outcome: "failed", error: "disk full" }),
  ];

  it("says each outcome in words, with what was not carried over and the error", () => {
    expect(["imported", "would_import", "already_imported", "skipped", "failed", ""].map(outcomeWord)).toEqual([
      "imported",
      "would be imported",
      "already imported",
      "skipped",
      "failed",
      "unknown outcome",
    ]);
    expect(importResultLines(results, false)).toEqual([
      "Old task (legacy:1): imported; task t-1; not carried over: images, checkpoints",
      "New session (session:3): already imported; task t-3",
      "legacy:9 (legacy:9): failed; error: disk full",
    ]);
    expect(
      importResultLines(
        [create(ImportResultSchema, { sourceKey: "legacy:1", title: "Old task", outcome: "would_import" })],
        true,
      ),
    ).toEqual(["[dry run] Old task (legacy:1): would be imported"]);
  });

  it("summarises the counts (dry run: would be imported)", () => {
    expect(importSummary(results, false)).toBe(
      "1 imported, 1 already imported, 1 failed, 1 with parts not carried over",
    );
    const dry = [
      create(ImportResultSchema, { outcome: "would_import" }),
      create(ImportResultSchema, { outcome: "skipped" }),
    ];
    expect(importSummary(dry, true)).toBe("1 would be imported, 0 already imported, 1 skipped, 0 failed");
  });
});

describe("Capabilities view: mapping", () => {
  const rule = create(CapabilitySchema, {
    kind: "rules",
    resource: "style.md",
    name: ".agents/rules/style.md",
    origin: "workspace",
    sourcePath: "/p/.agents/rules/style.md",
    enabled: false,
    toggle: {
      kind: "rules",
      resource: "style.md",
      enabled: false,
      decidedBy: ToggleScope.WORKSPACE,
      global: ToggleState.ENABLED,
      workspace: ToggleState.DISABLED,
      task: ToggleState.INHERIT,
    },
  });
  const server = create(CapabilitySchema, {
    kind: "mcp",
    resource: "files",
    name: "files",
    origin: "global",
    enabled: true,
    mcp: { state: McpServerState.FAILED, tools: [], restarts: 3, lastError: "spawn ENOENT", transport: "stdio" },
  });
  const skill = create(CapabilitySchema, {
    kind: "skills",
    resource: "pdf",
    name: "pdf",
    origin: "global",
    enabled: true,
    error: "SKILL.md has no name",
  });
  const other = create(CapabilitySchema, { kind: "zeta", resource: "z", name: "z", enabled: true });
  const rule2 = create(CapabilitySchema, {
    kind: "rules",
    resource: "a.md",
    name: "rules/a.md",
    origin: "global",
    enabled: true,
  });

  it("groups by kind in the view's order, unknown kinds last, names sorted", () => {
    const groups = groupCapabilities([other, server, rule, skill, rule2]);
    expect(groups.map((g) => [g.title, g.capabilities.map((c) => c.name)])).toEqual([
      ["Rules", [".agents/rules/style.md", "rules/a.md"]],
      ["Skills", ["pdf"]],
      ["MCP Servers", ["files"]],
      ["zeta", ["z"]],
    ]);
  });

  it("shows the effective state, origin and per-scope toggles", () => {
    const row = capabilityRow(rule);
    expect(row).toMatchObject({
      label: ".agents/rules/style.md",
      description: "disabled · workspace",
      icon: "circle-slash",
      contextValue: "dlineCapability",
    });
    expect(row.tooltip).toContain("Effective: disabled (decided by workspace)");
    expect(row.tooltip).toContain("Toggles: global enabled · workspace disabled · task inherit");
    expect(row.tooltip).toContain("Source: workspace — /p/.agents/rules/style.md");
  });

  it("shows an MCP server's status and last error, and a definition's error", () => {
    const row = capabilityRow(server);
    expect(row.description).toBe("enabled · global · failed · ⚠ spawn ENOENT");
    expect(row.icon).toBe("warning");
    expect(row.tooltip).toContain("MCP: failed over stdio, 3 restarts");
    expect(row.tooltip).toContain("Last MCP error: spawn ENOENT");
    const skillRow = capabilityRow(skill);
    expect(skillRow.icon).toBe("error");
    expect(skillRow.tooltip).toContain("Error: SKILL.md has no name");
  });

  it("offers Enabled / Disabled / Inherit with the current workspace state marked", () => {
    expect(toggleChoices(ToggleState.DISABLED).map((c) => [c.label, c.description, c.state])).toEqual([
      ["Enabled", "", ToggleState.ENABLED],
      ["Disabled", "current", ToggleState.DISABLED],
      ["Inherit", "use the global setting", ToggleState.INHERIT],
    ]);
    expect(nth(toggleChoices(undefined), 2, "toggle choice").description).toBe("current · use the global setting");
  });

  const untrustedHook = create(CapabilitySchema, {
    kind: "hooks",
    resource: "UserPromptSubmit.sh",
    name: "UserPromptSubmit",
    origin: "workspace",
    enabled: false,
    untrusted: true,
  });
  const untrustedServer = create(CapabilitySchema, {
    kind: "mcp",
    resource: "proj",
    name: "proj",
    origin: "workspace",
    enabled: false,
    untrusted: true,
    mcp: { state: McpServerState.UNTRUSTED, tools: [], transport: "stdio" },
  });

  it("shows untrusted workspace hooks and MCP servers as such, with the trust action on them", () => {
    const hook = capabilityRow(untrustedHook);
    expect(hook).toMatchObject({
      description: "disabled · workspace · untrusted",
      icon: "workspace-untrusted",
      contextValue: "dlineCapabilityUntrusted",
    });
    expect(hook.tooltip.at(-1)).toMatch(/do not run until you trust the workspace/);
    // The MCP state already says it: once.
    expect(capabilityRow(untrustedServer).description).toBe("disabled · workspace · untrusted");
    expect(capabilityRow(rule).contextValue).toBe("dlineCapability");
  });

  it("a row at the top offers trusting a workspace with untrusted entries, and stopping once trusted", () => {
    expect(trustRow(false, [rule, server])).toBeUndefined();
    const untrusted = trustRow(false, [rule, untrustedHook, untrustedServer])!;
    expect(untrusted).toMatchObject({
      label: "Workspace not trusted",
      description: "2 hooks/MCP servers not run",
      contextValue: "dlineWorkspaceUntrusted",
    });
    expect(untrusted.tooltip).toContain("Not run: UserPromptSubmit (hooks), proj (mcp)");
    expect(trustRow(true, [rule])).toMatchObject({
      label: "Workspace trusted",
      contextValue: "dlineWorkspaceTrusted",
      icon: "workspace-trusted",
    });
  });

  it("the confirmation says what trusting allows: running the workspace's hooks and MCP servers", () => {
    const ask = trustConfirmation("/p");
    expect(ask.message).toBe("Trust the workspace /p?");
    expect(ask.detail).toContain("run this workspace's own hooks (.agents/hooks) and MCP servers (.agents/mcp)");
    expect(ask.confirm).toBe("Trust");
  });
});
