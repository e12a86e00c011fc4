import type * as http from "node:http";

/**
 * Whether a request is the Connect protocol's plain unary call: POST, `application/json` or
 * `application/proto`, no compression, no timeout header, protocol version 1 or unstated. Only
 * these take the short paths (unary-fast-path.ts, and the answers given while the services
 * load, deferred-handler.ts); every other request goes to connect's own handler.
 */
export function isPlainUnaryCall(req: http.IncomingMessage): boolean {
  const type = req.headers["content-type"];
  if (req.method !== "POST" || (type !== "application/json" && type !== "application/proto")) return false;
  if (req.headers["content-encoding"] !== undefined || req.headers["connect-timeout-ms"] !== undefined) return false;
  const version = req.headers["connect-protocol-version"];
  return version === undefined || version === "1";
}
