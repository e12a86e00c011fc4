import type * as http from "node:http";
import { createConnectRouter, type ConnectRouterOptions } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { CallSignal } from "./call-signal.js";
import { lazyCompressions, loadConnectNode } from "./connect-node.js";
import { LazyServices, type LazyService } from "./lazy-services.js";
import { readBody } from "./read-body.js";
import { UnaryFastPath } from "./unary-fast-path.js";
import { answerUnauthenticated } from "./unauthenticated.js";
import { answerUnavailable } from "./unavailable.js";

/**
 * A request listener that may be given the request's body already read (`body`): a plain unary
 * call whose body another listener read first (deferred-handler.ts).
 */
export type NodeHandler = (req: http.IncomingMessage, res: http.ServerResponse, body?: Uint8Array) => void;

/** A change to a complete unary answer before it is sent (see malformed-binary.ts). */
export type UnaryRewrite = (
  req: http.IncomingMessage,
  answer: { status: number; body: Uint8Array },
) => { status: number; body: Uint8Array } | undefined;

export interface NodeAdapterOptions extends ConnectRouterOptions {
  /** Each service is loaded on its first call (see lazy-services.ts). */
  services: LazyService[];
  /** Applied to every complete unary answer before it is sent. */
  rewriteUnary?: UnaryRewrite;
  /**
   * Called with a handler failure that could not be answered. `clientGone`: the client closed
   * the connection first (an editor quitting mid-stream), so the failure is only that.
   */
  onBrokenCall?: (method: string, reason: unknown, clientGone: boolean) => void;
  /** Called when a service's modules could not be loaded. */
  onLoadFailed?: (service: string, reason: unknown) => void;
  /** Whether a request may go on, from its headers alone; one that may not is answered `unauthenticated` unread. */
  authorize?: (req: http.IncomingMessage) => boolean;
}

const UNARY_CONTENT_TYPES = new Set(["application/json", "application/proto"]);
/** The abort reason of a call whose connection closed or whose answer was sent. */
const CALL_ENDED = Object.freeze(new Error("The call ended."));

/**
 * Serves connect's handlers over node:http, like connect-node's connectNodeAdapter, with a
 * lighter path for unary calls: the request body is read with plain stream events, the call's
 * signal is one AbortController, and the answer goes out in one write with a Content-Length
 * instead of a chunked response. A plain unary call goes through UnaryFastPath (connect's
 * context, interceptors, serialization and errors without its negotiation and stream pipes);
 * other unary calls (compressed, with a timeout) through connect's handler; streaming calls
 * through connect-node's own conversion. Each service is registered on its first call (or
 * `preload`); a path of no known service is answered 404 at once.
 */
