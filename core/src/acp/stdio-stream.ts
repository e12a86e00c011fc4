/**
 * ACP's transport on stdin/stdout: newline-delimited JSON-RPC messages, framed here (the SDK's
 * ndJsonStream parses and writes them) so that:
 * - a message over the size limit gets a JSON-RPC error (for its id when it can be read from
 *   the message's start), and the messages after it are still served, instead of the whole
 *   connection failing and the process exiting without a word;
 * - a last request without a newline before end of input is served: when stdin ends, the
 *   requests already received are answered before the connection closes (a prompt still
 *   running is left to the core's stop, which leaves its task interrupted).
 */
import type { Readable, Writable } from "node:stream";
import { DEFAULT_MAX_MESSAGE_BYTES, ndJsonStream, type AnyMessage, type Stream } from "@agentclientprotocol/sdk";

const NEWLINE = 0x0a;
/** How much of an oversize message is kept to find its id. */
const ID_SCAN_BYTES = 4096;
/** After stdin ends, requests still unanswered after this long are left (the process stops). */
const DRAIN_LIMIT_MS = 10_000;
/** Requests that end with the connection, not before it: a running prompt is stopped by the core's stop. */
const LONG_RUNNING = new Set(["session/prompt"]);

type JsonRpcId = string | number;

function requestIdOf(message: AnyMessage): JsonRpcId | undefined {
  const m = message as { id?: unknown; method?: unknown };
  return typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number") ? m.id : undefined;
}

function responseIdOf(message: AnyMessage): JsonRpcId | undefined {
  const m = message as { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
  if (m.method !== undefined || !("result" in m || "error" in m)) return undefined;
  return typeof m.id === "string" || typeof m.id === "number" ? m.id : undefined;
}

/** The request id at the start of a message (JSON-RPC clients write it first or second), if any. */
function idFromStart(start: Buffer): JsonRpcId | null {
  const match = /"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,16})\s*[,}]/.exec(start.toString("utf8"));
  const id = match?.[1];
  if (id === undefined) return null;
  try {
    return JSON.parse(id) as JsonRpcId;
  } catch {
    return null;
  }
}

export interface StdioStreamOptions {
  /** The largest message accepted, in bytes (default: the SDK's). */
  maxMessageBytes?: number;
}

/** The ACP stream of a process's stdin/stdout. */
export function stdioStream(input: Readable, output: Writable, options: StdioStreamOptions = {}): Stream {
  const limit = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  /** Requests received and not answered yet, by id, with their method. */
  const pending = new Map<JsonRpcId, string>();
  let settled: (() => void) | undefined;
  const checkSettled = () => {
    if (settled && [...pending.values()].every((method) => LONG_RUNNING.has(method))) settled();
  };

  // Complete lines go on to the SDK's parser; the framing (and the size limit) is ours.
  let lines!: ReadableStreamDefaultController<Uint8Array>;
  const framed = new ReadableStream<Uint8Array>({
    start(controller) {
      lines = controller;
    },
  });
  const inner = ndJsonStream(
    new WritableStream<Uint8Array>({
      write: (chunk) =>
        new Promise<void>((resolve, reject) => {
          output.write(chunk, (err) => (err ? reject(err) : resolve()));
        }),
    }),
    framed,
    // Never reached: lines over our own limit do not get this far.
    { maxMessageBytes: limit + 1 },
  );
  const writer = inner.writable.getWriter();
  const tooLarge = (start: Buffer, size: number) =>
    writer
      .write({
        jsonrpc: "2.0",
        id: idFromStart(start),
        error: {
          code: -32600,
          message: `The message is larger than the ${limit} bytes this agent accepts (at least ${size} bytes); it was not read.`,
        },
      })
      .catch(() => {});

  void (async () => {
    let current: Buffer[] = [];
    let length = 0;
    let skipping: { start: Buffer; size: number } | undefined;
    const pushLine = (parts: Buffer[]) => {
      const line = Buffer.concat([...parts, Buffer.from("\n")]);
      lines.enqueue(new Uint8Array(line.buffer, line.byteOffset, line.byteLength));
    };
    try {
      for await (const chunk of input as AsyncIterable<Buffer>) {
        let from = 0;
        while (from < chunk.length) {
          const newline = chunk.indexOf(NEWLINE, from);
          const end = newline === -1 ? chunk.length : newline;
          const piece = chunk.subarray(from, end);
          if (skipping) skipping.size += piece.length;
          else if (length + piece.length > limit) {
            const start = Buffer.concat([...current, piece]).subarray(0, ID_SCAN_BYTES);
            skipping = { start: Buffer.from(start), size: length + piece.length };
            current = [];
            length = 0;
          } else {
            current.push(Buffer.from(piece));
            length += piece.length;
          }
          if (newline === -1) break;
          if (skipping) void tooLarge(skipping.start, skipping.size);
          else pushLine(current);
          skipping = undefined;
          current = [];
          length = 0;
          from = newline + 1;
        }
      }
      // End of input: a last line without its newline is still a message.
      if (skipping) void tooLarge(skipping.start, skipping.size);
      else if (length > 0) pushLine(current);
    } catch {
      // stdin failed: treated as its end
    }
    await new Promise<void>((resolve) => {
      settled = resolve;
      // The lines just queued are parsed before the check (the parser runs as soon as it can read).
      setImmediate(checkSettled);
      setTimeout(resolve, DRAIN_LIMIT_MS).unref();
    });
    lines.close();
  })();

  const readable = inner.readable.pipeThrough(
    new TransformStream<AnyMessage, AnyMessage>({
      transform(message, controller) {
        const id = requestIdOf(message);
        if (id !== undefined && (message as { jsonrpc?: unknown }).jsonrpc !== "2.0") {
          // Not JSON-RPC 2.0: answered here, for its id (the SDK would answer for id null, and the
          // request would stay pending, holding the exit after stdin ends for the drain's limit).
          void writer
            .write({
              jsonrpc: "2.0",
              id,
              error: { code: -32600, message: 'Invalid request: "jsonrpc" must be "2.0".' },
            })
            .catch(() => {});
          return;
        }
        if (id !== undefined) pending.set(id, (message as { method: string }).method);
        controller.enqueue(message);
      },
    }),
  );
  const writable = new WritableStream<AnyMessage>({
    async write(message) {
      const id = responseIdOf(message);
      await writer.write(message);
      if (id !== undefined && pending.delete(id)) checkSettled();
    },
  });
  return { readable, writable };
}
