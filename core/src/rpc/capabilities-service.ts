/**
 * SettingsService.ListCapabilities and TrustWorkspace: map the capabilities listing to proto.
 * SetCapabilityToggle is the settings service's; wrapped here so that an MCP server toggled off
 * stops at once.
 */
import * as path from "node:path";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Capabilities, CapabilityView, McpListedState } from "../capabilities/index.js";
import { DlineError } from "../errors.js";
import {
  CapabilityFileProblemSchema,
  CapabilitySchema,
  CapabilityToggleSchema,
  ListCapabilitiesResponseSchema,
  TrustWorkspaceResponseSchema,
  McpServerState,
  McpServerStatusSchema,
  ToggleScope,
  ToggleState,
  type SettingsService,
} from "../gen/dline/v1/settings_pb.js";
import type { ToggleState as DomainToggleState } from "../storage/index.js";

const TOGGLE_STATES: Record<DomainToggleState, ToggleState> = {
  inherit: ToggleState.INHERIT,
  enabled: ToggleState.ENABLED,
  disabled: ToggleState.DISABLED,
};

const DECIDED_BY = { global: ToggleScope.GLOBAL, workspace: ToggleScope.WORKSPACE, task: ToggleScope.TASK } as const;

const MCP_STATES: Record<McpListedState, McpServerState> = {
  stopped: McpServerState.STOPPED,
  starting: McpServerState.STARTING,
  connected: McpServerState.CONNECTED,
  restarting: McpServerState.RESTARTING,
  failed: McpServerState.FAILED,
  untrusted: McpServerState.UNTRUSTED,
};

function capabilityMessage(c: CapabilityView) {
  const t = c.toggle;
  return create(CapabilitySchema, {
    kind: c.kind,
    resource: c.resource,
    name: c.name,
    description: c.description,
    origin: c.origin,
    sourcePath: c.sourcePath,
    enabled: c.enabled,
    error: c.error ?? "",
    untrusted: c.untrusted,
    toggle: create(CapabilityToggleSchema, {
      kind: t.kind,
      resource: t.resource,
      enabled: t.enabled,
      decidedBy: t.decidedBy ? DECIDED_BY[t.decidedBy] : ToggleScope.UNSPECIFIED,
      global: TOGGLE_STATES[t.global],
      workspace: TOGGLE_STATES[t.workspace],
      task: TOGGLE_STATES[t.task],
    }),
    mcp: c.mcp
      ? create(McpServerStatusSchema, {
          state: MCP_STATES[c.mcp.state],
          tools: c.mcp.tools,
          restarts: c.mcp.restarts,
          lastError: c.mcp.lastError ?? "",
          transport: c.mcp.transport,
        })
      : undefined,
  });
}

function requireAbsolute(workspaceRoot: string, required: boolean): void {
  if (required && !workspaceRoot) throw new DlineError("invalid_argument", "workspace_root is required.");
  if (workspaceRoot && !path.isAbsolute(workspaceRoot))
    throw new DlineError("invalid_argument", "workspace_root must be an absolute path.");
}

export function capabilitiesMethods(
  capabilities: Capabilities,
  settings: Partial<ServiceImpl<typeof SettingsService>>,
): Pick<ServiceImpl<typeof SettingsService>, "listCapabilities" | "trustWorkspace" | "setCapabilityToggle"> {
  return {
    async setCapabilityToggle(req, context) {
      if (!settings.setCapabilityToggle) throw new DlineError("internal", "SetCapabilityToggle is not available.");
      const response = await settings.setCapabilityToggle(req, context);
      await capabilities.applyToggle(
        { workspaceRoot: req.workspaceRoot || undefined, taskId: req.taskId || undefined },
        req.kind,
        req.resource,
      );
      return response;
    },

    async trustWorkspace(req) {
      requireAbsolute(req.workspaceRoot, true);
      await capabilities.trustWorkspace(req.workspaceRoot, req.trusted);
      return create(TrustWorkspaceResponseSchema, { workspaceTrusted: req.trusted });
    },

    async listCapabilities(req) {
      requireAbsolute(req.workspaceRoot, false);
      const listing = await capabilities.list({
        workspaceRoot: req.workspaceRoot || undefined,
        taskId: req.taskId || undefined,
        kind: req.kind || undefined,
        connectMcp: req.connectMcp,
      });
      return create(ListCapabilitiesResponseSchema, {
        capabilities: listing.capabilities.map(capabilityMessage),
        problems: listing.problems.map((p) => create(CapabilityFileProblemSchema, p)),
        workspaceTrusted: listing.workspaceTrusted,
      });
    },
  };
}
