import type * as http from "node:http";

/** The Connect protocol's `unavailable` error answer (HTTP 503), when the request is still open. */
export function answerUnavailable(res: http.ServerResponse, message: string): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify({ code: "unavailable", message });
  res.writeHead(503, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
}
