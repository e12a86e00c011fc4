/**
 * Requests without the right token are answered from their headers alone: the body is never
 * read (a 16 MB body without a token used to be buffered, and parsed, before the token was
 * checked), and the connection is closed after the answer, so a peer without the token can
 * neither make the sidecar work nor keep connections open. Connections that have not shown
 * the token yet are bounded too: past `max`, the oldest of them is closed.
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
  const type = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  const close = { connection: "close" };
  if (type.startsWith("application/grpc")) {
    res.writeHead(200, { ...close, "content-type": type, "grpc-status": "16", "grpc-message": encodeURIComponent(MESSAGE), "content-length": "0" }).end();
  } else if (type.startsWith("application/connect+")) {
    const payload = Buffer.from(JSON.stringify({ error: { code: "unauthenticated", message: MESSAGE } }));
    const head = Buffer.alloc(5);
    head[0] = 0x02; // end of stream
    head.writeUInt32BE(payload.byteLength, 1);
    const body = Buffer.concat([head, payload]);
    res.writeHead(200, { ...close, "content-type": type, "content-length": String(body.byteLength) }).end(body);
  } else {
    const body = JSON.stringify({ code: "unauthenticated", message: MESSAGE });
    res.writeHead(401, { ...close, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }).end(body);
  }
  // The body was not read: nothing of it is wanted, and the connection ends with the answer.
  res.once("finish", () => req.socket.destroySoon());
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
