/**
 * Requests without the right token are judged on their headers alone: the body is never kept
 * or parsed (a 16 MB body without a token used to be buffered, and parsed, before the token
 * was checked; now a small one is dropped as it arrives and a large one cuts the connection),
 * and the connection is closed after the answer, so a peer without the token can neither make
 * the sidecar work nor keep connections open. Connections that have not shown the token yet
 * are bounded too (`boundUnauthenticatedConnections`), without ever cutting an editor's own.
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
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
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
    res
      .writeHead(401, {
        ...close,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
      })
      .end(body);
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

export interface ConnectionBound {
  /** Connections without the token kept open once they had `graceMs` to send a request. */
  max: number;
  /**
   * How long a new connection has to show the token before it counts against `max`. An editor
   * opens many connections at once (a stream each, a pool of keep-alive ones), and the sidecar
   * accepts a burst of them before it reads any; they must not be taken for silent peers.
   */
  graceMs?: number;
  /** Connections without the token past which the oldest is closed at once, whatever its age. */
  ceiling?: number;
}

/**
 * Bounds the connections that have not carried a request with the token: past `max`, the oldest
 * of those that had `graceMs` to send their request is closed (a silent peer cannot hold many
 * open; an editor's burst of new connections authenticates within the grace); past `ceiling`
 * the oldest is closed at once. A connection that showed the token never counts again, however
 * long it stays open or idle. Slow or silent peers also meet the server's headers timeout.
 */
export function boundUnauthenticatedConnections(server: net.Server, bound: ConnectionBound): void {
  server.on("connection", unauthenticatedBound(bound));
}

/**
 * The same bound as a function to give every accepted connection to (the sidecar's connections
 * are accepted by its early front, then by its HTTP server, which is also given the front's).
 * A connection given twice counts once, from its first time.
 */
export function unauthenticatedBound(bound: ConnectionBound): (socket: net.Socket) => void {
  const { max, graceMs = 2_000, ceiling = max * 16 } = bound;
  /** Connections not known to be authenticated, oldest first, with the time each was accepted. */
  const pending = new Map<MarkedSocket, number>();
  let sweepQueued = false;
  let timer: NodeJS.Timeout | undefined;

  // Runs after the I/O callbacks of the loop turn that accepted a connection: the requests read
  // in that turn have marked their sockets before anything is judged (a connection accepted in
  // that turn is within its grace anyway).
  const sweep = () => {
    sweepQueued = false;
    for (const socket of pending.keys()) if (socket[AUTHENTICATED]) pending.delete(socket);
    const now = monotonicMs();
    for (const [socket, acceptedAt] of pending) {
      if (pending.size <= max) break;
      const waited = now - acceptedAt;
      if (waited < graceMs && pending.size <= ceiling) {
        clearTimeout(timer);
        timer = setTimeout(queueSweep, graceMs - waited).unref();
        break;
      }
      pending.delete(socket);
      socket.destroy();
    }
  };
  const queueSweep = () => {
    if (sweepQueued) return;
    sweepQueued = true;
    setImmediate(sweep);
  };

  const seen = new WeakSet<MarkedSocket>();
  return (socket: MarkedSocket) => {
    if (seen.has(socket)) return;
    seen.add(socket);
    pending.set(socket, monotonicMs());
    socket.once("close", () => pending.delete(socket));
    if (pending.size > max) queueSweep();
  };
}

/** A monotonic clock in ms (the global `performance` loads perf_hooks at its first use: about 1 ms of start-up). */
function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}
