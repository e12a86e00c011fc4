import type * as http from "node:http";
import * as net from "node:net";
import type { EarlyAnswer, EarlyAnswers } from "./deferred-handler.js";
import { listen, type ListenTarget } from "./listen.js";
import { scanSimpleRequest, type SimpleRequestLimits } from "./simple-request.js";

export interface EarlyFrontOptions {
  answers: EarlyAnswers;
  limits: SimpleRequestLimits;
  /** As node:http's headersTimeout: a connection has this long to send a request (here, head and body). */
  headersTimeoutMs: number;
  /** As node:http's: an idle connection is closed after this long. */
  keepAliveTimeoutMs: number;
  /** Every accepted connection, as the HTTP server's `connection` event would give it. */
  onConnection: (socket: net.Socket) => void;
  /** Builds the HTTP server (loading node:http), not listening yet; called once, when first needed. */
  createHttpServer: () => Promise<http.Server>;
}

/**
 * The listening socket until a call needs node:http. The editor's first calls (Health,
 * Initialize) are answered here, from the raw bytes, when they are of the plainest kind
 * (simple-request.ts) and the early answers take them: node:http (its modules, its server's
 * first request, about 5 ms of start-up) loads only with the first call answered otherwise.
 * Then the HTTP server adopts the listening socket, so that later connections go to it
 * directly, and each connection here is given to it, with the bytes it sent, at its first
 * request not answered here (or at once, between requests). node:http reads that request as if
 * it had been the first to see the connection.
 */
export class EarlyFront {
  private readonly listener: net.Server;
  private http: Promise<http.Server> | undefined;
  private readonly connections = new Set<FrontConnection>();
  private closing = false;
  /** A call needed node:http: every connection goes to it. */
  private movingAll = false;

  constructor(private readonly options: EarlyFrontOptions) {
    this.listener = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => this.accept(socket));
  }

  async listen(target: ListenTarget): Promise<string> {
    if (target.kind === "unix") {
      // Another server can adopt a TCP listening handle only (`listen(handle)`): on a Unix
      // socket, node:http listens from the start and reads every connection.
      this.movingAll = true;
      const server = await this.options.createHttpServer();
      this.http = Promise.resolve(server);
      return listen(server, target);
    }
    return listen(this.listener, target);
  }

  /** Stops accepting, closes idle connections now and the rest after `graceMs` (as node:http's `close`). */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    for (const connection of this.connections) connection.closeWhenIdle();
    setTimeout(() => {
      for (const connection of this.connections) connection.socket.destroy();
    }, graceMs).unref();
    const server = await this.http?.catch(() => undefined);
    if (!server) {
      await new Promise<void>((resolve) => this.listener.close(() => resolve()));
      return;
    }
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), graceMs).unref();
    });
  }

  private accept(socket: net.Socket): void {
    this.options.onConnection(socket);
    if (this.closing) {
      socket.destroy();
      return;
    }
    const connection = new FrontConnection(socket, this.options, (bytes) => this.handOver(connection, bytes));
    this.connections.add(connection);
    socket.once("close", () => this.connections.delete(connection));
    connection.start(this.movingAll);
  }

  /** Gives a connection, and the bytes it sent that were not answered, to the HTTP server. */
  private handOver(connection: FrontConnection, unread: Buffer): void {
    this.connections.delete(connection);
    const { socket } = connection;
    if (socket.destroyed) return;
    socket.pause();
    if (unread.length) socket.unshift(unread);
    if (!this.movingAll) {
      // From now on node:http answers every call: the other connections go to it between requests.
      this.movingAll = true;
      for (const other of [...this.connections]) other.handOverWhenIdle();
    }
    this.httpServer().then(
      (server) => {
        if (socket.destroyed) return;
        // node:http reads the connection from here on; its own error handling replaces ours
        // once it has attached it.
        server.emit("connection", socket);
        socket.removeListener("error", destroyOnError);
        socket.resume();
      },
      () => socket.destroy(),
    );
  }

  /** The HTTP server, listening on the front's socket from then on (built at the first call). */
  private httpServer(): Promise<http.Server> {
    if (this.http) return this.http;
    const building = this.options.createHttpServer().then(
      (server) =>
        new Promise<http.Server>((resolve, reject) => {
          server.once("error", reject);
          // The documented form `listen(handle)` with the front's TCP handle: node:http's
          // connection tracking (its timeouts, closeAllConnections) starts with its `listening` event.
          server.listen(this.listener, () => {
            server.removeListener("error", reject);
            resolve(server);
          });
        }),
    );
    this.http = building;
    // A failed build is tried again by the next call that needs it (as DeferredHandler does).
    building.catch(() => {
      if (this.http === building) this.http = undefined;
    });
    return building;
  }
}

const LF = 0x0a;

function destroyOnError(this: net.Socket): void {
  this.destroy();
}

