import { randomBytes } from "node:crypto";

/** A fresh bearer token per start: 256 random bits, URL-safe (checked by auth.ts). */
export function generateToken(): string {
  return randomBytes(32).toString("base64url");
}
