import type * as http from "node:http";
import { create, type DescMessage, type DescMethod, type DescService, type MessageShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createMethodImplSpec,
  type ConnectRouter,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import {
  createMethodSerializationLookup,
  mergeNonProtocolHeaders,
  type MethodSerializationLookup,
} from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { type CallSignal } from "./call-signal.js";
import { HeaderMap } from "./header-map.js";
import { isPlainUnaryCall } from "./plain-unary.js";

/** A unary method served without connect's universal handler (see UnaryFastPath). */
interface UnaryRoute {
  spec: MethodImplSpec<DescMessage, DescMessage> & { kind: "unary" };
  serialization: MethodSerializationLookup<DescMessage, DescMessage>;
}

export interface UnaryFastPathOptions {
  interceptors: Interceptor[];
  readMaxBytes: number;
  writeMaxBytes: number;
}

/**
 * The Connect protocol's plain unary call (plain-unary.ts) answered with connect's own
 * parts: its interceptors, message serialization and error encoding, and a handler context
 * like connect's. What it skips is the generic machinery around them (protocol negotiation and
 * async-iterable pipes), which was most of a small call's cost, and the global `Headers`, whose
 * first use costs more than the rest of start-up (see header-map.ts). Any other request goes to
 * connect's handler.
 */
export class UnaryFastPath {
  private readonly routes = new Map<string, UnaryRoute>();

  constructor(private readonly options: UnaryFastPathOptions) {}

  /** A router that registers with `router` and remembers each service's unary methods. */
  recording(router: ConnectRouter): ConnectRouter {
    const fast = this;
    const recorder: ConnectRouter = {
      get handlers() {
        return router.handlers;
      },
      service(service, implementation, options) {
        router.service(service, implementation, options);
        // Per-service options (interceptors, limits) are connect's to apply: no fast path then.
        if (options === undefined) fast.remember(service, implementation);
        return recorder;
      },
      rpc(method, implementation, options) {
        router.rpc(method, implementation, options);
        return recorder;
      },
    };
    return recorder;
  }

  private remember(service: DescService, implementation: Record<string, unknown>): void {
    for (const method of service.methods) {
      const fn = implementation[method.localName];
      if (method.methodKind !== "unary" || typeof fn !== "function") continue;
      this.routes.set(`/${service.typeName}/${method.name}`, {
        spec: createMethodImplSpec(
          method as DescMethod & { methodKind: "unary" },
          fn.bind(implementation) as never,
        ) as UnaryRoute["spec"],
        serialization: createMethodSerializationLookup(method as never, undefined, undefined, this.options),
      });
    }
  }

  /** The route for this request when it is a plain unary call, else undefined. */
  routeFor(path: string, req: http.IncomingMessage): UnaryRoute | undefined {
    return isPlainUnaryCall(req) ? this.routes.get(path) : undefined;
  }

  /**
   * Answers one call whose whole body was read; the answer is sent in one write. `call` is ended
   * when the connection closes; here it is also ended when the call is done (its signal is then
   * aborted, as connect's handlers do).
   */
  async serve(
    route: UnaryRoute,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: Uint8Array,
    call: CallSignal,
  ): Promise<void> {
    const binary = req.headers["content-type"] === "application/proto";
    const method = route.spec.method;
    const context: HandlerContext = {
      service: method.parent,
      method,
      protocolName: "connect",
      requestMethod: "POST",
      url: `http://${req.headers.host ?? "localhost"}${req.url ?? ""}`,
      timeoutMs: () => undefined,
      get signal() {
        return call.signal;
      },
      requestHeader: HeaderMap.fromRaw(req.rawHeaders),
      responseHeader: new HeaderMap({ "content-type": binary ? "application/proto" : "application/json" }),
      responseTrailer: new HeaderMap(),
      values: createContextValues(),
    };
    let status = 200;
    let answer: Uint8Array;
    try {
      const input = parse(route, binary, body, this.options.readMaxBytes);
      const output = await invokeUnary(route.spec, context, input, this.options.interceptors);
      answer = route.serialization.getO(binary).serialize(output);
    } catch (e) {
      call.abort(e);
      const error =
        e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
      status = codeToHttpStatus(error.code);
      context.responseHeader.set("content-type", "application/json");
      if (!error.isWireError) mergeNonProtocolHeaders(context.responseHeader, error.metadata);
      answer = errorToJsonBytes(error, {});
    } finally {
      call.abort(CALL_DONE);
    }
    if (res.destroyed) return;
    // The Connect protocol's unary answer carries trailers as headers prefixed "trailer-".
    const headers: http.OutgoingHttpHeaders = {};
    context.responseHeader.forEach((value, key) => {
      headers[key] = value;
    });
    context.responseTrailer.forEach((value, key) => {
      const name = `trailer-${key}`;
      headers[name] = headers[name] === undefined ? value : `${String(headers[name])}, ${value}`;
    });
    headers["content-length"] = String(answer.byteLength);
    res.writeHead(status, headers).end(answer);
  }
}

type AnyUnaryFn = (req: UnaryRequest) => Promise<UnaryResponse>;

/**
 * Runs the interceptors and the method, as connect's invokeUnaryImplementation does, except that
 * the signal is read from the call context only when an interceptor or the method reads it (see
 * call-signal.ts): connect's copies it into the request and the handler's context up front.
 */
async function invokeUnary(
  spec: UnaryRoute["spec"],
  context: HandlerContext,
  input: MessageShape<DescMessage>,
  interceptors: Interceptor[],
) {
  const method = spec.method;
  let next: AnyUnaryFn = async (req) => {
    // connect's mergeRequest: the call's context with what the interceptors passed on.
    const handlerContext: HandlerContext = {
      method,
      protocolName: context.protocolName,
      requestMethod: context.requestMethod,
      url: context.url,
      timeoutMs: context.timeoutMs,
      responseHeader: context.responseHeader,
      responseTrailer: context.responseTrailer,
      service: req.service,
      requestHeader: req.header,
      values: req.contextValues,
      get signal() {
        return req.signal;
      },
    };
    return {
      stream: false,
      message: create(method.output, await spec.impl(req.message, handlerContext)),
      method,
      service: method.parent,
      header: context.responseHeader,
      trailer: context.responseTrailer,
    };
  };
  for (let i = interceptors.length - 1; i >= 0; i--) next = interceptors[i]!(next as never) as AnyUnaryFn;
  const request: UnaryRequest = {
    stream: false,
    message: input,
    method,
    requestMethod: context.requestMethod,
    url: context.url,
    get signal() {
      return context.signal;
    },
    header: context.requestHeader,
    service: method.parent,
    contextValues: context.values,
  };
  const { message, header, trailer } = await next(request);
  copyHeaders(header, context.responseHeader);
  copyHeaders(trailer, context.responseTrailer);
  return message;
}

/** An interceptor's own header object replaces the call's (connect's copyHeaders). */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const key of [...to.keys()]) to.delete(key);
  from.forEach((value, key) => to.set(key, value));
}

/**
 * The reason a finished call's signal gives (no DOMException with a stack per call). A plain
 * Error: a ConnectError would create a global Headers object as this module loads.
 */
const CALL_DONE = Object.freeze(new Error("The call is done."));

/** A body that is not a valid message of the method's input is the client's error. */
function parse(route: UnaryRoute, binary: boolean, body: Uint8Array, readMaxBytes: number) {
  if (body.byteLength > readMaxBytes) {
    throw new ConnectError(
      `The message is ${body.byteLength} bytes; the limit is ${readMaxBytes}.`,
      Code.ResourceExhausted,
    );
  }
  try {
    return route.serialization.getI(binary).parse(body);
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.ResourceExhausted) throw e;
    const detail = e instanceof Error ? e.message.replace(/^\[\w+\] /, "").slice(0, 200) : String(e);
    throw new ConnectError(
      `The request is not a valid ${binary ? "protobuf" : "JSON"} message (${detail}).`,
      Code.InvalidArgument,
    );
  }
}