export function connectHandler(options: NodeAdapterOptions): NodeHandler & { preload: (typeName: string) => void } {
  // connect-node's adapter accepts gzip and brotli request bodies by default; so does this one.
  const router = createConnectRouter({ acceptCompression: lazyCompressions, ...options });
  const readMaxBytes = options.readMaxBytes ?? 0xffffffff;
  const fast = new UnaryFastPath({
    interceptors: options.interceptors ?? [],
    readMaxBytes,
    writeMaxBytes: options.writeMaxBytes ?? 0xffffffff,
  });
  const paths = new Map<string, UniversalHandler>();
  const services = new LazyServices(
    options.services,
    (service, register) => {
      const before = router.handlers.length;
      register(fast.recording(router));
      for (const handler of router.handlers.slice(before)) {
        if (handler.service.typeName !== service.typeName)
          throw new Error(`${service.typeName} registered ${handler.service.typeName}.`);
        paths.set(handler.requestPath, handler);
      }
    },
    options.onLoadFailed,
  );

  const dispatch = (req: http.IncomingMessage, res: http.ServerResponse, path: string, read?: Uint8Array): void => {
    const body = () => (read ? Promise.resolve(read) : readBody(req, readMaxBytes));
    const handler = paths.get(path);
    if (!handler) {
      res.writeHead(404).end();
      return;
    }
    const route = fast.routeFor(path, req);
    if (route) {
      const call = new CallSignal(options.shutdownSignal);
      const onClose = () => call.abort(CALL_ENDED);
      res.once("close", onClose);
      body()
        .then((bytes) => fast.serve(route, req, res, bytes, call))
        .catch((reason: unknown) => {
          options.onBrokenCall?.(handler.method.name, reason, res.destroyed);
          res.destroy();
        })
        .finally(() => res.off("close", onClose));
      return;
    }
    const unary =
      req.method === "POST" &&
      UNARY_CONTENT_TYPES.has(req.headers["content-type"] ?? "") &&
      req.headers["content-encoding"] === undefined;
    if (!unary) {
      loadConnectNode()
        .then(async (node) =>
          node.universalResponseToNodeResponse(
            await handler(node.universalRequestFromNodeRequest(req, res, undefined, undefined)),
            res,
          ),
        )
        .catch((reason: unknown) => options.onBrokenCall?.(handler.method.name, reason, res.destroyed));
      return;
    }
    body().then(
      (bytes) => serveUnary(handler, req, res, bytes, options.rewriteUnary),
      () => res.destroy(),
    );
  };

  return Object.assign(
    (req: http.IncomingMessage, res: http.ServerResponse, body?: Uint8Array) => {
      if (options.authorize && !options.authorize(req)) return answerUnauthenticated(req, res);
      const path = pathOf(req.url ?? "");
      if (paths.has(path)) return dispatch(req, res, path, body);
      const service = services.serviceOf(path);
      if (!service) {
        res.writeHead(404).end();
        return;
      }
      services.load(service).then(
        () => dispatch(req, res, path, body),
        () => answerUnavailable(res, `${service.typeName} could not be started; see the sidecar's log.`),
      );
    },
    { preload: (typeName: string) => services.preload(typeName) },
  );
}

function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query < 0 ? url : url.slice(0, query);
}

async function serveUnary(
  handler: UniversalHandler,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: Uint8Array,
  rewrite: UnaryRewrite | undefined,
): Promise<void> {
  const abort = new AbortController();
  const onClose = () => abort.abort(CALL_ENDED);
  res.once("close", onClose);
  const request: UniversalServerRequest = {
    httpVersion: req.httpVersion,
    method: "POST",
    url: `http://${req.headers.host ?? "localhost"}${req.url ?? ""}`,
    header: webHeaders(req.rawHeaders),
    body: oneChunk(body),
    signal: abort.signal,
  };
  let answer: UniversalServerResponse;
  try {
    answer = await handler(request);
  } catch {
    res.destroy();
    return;
  }
  if (answer.trailer !== undefined) {
    // HTTP trailers (not used by the Connect protocol's unary answers): connect-node's writer.
    await loadConnectNode()
      .then((node) => node.universalResponseToNodeResponse(answer, res))
      .catch(() => res.destroy());
    res.off("close", onClose);
    return;
  }
  let status = answer.status;
  let bytes = await collect(answer.body);
  const rewritten = rewrite?.(req, { status, body: bytes });
  if (rewritten) ({ status, body: bytes } = rewritten);
  const headers: http.OutgoingHttpHeaders = {};
  answer.header?.forEach((value, key) => {
    headers[key] = value;
  });
  headers["content-length"] = String(bytes.byteLength);
  if (!res.destroyed) res.writeHead(status, headers).end(bytes);
  res.off("close", onClose);
}

function webHeaders(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}

async function* oneChunk(body: Uint8Array): AsyncIterable<Uint8Array> {
  yield body;
}

async function collect(body: UniversalServerResponse["body"]): Promise<Uint8Array> {
  if (body === undefined) return new Uint8Array(0);
  if (body instanceof Uint8Array) return body;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}
