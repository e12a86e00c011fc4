/** SettingsService.ListCapabilities: maps the capabilities listing to proto, nothing else. */
import * as path from "node:path";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Capabilities, CapabilityView } from "../capabilities/index.js";
import type { McpState } from "../capabilities/mcp/connection.js";
import { DlineError } from "../errors.js";
import {
  CapabilityFileProblemSchema,
  CapabilitySchema,
  CapabilityToggleSchema,
  ListCapabilitiesResponseSchema,
  McpServerState,
  McpServerStatusSchema,
  ToggleScope,
  ToggleState,
  type SettingsService,
} from "../gen/dline/v1/settings_pb.js";
import type { ToggleState as DomainToggleState } from "../storage/capability-toggles.js";

const TOGGLE_STATES: Record<DomainToggleState, ToggleState> = {
  inherit: ToggleState.INHERIT,
  enabled: ToggleState.ENABLED,
  disabled: ToggleState.DISABLED,
};

const DECIDED_BY = { global: ToggleScope.GLOBAL, workspace: ToggleScope.WORKSPACE, task: ToggleScope.TASK } as const;

const MCP_STATES: Record<McpState, McpServerState> = {
  stopped: McpServerState.STOPPED,
  starting: McpServerState.STARTING,
  connected: McpServerState.CONNECTED,
  restarting: McpServerState.RESTARTING,
  failed: McpServerState.FAILED,
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

export function capabilitiesMethods(capabilities: Capabilities): Pick<ServiceImpl<typeof SettingsService>, "listCapabilities"> {
  return {
    async listCapabilities(req) {
      if (req.workspaceRoot && !path.isAbsolute(req.workspaceRoot)) throw new DlineError("invalid_argument", "workspace_root must be an absolute path.");
      const listing = await capabilities.list({
        workspaceRoot: req.workspaceRoot || undefined,
        taskId: req.taskId || undefined,
        kind: req.kind || undefined,
        connectMcp: req.connectMcp,
      });
      return create(ListCapabilitiesResponseSchema, {
        capabilities: listing.capabilities.map(capabilityMessage),
        problems: listing.problems.map((p) => create(CapabilityFileProblemSchema, p)),
      });
    },
  };
}
