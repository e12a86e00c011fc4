import type { Base } from "../boot.js";
import { appLoader } from "../boot.js";
import { authInterceptor, bearerFrom, tokenMatches } from "../server/auth.js";
import { markAuthenticated } from "../server/unauthenticated.js";
import { malformedBinaryIsInvalidArgument } from "../server/malformed-binary.js";
import { connectHandler } from "../server/node-adapter.js";
import { errorInterceptor } from "./error-interceptor.js";
import { dlineServices } from "./services.js";

/**
 * The sidecar's Connect handler: every call needs the bearer token, domain errors become Connect
 * codes, and each service loads on its first call (SystemService at once: the editor's first
 * calls are Initialize and Health).
 */
export function createRpcHandler(base: Base, token: string): ReturnType<typeof connectHandler> {
  const { logger } = base;
  const expected = Buffer.from(token);
  const handler = connectHandler({
    // The token is checked on the headers, before any body is read (the interceptor checks it again).
    authorize: (req) => {
      const presented = bearerFrom(req.headers.authorization);
      if (presented === undefined || !tokenMatches(expected, presented)) return false;
      markAuthenticated(req.socket);
      return true;
    },
    services: dlineServices(base, appLoader(base)),
    interceptors: [authInterceptor(token), errorInterceptor(logger.child("rpc"))],
    // Bounds memory per request; the largest legitimate request is a settings patch or a prompt.
    readMaxBytes: 16 * 1024 * 1024,
    writeMaxBytes: 64 * 1024 * 1024,
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
