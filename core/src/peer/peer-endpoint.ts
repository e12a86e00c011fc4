import * as http from "node:http";
import type { Lifecycle } from "../lifecycle.js";
import type { Logger } from "../logging/logger.js";
import { listen } from "../server/listen.js";
import { generateToken } from "../server/token.js";
import { boundUnauthenticatedConnections } from "../server/unauthenticated.js";
import type { PeerRegistry } from "./peer-registry.js";

/** Connections open at once that have not shown the peer token yet; past this the oldest is closed. */
const MAX_UNAUTHENTICATED_CONNECTIONS = 16;

export interface PeerEndpointOptions {
  registry: PeerRegistry;
  lifecycle: Lifecycle;
  logger: Logger;
  /** Builds the handler of the forwarded calls, which accepts only `token` (rpc/peer-handler.ts). */
  handler(token: string): http.RequestListener;
}

/**
 * The endpoint other sidecars over the same roots forward calls to: a second server on a free
 * loopback port with its own token, which only sidecars know (from the registry, a file only
 * this user can read). Editors never see it: their token is not accepted here, and this one is
 * not accepted by the editor's server. Published in the registry once listening; unpublished
 * when the sidecar stops (or exits by any other way).
 */
export async function startPeerEndpoint(options: PeerEndpointOptions): Promise<{ url: string }> {
  const token = generateToken();
  const server = http.createServer(
    { keepAliveTimeout: 60_000, noDelay: true, headersTimeout: 10_000, requestTimeout: 60_000 },
    options.handler(token),
  );
  boundUnauthenticatedConnections(server, { max: MAX_UNAUTHENTICATED_CONNECTIONS });
  const url = await listen(server, { kind: "tcp", host: "127.0.0.1", port: 0 });
  const unregister = () => {
    try {
      options.registry.unregister();
    } catch {
      // the folder went away: nothing is left to unpublish
    }
  };
  process.once("exit", unregister);
  options.lifecycle.onStop("peer endpoint", () => {
    unregister();
    server.close();
    server.closeIdleConnections();
    // Forwarded streams end with the lifecycle signal; whatever is left is cut after a short grace.
    setTimeout(() => server.closeAllConnections(), 200).unref();
  });
  options.registry.register({ url, token, startedAt: Date.now() });
  options.logger.info("peer endpoint listening", { url });
  return { url };
}
