import type { UnaryRewrite } from "./node-adapter.js";

/**
 * connect-es answers a unary request body that is not valid protobuf binary with `internal`
 * ("parse binary: ..."), while a malformed JSON body gets `invalid_argument`. A malformed
 * request is the client's error, so that one answer is rewritten to `invalid_argument` (HTTP
 * 400). Only HTTP 500 answers to binary requests are looked at.
 */
export const malformedBinaryIsInvalidArgument: UnaryRewrite = (req, answer) => {
  if (answer.status !== 500 || req.headers["content-type"] !== "application/proto") return undefined;
  try {
    const error = JSON.parse(Buffer.from(answer.body).toString("utf8")) as { code?: string; message?: string };
    if (error.code !== "internal" || !error.message?.startsWith("parse binary:")) return undefined;
    const message = `The request is not a valid protobuf message (${error.message.slice(14, 200)}).`;
    return { status: 400, body: Buffer.from(JSON.stringify({ code: "invalid_argument", message })) };
  } catch {
    return undefined; // Not a JSON error body: sent as it was.
  }
};
