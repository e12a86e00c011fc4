export { Capabilities, type CapabilityListing, type CapabilityView } from "./capabilities.js";
export { HOOK_EVENTS } from "./catalog.js";
export { StoredCapabilitySettings, type CapabilitySettings } from "./capability-settings.js";
export type { SessionMcpServer } from "./mcp/session-servers.js";
export type { McpListedState } from "./capabilities.js";
