import type * as http from "node:http";

/**
 * The whole request body. Past `limit` the rest is read and dropped: one byte past the limit is
 * enough for connect to answer resource_exhausted.
 */
export function readBody(req: http.IncomingMessage, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      if (size > limit) return;
      size += chunk.byteLength;
      chunks.push(chunk);
    });
    req.once("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once("error", reject);
  });
}