/** One connection while the front reads it: its requests until one is not answered here. */
class FrontConnection {
  /** What the peer sent that was read here and not answered yet. */
  private bytes: Buffer = Buffer.alloc(0);
  /** Bytes received since, joined to `bytes` when they are read (not at each chunk: a peer may send a byte at a time). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The length the request in `bytes` takes, once its head was read. */
  private needed: number | undefined;
  private answering = false;
  /** The HTTP server is (being) built: the connection goes to it at its next request. */
  private handOverNext = false;
  private closeNext = false;
  private ended = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly socket: net.Socket,
    private readonly options: EarlyFrontOptions,
    private readonly handOver: (unread: Buffer) => void,
  ) {}

  start(handOverAtOnce: boolean): void {
    this.socket.on("error", destroyOnError);
    if (handOverAtOnce) {
      this.release();
      return;
    }
    this.socket.on("data", this.onData);
    this.socket.on("end", this.onEnd);
    this.waitForRequest(this.options.headersTimeoutMs);
  }

  /** The front closes: the connection ends after the answer it is giving, or now. */
  closeWhenIdle(): void {
    this.closeNext = true;
    if (!this.answering && !this.unreadLength()) this.socket.destroy();
  }

  handOverWhenIdle(): void {
    this.handOverNext = true;
    if (!this.answering && !this.unreadLength()) this.release();
  }

  /**
   * The whole request (at most a few KiB here) must come within `ms`, counted from its start as
   * node:http's headersTimeout is, not from its last byte; an idle connection is closed after its
   * keep-alive time. Past either, the connection is closed (node:http answers 408 and closes).
   */
  private waitForRequest(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (!this.answering) this.socket.destroy();
    }, ms).unref();
  }

  private readonly onData = (chunk: Buffer) => {
    // The first bytes of a request after an idle keep-alive connection: its own time starts.
    if (!this.unreadLength() && !this.answering) this.waitForRequest(this.options.headersTimeoutMs);
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    // Read again only when the bytes may complete something: a line of the head, or the body.
    const total = this.unreadLength();
    if (this.needed !== undefined ? total >= this.needed : chunk.includes(LF) || total > this.options.limits.headBytes)
      this.next();
  };

  private readonly onEnd = () => {
    this.ended = true;
    this.next();
  };

  private next(): void {
    if (this.answering) return;
    this.joinPending();
    this.needed = undefined;
    if (!this.bytes.length) {
      if (this.ended) this.close();
      return;
    }
    if (this.closeNext) {
      this.socket.destroy();
      return;
    }
    const scan = scanSimpleRequest(this.bytes, this.options.limits);
    if (scan.kind === "incomplete" && !this.ended) {
      this.needed = scan.length;
      return;
    }
    // Pipelined requests, and anything not of the plainest kind, are node:http's.
    if (scan.kind !== "request" || scan.end !== this.bytes.length || (this.handOverNext && !this.ended)) {
      this.leave();
      return;
    }
    const head = { ...scan.head, socket: this.socket };
    if (!this.options.answers.takes(head)) {
      this.leave();
      return;
    }
    this.answering = true;
    this.options.answers.answer(head, scan.body).then(
      (answer) => {
        this.answering = false;
        if (!answer) this.leave();
        else this.write(answer, scan.end, scan.keepAlive && !this.closeNext && !this.ended);
      },
      () => this.socket.destroy(),
    );
  }

  private write(answer: EarlyAnswer, requestEnd: number, keepAlive: boolean): void {
    if (this.socket.destroyed) return;
    this.bytes = this.bytes.subarray(requestEnd);
    this.socket.write(responseHead(answer, keepAlive, this.options.keepAliveTimeoutMs));
    this.socket.write(answer.body);
    if (!keepAlive) {
      this.close();
      return;
    }
    if (this.unreadLength()) this.waitForRequest(this.options.headersTimeoutMs);
    else this.waitForRequest(this.options.keepAliveTimeoutMs);
    if (this.handOverNext && !this.unreadLength()) this.release();
    else this.next();
  }

  /** Ends the connection once what was written is sent (as node:http does after `Connection: close`). */
  private close(): void {
    this.detach();
    this.socket.destroySoon();
  }

  /**
   * Leaves the request to node:http; a peer that has already ended its side cannot be given to
   * it (its bytes cannot be put back once the end was read), so its connection is closed.
   */
  private leave(): void {
    if (this.ended) this.socket.destroy();
    else this.release();
  }

  /** Stops reading the connection here and gives it, with what it sent, to node:http. */
  private release(): void {
    this.detach();
    this.joinPending();
    const unread = this.bytes;
    this.bytes = Buffer.alloc(0);
    this.handOver(unread);
  }

  private unreadLength(): number {
    return this.bytes.length + this.pendingBytes;
  }

  private joinPending(): void {
    if (!this.pending.length) return;
    this.bytes = Buffer.concat([this.bytes, ...this.pending]);
    this.pending = [];
    this.pendingBytes = 0;
  }

  private detach(): void {
    clearTimeout(this.timer);
    this.socket.removeListener("data", this.onData);
    this.socket.removeListener("end", this.onEnd);
  }
}

/** The head node:http writes for `writeHead(200, {content-type, content-length}).end(body)`. */
function responseHead(answer: EarlyAnswer, keepAlive: boolean, keepAliveTimeoutMs: number): string {
  const connection = keepAlive
    ? `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveTimeoutMs / 1000)}\r\n`
    : "Connection: close\r\n";
  return (
    "HTTP/1.1 200 OK\r\n" +
    `content-type: ${answer.contentType}\r\n` +
    `content-length: ${answer.body.byteLength}\r\n` +
    `Date: ${new Date().toUTCString()}\r\n` +
    connection +
    "\r\n"
  );
}
