import type { CallHead, EarlyAnswers } from "../server/deferred-handler.js";
import { isPlainUnaryCall } from "../server/plain-unary.js";
import type { SystemCalls } from "./system-calls.js";
import {
  decodeInitializeRequest,
  encodeHealthResponse,
  encodeInitializeResponse,
  isPlainHealthRequest,
} from "./system-wire.js";

const HEALTH = "/dline.v1.SystemService/Health";
const INITIALIZE = "/dline.v1.SystemService/Initialize";

/**
 * An editor's first calls, Initialize and Health, answered until connect and protobuf-es are
 * loaded (about 15 ms of CPU and 8 MB of memory, most of it protobuf-es building descriptor.proto's
 * descriptor; a later call that needs them loads them): plain unary calls with the token whose
 * body system-wire.ts reads. The answers are the
 * service's own (SystemCalls) in the same bytes connect would send. Any other call, or a body
 * read otherwise, goes to connect's handler.
 */
export function systemEarlyAnswers(calls: SystemCalls, authorized: (head: CallHead) => boolean): EarlyAnswers {
  return {
    // Neither method reads its call's signal, so connect answers them the same whatever the
    // deadline (the Neovim and JetBrains clients send one with every call).
    takes: (req) =>
      (req.url === HEALTH || req.url === INITIALIZE) && isPlainUnaryCall(req, { anyDeadline: true }) && authorized(req),
    async answer(head, body) {
      const binary = head.headers["content-type"] === "application/proto";
      let answer: Uint8Array;
      if (head.url === HEALTH) {
        if (!isPlainHealthRequest(body, binary)) return undefined;
        answer = encodeHealthResponse(calls.health(), binary);
      } else {
        const question = decodeInitializeRequest(body, binary);
        if (!question) return undefined;
        try {
          answer = encodeInitializeResponse(await calls.initialize(question), binary);
        } catch {
          // The roots could not be found: connect's handler answers as it always does then.
          return undefined;
        }
      }
      return { contentType: binary ? "application/proto" : "application/json", body: answer };
    },
  };
}
