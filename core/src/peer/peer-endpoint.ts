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
  publishUntilDone(options, { url, token, startedAt: Date.now() });
  return { url };
}

/** Pauses between attempts to publish the entry (a full disk may take a while to be freed). */
const PUBLISH_RETRY_MS = [500, 1000, 2000, 5000];

/**
 * Publishes the endpoint in the registry. When that fails (the disk is full, say), the endpoint
 * keeps listening and publishing is tried again until it works or the sidecar stops: other
 * windows reach this one once there is room for its entry, without a restart.
 */
function publishUntilDone(options: PeerEndpointOptions, entry: Parameters<PeerRegistry["register"]>[0]): void {
  let attempt = 0;
  const publish = () => {
    if (options.lifecycle.isStopping) return;
    try {
      options.registry.register(entry);
      options.logger.info("peer endpoint listening", { url: entry.url, ...(attempt ? { attempts: attempt + 1 } : {}) });
      return;
    } catch (err) {
      if (attempt === 0)
        options.logger.warn("other Dline windows cannot reach this one until it is published; trying again", {
          error: (err as Error).message,
        });
    }
    const pause = PUBLISH_RETRY_MS[Math.min(attempt++, PUBLISH_RETRY_MS.length - 1)];
    setTimeout(publish, pause).unref();
  };
  publish();
}
