/**
 * Requests without the right token are judged on their headers alone: the body is never kept
 * or parsed (a 16 MB body without a token used to be buffered, and parsed, before the token
 * was checked; now a small one is dropped as it arrives and a large one cuts the connection),
 * and the connection is closed after the answer, so a peer without the token can neither make
 * the sidecar work nor keep connections open. Connections that have not shown the token yet
 * are bounded too: past `max`, the oldest of them is closed.
 */
import type * as http from "node:http";
import type * as net from "node:net";

const MESSAGE = "Missing or wrong bearer token.";
/** Marks a socket that carried a request with the right token (a property: no registry to keep). */
const AUTHENTICATED = Symbol("dline.authenticated");

type MarkedSocket = net.Socket & { [AUTHENTICATED]?: true };

export function markAuthenticated(socket: net.Socket): void {
  (socket as MarkedSocket)[AUTHENTICATED] = true;
}

/**
 * The `unauthenticated` answer in the request's protocol: Connect unary (HTTP 401 with a JSON
 * error), Connect streaming (an end-of-stream envelope), gRPC and gRPC-web (trailers-only).
 */
export function answerUnauthenticated(req: http.IncomingMessage, res: http.ServerResponse): void {
  // Nothing of the body is kept: a small one is read and dropped, then answered (a client
  // still sending it would otherwise see its connection cut instead of the answer); past
  // DISCARD_BYTES the connection is cut without one.
  let discarded = 0;
  req.on("data", (chunk: Buffer) => {
    discarded += chunk.byteLength;
    if (discarded > DISCARD_BYTES) req.socket.destroy();
  });
  req.once("end", () => {
    if (!res.destroyed) writeAnswer(req, res);
  });
}

function writeAnswer(req: http.IncomingMessage, res: http.ServerResponse): void {
  const type = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  // The connection ends with the answer.
  const close = { connection: "close" };
  if (type.startsWith("application/grpc")) {
    // gRPC-web carries the status in a trailer frame (flag 0x80) at the end of the body.
    const trailer = Buffer.from(`grpc-status: 16\r\ngrpc-message: ${encodeURIComponent(MESSAGE)}\r\n`);
    const body = Buffer.concat([frameHead(0x80, trailer.byteLength), trailer]);
    res.writeHead(200, { ...close, "content-type": type, "content-length": String(body.byteLength) }).end(body);
  } else if (type.startsWith("application/connect+")) {
    const payload = Buffer.from(JSON.stringify({ error: { code: "unauthenticated", message: MESSAGE } }));
    const body = Buffer.concat([frameHead(0x02, payload.byteLength), payload]); // end of stream
    res.writeHead(200, { ...close, "content-type": type, "content-length": String(body.byteLength) }).end(body);
  } else {
    const body = JSON.stringify({ code: "unauthenticated", message: MESSAGE });
    res.writeHead(401, { ...close, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }).end(body);
  }
}

/** A client with a stale token still gets its answer for an ordinary request (a prompt, a settings patch). */
const DISCARD_BYTES = 256 * 1024;

function frameHead(flags: number, length: number): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(length, 1);
  return head;
}

/**
 * Keeps at most `max` connections open that have not carried a request with the token (an
 * editor's first connection authenticates with its first request); past that, the oldest is
 * closed. Slow or silent peers also meet the server's headers timeout.
 */
export function boundUnauthenticatedConnections(server: http.Server, max: number): void {
  const pending = new Set<MarkedSocket>();
  server.on("connection", (socket: MarkedSocket) => {
    pending.add(socket);
    socket.once("close", () => pending.delete(socket));
    if (pending.size <= max) return;
    for (const s of pending) {
      if (s[AUTHENTICATED]) {
        pending.delete(s);
        continue;
      }
      pending.delete(s);
      s.destroy();
      break;
    }
  });
}
