import type * as http from "node:http";

type NodeHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * connect-es answers a unary request body that is not valid protobuf binary with `internal`
 * ("parse binary: ..."), while a malformed JSON body gets `invalid_argument`. A malformed
 * request is the client's error, so that one answer is rewritten to `invalid_argument` (HTTP
 * 400). Only unary binary requests are looked at, and only their HTTP 500 answers are held
 * back until complete; everything else passes through untouched.
 */
export function malformedBinaryIsInvalidArgument(handler: NodeHandler): NodeHandler {
  return (req, res) => {
    if (req.headers["content-type"] !== "application/proto") return handler(req, res);
    const writeHead = res.writeHead.bind(res);
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    let held: { status: number; headers: http.OutgoingHttpHeaders; chunks: Buffer[] } | undefined;
    res.writeHead = function (status: number, ...rest: unknown[]) {
      if (status !== 500) return writeHead(status, ...(rest as [http.OutgoingHttpHeaders]));
      const last = rest[rest.length - 1];
      held = { status, headers: last && typeof last === "object" ? { ...(last as http.OutgoingHttpHeaders) } : {}, chunks: [] };
      return res;
    } as typeof res.writeHead;
    res.write = function (chunk: unknown, ...rest: unknown[]) {
      if (!held) return write(chunk as Buffer, ...(rest as [BufferEncoding]));
      held.chunks.push(Buffer.from(chunk as Uint8Array));
      const cb = rest.find((x) => typeof x === "function") as (() => void) | undefined;
      if (cb) process.nextTick(cb);
      return true;
    } as typeof res.write;
    res.end = function (...args: unknown[]) {
      if (!held) return end(...(args as []));
      const chunk = args.find((x) => x instanceof Uint8Array || typeof x === "string");
      if (chunk !== undefined) held.chunks.push(Buffer.from(chunk as Uint8Array));
      let body = Buffer.concat(held.chunks);
      let status = held.status;
      try {
        const error = JSON.parse(body.toString("utf8")) as { code?: string; message?: string };
        if (error.code === "internal" && error.message?.startsWith("parse binary:")) {
          status = 400;
          body = Buffer.from(
            JSON.stringify({ code: "invalid_argument", message: `The request is not a valid protobuf message (${error.message.slice(14, 200)}).` }),
          );
        }
      } catch {
        // Not a JSON error body: sent as it was.
      }
      const headers = { ...held.headers, "content-length": String(body.byteLength) };
      held = undefined;
      writeHead(status, headers);
      const cb = args.find((x) => typeof x === "function") as (() => void) | undefined;
      return end(body, cb);
    } as typeof res.end;
    handler(req, res);
  };
}
