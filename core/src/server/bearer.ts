import type { CallHead } from "./deferred-handler.js";
import { markAuthenticated } from "./unauthenticated.js";

/**
 * Compares in constant time: every byte is compared, whatever differs, and the differences are
 * only combined (no early exit), as node:crypto's timingSafeEqual does; that module is not loaded
 * for this, as it costs about 3 ms that the editor's first call would wait for. Tokens of another
 * length are refused before comparing: every token is 43 characters, so the length is no secret.
 */
export function tokenMatches(expected: Buffer, presented: string): boolean {
  const b = Buffer.from(presented);
  if (expected.byteLength !== b.byteLength) return false;
  let difference = 0;
  for (let i = 0; i < b.byteLength; i++) difference |= expected[i]! ^ b[i]!;
  return difference === 0;
}

export function bearerFrom(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Whether a request shows `Authorization: Bearer <token>`, from its headers alone; a connection
 * that showed it is marked as authenticated (see unauthenticated.ts). Loads nothing of connect.
 */
export function bearerAuthorizer(token: string): (req: Pick<CallHead, "headers" | "socket">) => boolean {
  const expected = Buffer.from(token);
  return (req) => {
    const presented = bearerFrom(req.headers.authorization);
    if (presented === undefined || !tokenMatches(expected, presented)) return false;
    markAuthenticated(req.socket);
    return true;
  };
}
