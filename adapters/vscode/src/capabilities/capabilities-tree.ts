import * as vscode from "vscode";
import {
  ToggleScope,
  type Capability,
  type CapabilityFileProblem,
} from "../../../../core/src/gen/dline/v1/settings_pb.js";
import type { SidecarSupervisor } from "../sidecar/sidecar-supervisor.js";
import type { Log } from "../sidecar/log.js";
import {
  capabilityRow,
  groupCapabilities,
  toggleChoices,
  trustConfirmation,
  trustRow,
  type CapabilityGroup,
  type TrustRow,
} from "./capability-mapping.js";
import { visibleLine } from "../text/visible-text.js";

export type CapabilityNode =
  | { type: "trust"; row: TrustRow }
  | { type: "group"; group: CapabilityGroup }
  | { type: "capability"; capability: Capability }
  | { type: "problems"; problems: CapabilityFileProblem[] }
  | { type: "problem"; problem: CapabilityFileProblem };

/**
 * The Capabilities view: SettingsService.ListCapabilities for the first workspace folder,
 * grouped by kind. Refreshed on demand and after a toggle or a change of trust; MCP status is
 * what the core knows (servers start on demand). A row at the top says whether the workspace is
 * trusted (its own hooks and MCP servers run only then); the context key
 * `dline.workspaceTrusted` picks the view's title action (trust / stop trusting).
 */
