// Client kit for TypeScript callers (the CLI, the VS Code extension, tests): start a sidecar,
// read its handshake, and talk to it.
export { parseHandshake } from "./handshake.js";
export type { Handshake } from "./handshake.js";
export { spawnSidecar } from "./sidecar-process.js";
export type { SidecarProcess, SpawnSidecarOptions } from "./sidecar-process.js";
export { bearerInterceptor, createDlineClients, sidecarTransport } from "./clients.js";
export type { ClientOptions, DlineClients } from "./clients.js";
