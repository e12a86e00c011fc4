export { Capabilities, type CapabilityListing, type CapabilityView } from "./capabilities.js";
export { HOOK_EVENTS } from "./catalog.js";
