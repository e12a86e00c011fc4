import * as path from "node:path";
import { toJson } from "@bufbuild/protobuf";
import {
  CapabilityFileProblemSchema,
  CapabilitySchema,
  CapabilityToggleSchema,
  McpServerState,
  ToggleScope,
  ToggleState,
} from "../../../../core/src/gen/dline/v1/settings_pb.js";
import { checkFlags, checkPositionals, stringFlag, UsageError, type ParsedArgs } from "../args.js";
import { printJson, withSidecar, type CliContext } from "../session.js";

const STATES: Record<string, ToggleState> = {
  enable: ToggleState.ENABLED,
  disable: ToggleState.DISABLED,
  inherit: ToggleState.INHERIT,
};
const SCOPES: Record<string, ToggleScope> = {
  global: ToggleScope.GLOBAL,
  workspace: ToggleScope.WORKSPACE,
  task: ToggleScope.TASK,
};
const mark = (s: ToggleState) => (s === ToggleState.ENABLED ? "on" : s === ToggleState.DISABLED ? "off" : "-");

/**
 * `dline capabilities [--workspace DIR] [--task ID] [--kind K] [--connect]`: every capability with
 * its source, toggles (global/workspace/task) and status.
 * `dline capabilities enable|disable|inherit KIND RESOURCE --scope global|workspace|task`: sets a toggle.
 * `dline capabilities trust|untrust [--workspace DIR]`: lets the workspace's own hooks and MCP
 * servers (`.agents/hooks`, `.agents/mcp`) run, or stops them.
 */
export async function capabilitiesCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, ["workspace", "task", "kind", "connect", "scope"]);
  const workspaceRoot = path.resolve(stringFlag(args, "workspace") ?? process.cwd());
  const taskId = stringFlag(args, "task") ?? "";
  checkPositionals(args, 3);
  const [action, kind, resource] = args.positionals;
  if (action === "trust" || action === "untrust") {
    if (kind !== undefined)
      throw new UsageError(
        `dline capabilities ${action} takes no arguments (the workspace is --workspace or the current folder).`,
      );
    return withSidecar(ctx, async (clients) => {
      const res = await clients.settings.trustWorkspace({ workspaceRoot, trusted: action === "trust" });
      if (ctx.json) printJson(ctx, { workspaceRoot, workspaceTrusted: res.workspaceTrusted });
      else
        ctx.out.write(
          `${workspaceRoot}: ${res.workspaceTrusted ? "trusted (its hooks and MCP servers may run)" : "not trusted (its hooks and MCP servers do not run)"}\n`,
        );
      return 0;
    });
  }
  if (action !== undefined) {
    const state = STATES[action];
    if (state === undefined)
      throw new UsageError(`dline capabilities takes enable, disable, inherit, trust or untrust, not "${action}".`);
    if (!kind || !resource) throw new UsageError(`dline capabilities ${action} needs KIND and RESOURCE.`);
    const scope = SCOPES[stringFlag(args, "scope") ?? "workspace"];
    if (scope === undefined) throw new UsageError("--scope takes global, workspace or task.");
    return withSidecar(ctx, async (clients) => {
      const res = await clients.settings.setCapabilityToggle({ scope, workspaceRoot, taskId, kind, resource, state });
      if (ctx.json) printJson(ctx, { toggle: toJson(CapabilityToggleSchema, res.toggle!) });
      else ctx.out.write(`${kind} ${resource}: ${res.toggle!.enabled ? "enabled" : "disabled"}\n`);
      return 0;
    });
  }
  return withSidecar(ctx, async (clients) => {
    const res = await clients.settings.listCapabilities({
      workspaceRoot,
      taskId,
      kind: stringFlag(args, "kind") ?? "",
      connectMcp: args.flags.has("connect"),
    });
    if (ctx.json) {
      printJson(ctx, {
        capabilities: res.capabilities.map((c) => toJson(CapabilitySchema, c)),
        problems: res.problems.map((p) => toJson(CapabilityFileProblemSchema, p)),
        workspaceTrusted: res.workspaceTrusted,
      });
      return 0;
    }
    ctx.out.write("kind       on   g/w/t          name                          source\n");
    for (const c of res.capabilities) {
      const t = c.toggle!;
      const toggles = `${mark(t.global)}/${mark(t.workspace)}/${mark(t.task)}`;
      const status = c.mcp
        ? ` [${McpServerState[c.mcp.state].toLowerCase()}${c.mcp.restarts ? `, ${c.mcp.restarts} restarts` : ""}]`
        : c.untrusted
          ? " [untrusted]"
          : "";
      ctx.out.write(
        `${c.kind.padEnd(10)} ${(c.enabled ? "yes" : "no").padEnd(4)} ${toggles.padEnd(14)} ${(c.name + status).padEnd(29)} ${c.sourcePath}\n`,
      );
      if (c.error) ctx.out.write(`           ! ${c.error}\n`);
    }
    if (res.capabilities.length === 0) ctx.out.write("no capabilities\n");
    for (const p of res.problems) ctx.out.write(`${p.code}: ${p.path}: ${p.message}\n`);
    if (res.capabilities.some((c) => c.untrusted))
      ctx.out.write(
        `This workspace's hooks and MCP servers do not run until you trust it: dline capabilities trust --workspace ${workspaceRoot}\n`,
      );
    return 0;
  });
}
