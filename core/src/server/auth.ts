import { randomBytes, timingSafeEqual, createHash } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/** A fresh bearer token per start: 256 random bits, URL-safe. */
export function generateToken(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * Compares in constant time. Both sides are hashed first so that the comparison does not
 * leak the token's length either.
 */
export function tokenMatches(expected: string, presented: string): boolean {
  const a = createHash("sha256").update(expected).digest();
  const b = createHash("sha256").update(presented).digest();
  return timingSafeEqual(a, b);
}

export function bearerFrom(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Rejects every RPC without `Authorization: Bearer <token>` as `unauthenticated` (HTTP 401 for
 * unary calls; the end-of-stream error for streams), before the handler runs.
 */
export function authInterceptor(token: string): Interceptor {
  return (next) => async (req) => {
    const presented = bearerFrom(req.header.get("authorization"));
    if (presented === undefined || !tokenMatches(token, presented)) {
      throw new ConnectError("Missing or wrong bearer token.", Code.Unauthenticated);
    }
    return next(req);
  };
}
