import type { App } from "../app.js";
import type { Base } from "../boot.js";
import { authInterceptor } from "../server/auth.js";
import { bearerAuthorizer } from "../server/bearer.js";
import { malformedBinaryIsInvalidArgument } from "../server/malformed-binary.js";
import { connectHandler } from "../server/node-adapter.js";
import { errorInterceptor } from "./error-interceptor.js";
import { RPC_READ_MAX_BYTES, RPC_WRITE_MAX_BYTES } from "./limits.js";
import { dlineServices } from "./services.js";
import type { SystemCalls } from "./system-calls.js";

/**
 * The sidecar's Connect handler: every call needs the bearer token, domain errors become Connect
 * codes, and each service loads on its first call (SystemService at once: the editor's first
 * calls are Initialize and Health; system-early.ts answers them while this is built).
 * `app` loads the domain modules once (main.ts may have started it before any call).
 */
export function createRpcHandler(
  base: Base,
  token: string,
  system: SystemCalls,
  app: () => Promise<App>,
): ReturnType<typeof connectHandler> {
  const { logger } = base;
  const handler = connectHandler({
    // The token is checked on the headers, before any body is read (the interceptor checks it again).
    authorize: bearerAuthorizer(token),
    services: dlineServices(base, app, system),
    interceptors: [authInterceptor(token), errorInterceptor(logger.child("rpc"))],
    readMaxBytes: RPC_READ_MAX_BYTES,
    writeMaxBytes: RPC_WRITE_MAX_BYTES,
    rewriteUnary: malformedBinaryIsInvalidArgument,
    onBrokenCall: (method, reason, clientGone) =>
      clientGone
        ? logger.debug("the client went away during a call", { method })
        : logger.warn("call ended without an answer", { method, error: (reason as Error)?.message }),
    onLoadFailed: (service, reason) =>
      logger.error("cannot load a service", { service, error: (reason as Error)?.message }),
  });
  handler.preload("dline.v1.SystemService");
  return handler;
}
