// Sidecars over the same roots serve each other's tasks: the registry that finds them, the
// endpoint that serves forwarded calls, the router that forwards them, and the follower that
// streams a task's events from wherever it runs.
export { PeerRegistry } from "./peer-registry.js";
export type { PeerEntry, PeerLookup } from "./peer-registry.js";
export { startPeerEndpoint } from "./peer-endpoint.js";
export type { PeerEndpointOptions } from "./peer-endpoint.js";
export { PeerConnections } from "./peer-clients.js";
export type { PeerClients } from "./peer-clients.js";
export { TaskRouter, unreachable } from "./task-router.js";
export type { TaskRoute } from "./task-router.js";
export { followTask } from "./task-follower.js";
export type { FollowDeps } from "./task-follower.js";
