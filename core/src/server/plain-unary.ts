import type * as http from "node:http";

/**
 * Whether a request is the Connect protocol's plain unary call: POST, `application/json` or
 * `application/proto`, no compression, no timeout header, protocol version 1 or unstated. Only
 * these take the short paths (unary-fast-path.ts, and the answers given while the services
 * load, deferred-handler.ts); every other request goes to connect's own handler. With
 * `anyDeadline`, a call with a valid timeout header is one too, for a caller whose answer does
 * not depend on the deadline.
 */
export function isPlainUnaryCall(
  req: Pick<http.IncomingMessage, "method" | "headers">,
  options: { anyDeadline?: boolean } = {},
): boolean {
  const type = req.headers["content-type"];
  if (req.method !== "POST" || (type !== "application/json" && type !== "application/proto")) return false;
  if (req.headers["content-encoding"] !== undefined) return false;
  const timeout = req.headers["connect-timeout-ms"];
  if (timeout !== undefined && !(options.anyDeadline && typeof timeout === "string" && VALID_TIMEOUT.test(timeout)))
    return false;
  const version = req.headers["connect-protocol-version"];
  return version === undefined || version === "1";
}

/**
 * A `Connect-Timeout-Ms` connect accepts (at most 10 digits; it refuses others as
 * invalid_argument), and not 0, whose deadline has passed before the call starts.
 */
const VALID_TIMEOUT = /^(?!0+$)\d{1,10}$/;
