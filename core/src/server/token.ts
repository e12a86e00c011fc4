import { closeSync, openSync, readSync } from "node:fs";
import { randomBytes } from "node:crypto";

const TOKEN_BYTES = 32;

/**
 * A fresh bearer token per start: 256 random bits, URL-safe (checked by auth.ts). The bytes come
 * from the kernel's random device where there is one: loading node:crypto costs about 3 ms of
 * start-up, which the handshake line would wait for. Elsewhere (Windows) node:crypto supplies them.
 */
export function generateToken(): string {
  return (kernelRandomBytes(TOKEN_BYTES) ?? randomBytes(TOKEN_BYTES)).toString("base64url");
}

function kernelRandomBytes(count: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync("/dev/urandom", "r");
  } catch {
    return undefined;
  }
  try {
    const bytes = Buffer.alloc(count);
    let filled = 0;
    while (filled < count) {
      const read = readSync(fd, bytes, filled, count - filled, null);
      if (read <= 0) return undefined;
      filled += read;
    }
    return bytes;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
