import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { bearerFrom, tokenMatches } from "./bearer.js";

/**
 * Rejects every RPC without `Authorization: Bearer <token>` as `unauthenticated` (HTTP 401 for
 * unary calls; the end-of-stream error for streams), before the handler runs.
 */
export function authInterceptor(token: string): Interceptor {
  const expected = Buffer.from(token);
  return (next) => async (req) => {
    const presented = bearerFrom(req.header.get("authorization"));
    if (presented === undefined || !tokenMatches(expected, presented)) {
      throw new ConnectError("Missing or wrong bearer token.", Code.Unauthenticated);
    }
    return next(req);
  };
}
