import * as http from "node:http";
import {
  create,
  isMessage,
  type DescMessage,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import {
  createMethodSerializationLookup,
  createMethodUrl,
  type MethodSerializationLookup,
} from "@connectrpc/connect/protocol";
import {
  errorFromJsonBytes,
  requestHeaderWithCompression,
  trailerDemux,
  validateResponseWithCompression,
} from "@connectrpc/connect/protocol-connect";

export interface UnaryTransportOptions {
  baseUrl: string;
  socketPath?: string;
  useBinaryFormat: boolean;
  interceptors: Interceptor[];
  /** Takes the calls this transport does not make itself: streams, and unary calls with a deadline. */
  fallback: Transport;
}

/**
 * A Connect transport whose plain unary calls (no deadline) are made with node:http directly:
 * connect's own request headers, interceptors, serialization and error decoding, with the body
 * sent in one write and the answer read with plain stream events. connect-node's client spends
 * most of a small call's time in its generic stream plumbing (async-iterable pipes, linked abort
 * signals, a DOMException per call); this skips it. Everything else goes to `fallback`.
 */
export function unaryTransport(options: UnaryTransportOptions): Transport {
  const agent = new http.Agent({ keepAlive: true });
  const serializers = new WeakMap<object, MethodSerializationLookup<DescMessage, DescMessage>>();
  const serializationOf = (method: DescMethodUnary<DescMessage, DescMessage>) => {
    let lookup = serializers.get(method);
    if (!lookup) {
      lookup = createMethodSerializationLookup(method, undefined, undefined, {
        readMaxBytes: 0xffffffff,
        writeMaxBytes: 0xffffffff,
      });
      serializers.set(method, lookup);
    }
    return lookup;
  };

  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: Parameters<Transport["unary"]>[3],
      input: MessageInitShape<I>,
      contextValues?: Parameters<Transport["unary"]>[5],
    ): Promise<UnaryResponse<I, O>> {
      if (timeoutMs !== undefined && timeoutMs > 0)
        return options.fallback.unary(method, signal, timeoutMs, header, input, contextValues);
      const serialization = serializationOf(method);
      const send = async (req: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> => {
        const body = serialization.getI(options.useBinaryFormat).serialize(req.message);
        const answer = await post(agent, options.socketPath, req.url, req.header, body, req.signal);
        const { isUnaryError, unaryError } = validateResponseWithCompression(
          method.methodKind,
          [],
          options.useBinaryFormat,
          answer.status,
          answer.header,
        );
        const [responseHeader, trailer] = trailerDemux(answer.header);
        if (isUnaryError) {
          const metadata = new Headers(responseHeader);
          trailer.forEach((value, key) => metadata.append(key, value));
          throw errorFromJsonBytes(answer.body, metadata, unaryError);
        }
        const message = serialization.getO(options.useBinaryFormat).parse(answer.body) as MessageShape<O>;
        return { stream: false, service: method.parent, method, header: responseHeader, message, trailer };
      };
      // As connect applies them: the first interceptor is the outermost.
      type AnyNext = Parameters<Interceptor>[0];
      const next = options.interceptors.reduceRight<AnyNext>(
        (n, interceptor) => interceptor(n),
        send as unknown as AnyNext,
      ) as unknown as typeof send;
      return next({
        stream: false,
        service: method.parent,
        method,
        requestMethod: "POST",
        url: createMethodUrl(options.baseUrl, method),
        header: requestHeaderWithCompression(
          method.methodKind,
          options.useBinaryFormat,
          undefined,
          header,
          [],
          null,
          true,
        ),
        contextValues: contextValues ?? createContextValues(),
        signal: signal ?? NEVER,
        message: isMessage(input, method.input) ? input : create(method.input, input),
      });
    },
    stream: (...args) => options.fallback.stream(...args),
  };
}

/** A signal for calls made without one. It never aborts, so `post` does not listen to it. */
const NEVER = new AbortController().signal;

interface Answer {
  status: number;
  header: Headers;
  body: Uint8Array;
}

function post(
  agent: http.Agent,
  socketPath: string | undefined,
  url: string,
  header: Headers,
  body: Uint8Array,
  signal: AbortSignal,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(ConnectError.from(signal.reason, Code.Canceled));
    const target = new URL(url);
    const headers: http.OutgoingHttpHeaders = {};
    header.forEach((value, key) => {
      headers[key] = value;
    });
    headers["content-length"] = String(body.byteLength);
    const req = http.request({
      method: "POST",
      // URL keeps an IPv6 literal's brackets ("[::1]"); the socket wants the bare address.
      host: target.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: target.port,
      path: target.pathname,
      headers,
      agent,
      socketPath,
    });
    // Every call without a signal shares NEVER: listening to it would pile one listener per call
    // in flight on one signal (Node warns past 10), for an event that never comes.
    const watched = signal !== NEVER;
    const onAbort = () => req.destroy(ConnectError.from(signal.reason, Code.Canceled));
    if (watched) signal.addEventListener("abort", onAbort, { once: true });
    const unwatch = () => {
      if (watched) signal.removeEventListener("abort", onAbort);
    };
    const fail = (err: unknown) => {
      unwatch();
      reject(networkError(err));
    };
    req.once("error", fail);
    req.once("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.once("error", fail);
      res.once("end", () => {
        unwatch();
        const responseHeader = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
          responseHeader.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        resolve({
          status: res.statusCode ?? 0,
          header: responseHeader,
          body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
        });
      });
    });
    req.end(body);
  });
}

/** Network failures as connect-node maps them: refused or unresolved -> unavailable, reset -> aborted. */
function networkError(reason: unknown): ConnectError {
  if (reason instanceof ConnectError) return reason;
  const code = (reason as { code?: string } | undefined)?.code;
  if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "ETIMEDOUT")
    return ConnectError.from(reason, Code.Unavailable);
  if (code === "ECONNRESET" || code === "ERR_STREAM_DESTROYED" || code === "ERR_STREAM_WRITE_AFTER_END")
    return ConnectError.from(reason, Code.Aborted);
  return ConnectError.from(reason, Code.Internal);
}