export class CapabilitiesTree implements vscode.TreeDataProvider<CapabilityNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<CapabilityNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly supervisor: SidecarSupervisor,
    private readonly workspaceRoot: string | undefined,
    private readonly log: Log,
  ) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  async list(): Promise<{ capabilities: Capability[]; problems: CapabilityFileProblem[]; workspaceTrusted: boolean }> {
    const { clients } = await this.supervisor.ready();
    const listing = await clients.settings.listCapabilities({ workspaceRoot: this.workspaceRoot ?? "" });
    void vscode.commands.executeCommand("setContext", "dline.workspaceTrusted", listing.workspaceTrusted);
    return listing;
  }

  async getChildren(element?: CapabilityNode): Promise<CapabilityNode[]> {
    if (element?.type === "group")
      return element.group.capabilities.map((capability) => ({ type: "capability", capability }));
    if (element?.type === "problems") return element.problems.map((problem) => ({ type: "problem", problem }));
    if (element) return [];
    try {
      const listing = await this.list();
      const trust = this.workspaceRoot ? trustRow(listing.workspaceTrusted, listing.capabilities) : undefined;
      const nodes: CapabilityNode[] = trust ? [{ type: "trust", row: trust }] : [];
      nodes.push(...groupCapabilities(listing.capabilities).map((group): CapabilityNode => ({ type: "group", group })));
      if (listing.problems.length > 0) nodes.push({ type: "problems", problems: listing.problems });
      return nodes;
    } catch (err) {
      this.log.warn(`capabilities: ${(err as Error).message}`);
      return [];
    }
  }

  getTreeItem(node: CapabilityNode): vscode.TreeItem {
    switch (node.type) {
      case "trust": {
        const item = new vscode.TreeItem(visibleLine(node.row.label), vscode.TreeItemCollapsibleState.None);
        item.id = "trust";
        item.description = node.row.description;
        item.tooltip = node.row.tooltip;
        item.contextValue = node.row.contextValue;
        item.iconPath = new vscode.ThemeIcon(node.row.icon);
        if (node.row.contextValue === "dlineWorkspaceUntrusted")
          item.command = { command: "dline.capabilities.trust", title: "Trust This Workspace" };
        return item;
      }
      case "group": {
        const item = new vscode.TreeItem(node.group.title, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `group:${node.group.kind}`;
        item.description = String(node.group.capabilities.length);
        item.contextValue = "dlineCapabilityGroup";
        return item;
      }
      case "problems": {
        const item = new vscode.TreeItem("Problems", vscode.TreeItemCollapsibleState.Expanded);
        item.id = "problems";
        item.iconPath = new vscode.ThemeIcon("warning");
        return item;
      }
      case "problem": {
        const item = new vscode.TreeItem(visibleLine(node.problem.path), vscode.TreeItemCollapsibleState.None);
        item.description = node.problem.message;
        item.tooltip = `${node.problem.path}\n${node.problem.code}: ${node.problem.message}`;
        item.iconPath = new vscode.ThemeIcon("warning");
        return item;
      }
      case "capability": {
        const c = node.capability;
        const row = capabilityRow(c);
        const item = new vscode.TreeItem(visibleLine(row.label), vscode.TreeItemCollapsibleState.None);
        item.id = `${c.kind}:${c.origin}:${c.resource}`;
        item.description = row.description;
        item.tooltip = row.tooltip.join("\n");
        item.contextValue = row.contextValue;
        item.iconPath = new vscode.ThemeIcon(row.icon);
        return item;
      }
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** A capability from a command argument: the tree's node, a Capability, or { kind, resource }. */
function capabilityOf(arg: unknown): { kind: string; resource: string; workspace?: number } | undefined {
  const node = arg as Partial<CapabilityNode> & { kind?: string; resource?: string };
  if (node?.type === "capability" && "capability" in node && node.capability) {
    return {
      kind: node.capability.kind,
      resource: node.capability.resource,
      workspace: node.capability.toggle?.workspace,
    };
  }
  if (typeof node?.kind === "string" && typeof node.resource === "string")
    return { kind: node.kind, resource: node.resource };
  return undefined;
}

type Guard = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) => (...args: A) => Promise<R | undefined>;

/**
 * TrustWorkspace for the view's workspace, after a modal confirmation that says what trusting
 * allows (a keybinding or script that passes "confirmed" has chosen already). Returns whether
 * the workspace is trusted afterwards (undefined: the person declined or the dialog was refused).
 */
async function setTrust(
  supervisor: SidecarSupervisor,
  tree: CapabilitiesTree,
  workspaceRoot: string | undefined,
  trusted: boolean,
  arg: unknown,
): Promise<boolean | undefined> {
  if (!workspaceRoot) throw new Error("Open a folder to trust its workspace.");
  if (trusted && arg !== "confirmed") {
    const ask = trustConfirmation(workspaceRoot);
    const answer = await vscode.window.showWarningMessage(
      ask.message,
      { modal: true, detail: ask.detail },
      ask.confirm,
    );
    if (answer !== ask.confirm) return undefined;
  }
  const { clients } = await supervisor.ready();
  const res = await clients.settings.trustWorkspace({ workspaceRoot, trusted });
  tree.refresh();
  void vscode.window.showInformationMessage(
    res.workspaceTrusted
      ? "Dline trusts this workspace: its hooks and MCP servers may run."
      : "Dline no longer trusts this workspace: its hooks and MCP servers do not run.",
  );
  return res.workspaceTrusted;
}

export function registerCapabilityCommands(
  supervisor: SidecarSupervisor,
  tree: CapabilitiesTree,
  workspaceRoot: string | undefined,
  guard: Guard,
): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(
      "dline.capabilities.trust",
      guard(async (arg?: unknown) => setTrust(supervisor, tree, workspaceRoot, true, arg)),
    ),
    vscode.commands.registerCommand(
      "dline.capabilities.untrust",
      guard(async (arg?: unknown) => setTrust(supervisor, tree, workspaceRoot, false, arg)),
    ),
    vscode.commands.registerCommand(
      "dline.capabilities.refresh",
      guard(async () => tree.refresh()),
    ),
    /** Toggle at the workspace scope: Enabled / Disabled / Inherit. Returns the new toggle. */
    vscode.commands.registerCommand(
      "dline.capabilities.toggle",
      guard(async (arg: unknown) => {
        const target = capabilityOf(arg);
        if (!target) throw new Error("Choose a capability in the Capabilities view.");
        if (!workspaceRoot) throw new Error("Open a folder to change a capability for its workspace.");
        const picked = await vscode.window.showQuickPick(toggleChoices(target.workspace), {
          title: `${target.resource} (${target.kind}) in this workspace`,
          placeHolder: "Enable, disable, or inherit the global setting",
        });
        if (!picked) return undefined;
        const { clients } = await supervisor.ready();
        const res = await clients.settings.setCapabilityToggle({
          scope: ToggleScope.WORKSPACE,
          workspaceRoot,
          kind: target.kind,
          resource: target.resource,
          state: picked.state,
        });
        tree.refresh();
        return res.toggle;
      }),
    ),
  ];
}
