import type * as http from "node:http";

/** The request head a call's answer is chosen from (node:http's IncomingMessage has these too). */
export interface RequestHead {
  method: string;
  url: string;
  /** Lower-case names, one value each. */
  headers: http.IncomingHttpHeaders;
}

/**
 * What the start of a connection's bytes hold:
 * - `incomplete`: a simple request may still come (more bytes are needed);
 * - `other`: anything else, which node:http must read (another method or version, chunked or
 *   unsized bodies, duplicated or malformed headers, an upgrade, `Expect`, a head or body past
 *   the limits);
 * - `request`: a POST over HTTP/1.1 with a sized body, complete in `bytes`, which ends at `end`.
 */
export type SimpleRequestScan =
  | { kind: "incomplete"; /** With the head read: the bytes the whole request takes. */ length?: number }
  | { kind: "other" }
  | { kind: "request"; head: RequestHead; body: Buffer; end: number; keepAlive: boolean };

export interface SimpleRequestLimits {
  /** node:http's own head limit (16 KiB by default): past it, node:http answers the request. */
  headBytes: number;
  bodyBytes: number;
}

const HEAD_END = Buffer.from("\r\n\r\n");
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Characters node:http's parser refuses in a header value, or that would need its leniency. */
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
/** A LF without its CR, or a CR followed by anything but LF (a CR at the very end may be followed by its LF later). */
const BARE_LINE_END = /(?<!\r)\n|\r(?!\n|$)/;
const REQUEST_LINE = /^POST (\/[!-~]*) HTTP\/1\.1$/;

/**
 * Reads a request only when it is one of the plainest kind, strictly: whatever node:http might
 * read differently (or refuse) is `other`, so that it is always node:http that reads it.
 */
export function scanSimpleRequest(bytes: Buffer, limits: SimpleRequestLimits): SimpleRequestScan {
  const headEnd = bytes.indexOf(HEAD_END);
  const head = bytes.toString("latin1", 0, headEnd < 0 ? Math.min(bytes.length, limits.headBytes + 1) : headEnd);
  // Lines must end with CRLF: a bare LF or CR is node:http's to read (or refuse).
  if (BARE_LINE_END.test(head)) return { kind: "other" };
  if (headEnd < 0) return bytes.length > limits.headBytes ? { kind: "other" } : { kind: "incomplete" };
  if (headEnd > limits.headBytes) return { kind: "other" };
  const lines = head.split("\r\n");
  const target = REQUEST_LINE.exec(lines[0]!);
  if (!target) return { kind: "other" };
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    if (colon <= 0) return { kind: "other" };
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) return { kind: "other" };
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (BAD_VALUE.test(value)) return { kind: "other" };
    const key = name.toLowerCase();
    // A repeated header is joined, dropped or refused by node:http depending on its name.
    if (Object.hasOwn(headers, key)) return { kind: "other" };
    headers[key] = value;
  }
  if (
    headers["transfer-encoding"] !== undefined ||
    headers.expect !== undefined ||
    headers.upgrade !== undefined ||
    headers.host === undefined
  ) {
    return { kind: "other" };
  }
  const connection = headers.connection?.toLowerCase();
  if (connection !== undefined && connection !== "keep-alive" && connection !== "close") return { kind: "other" };
  const length = headers["content-length"];
  if (length === undefined || !/^\d{1,9}$/.test(length)) return { kind: "other" };
  const bodyLength = Number(length);
  if (bodyLength > limits.bodyBytes) return { kind: "other" };
  const bodyStart = headEnd + HEAD_END.length;
  const end = bodyStart + bodyLength;
  if (bytes.length < end) return { kind: "incomplete", length: end };
  return {
    kind: "request",
    head: { method: "POST", url: target[1]!, headers },
    body: bytes.subarray(bodyStart, end),
    end,
    keepAlive: connection !== "close",
  };
}
