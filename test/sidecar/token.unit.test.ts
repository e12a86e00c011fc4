import { describe, expect, it } from "vitest";
import { bearerFrom, tokenMatches } from "../../core/src/server/bearer.js";
import { generateToken } from "../../core/src/server/token.js";

describe("the bearer token", () => {
  it("is 256 random bits, URL-safe, fresh on every start", () => {
    const tokens = new Set(Array.from({ length: 200 }, () => generateToken()));
    expect(tokens.size).toBe(200);
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token, "base64url").byteLength).toBe(32);
    }
    // Every bit position takes both values across the tokens (a constant or zeroed byte would not).
    const bytes = [...tokens].map((t) => Buffer.from(t, "base64url"));
    for (let bit = 0; bit < 256; bit++) {
      const ones = bytes.filter((b) => (b.readUInt8(bit >> 3) >> (bit & 7)) & 1).length;
      expect(ones).toBeGreaterThan(0);
      expect(ones).toBeLessThan(bytes.length);
    }
  });

  it("matches only the same token, whichever byte differs", () => {
    const token = generateToken();
    const expected = Buffer.from(token);
    expect(tokenMatches(expected, token)).toBe(true);
    for (let i = 0; i < token.length; i++) {
      const changed = token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1);
      expect(tokenMatches(expected, changed)).toBe(false);
    }
    expect(tokenMatches(expected, "")).toBe(false);
    expect(tokenMatches(expected, token.slice(1))).toBe(false);
    expect(tokenMatches(expected, token + "A")).toBe(false);
    // Same length in characters, other bytes: a non-ASCII character is two bytes in UTF-8.
    expect(tokenMatches(expected, "é" + token.slice(1))).toBe(false);
  });

  it("is read from the Authorization header's Bearer scheme only", () => {
    expect(bearerFrom("Bearer abc")).toBe("abc");
    expect(bearerFrom("bearer  abc ")).toBe("abc");
    expect(bearerFrom("Basic abc")).toBeUndefined();
    expect(bearerFrom("Bearer a b")).toBeUndefined();
    expect(bearerFrom(undefined)).toBeUndefined();
  });
});
