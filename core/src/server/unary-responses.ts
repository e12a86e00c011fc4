import type * as http from "node:http";

type NodeHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A change to a complete unary answer before it is sent (see malformed-binary.ts). */
export type UnaryRewrite = (
  req: http.IncomingMessage,
  answer: { status: number; body: Buffer },
) => { status: number; body: Buffer } | undefined;

const UNARY_CONTENT_TYPES = new Set(["application/json", "application/proto"]);

/**
 * connect-node writes a unary answer as a chunked response: the head with the first chunk, then
 * the terminating chunk, two socket writes and a wait for the first one's callback. A unary
 * answer is small and complete at once, so its head and body are held until `end` and sent in
 * one write with a Content-Length, as a plain node:http server does. Streaming calls
 * (application/connect+json and +proto) pass through untouched. `rewrite` may change the
 * complete answer (status and body) before it is sent.
 */
export function sendUnaryAnswersWhole(handler: NodeHandler, rewrite?: UnaryRewrite): NodeHandler {
  return (req, res) => {
    if (!UNARY_CONTENT_TYPES.has(req.headers["content-type"] ?? "")) return handler(req, res);
    const writeHead = res.writeHead.bind(res);
    const end = res.end.bind(res);
    let status = 200;
    let headers: http.OutgoingHttpHeaders = {};
    const chunks: Buffer[] = [];
    res.writeHead = function (code: number, ...rest: unknown[]) {
      status = code;
      const last = rest[rest.length - 1];
      if (last && typeof last === "object") headers = { ...(last as http.OutgoingHttpHeaders) };
      return res;
    } as typeof res.writeHead;
    res.write = function (chunk: unknown, ...rest: unknown[]) {
      chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array));
      const callback = rest.find((x) => typeof x === "function") as (() => void) | undefined;
      if (callback) process.nextTick(callback);
      return true;
    } as typeof res.write;
    res.end = function (...args: unknown[]) {
      const last = args.find((x) => x instanceof Uint8Array || typeof x === "string");
      if (last !== undefined) chunks.push(typeof last === "string" ? Buffer.from(last) : Buffer.from(last as Uint8Array));
      let answer = { status, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) };
      answer = rewrite?.(req, answer) ?? answer;
      delete headers["transfer-encoding"];
      writeHead(answer.status, { ...headers, "content-length": String(answer.body.byteLength) });
      const callback = args.find((x) => typeof x === "function") as (() => void) | undefined;
      return end(answer.body, callback);
    } as typeof res.end;
    handler(req, res);
  };
}
