/** Maps the core's errors to JSON-RPC errors an ACP client understands. */
import { RequestError } from "@agentclientprotocol/sdk";
import { DlineError } from "../errors.js";

/**
 * invalid_argument -> -32602 (invalid params), not_found -> -32002 (resource not found), every
 * other DlineError -> -32603 (internal) with the Connect code name in `data.dlineCode`, so an
 * editor can tell "failed_precondition" from "aborted" without parsing the sentence.
 */
export function toRequestError(err: unknown): RequestError {
  if (err instanceof RequestError) return err;
  if (err instanceof DlineError) {
    const data = { dlineCode: err.code, ...(err.errorReason ? { reason: err.errorReason } : {}) };
    if (err.code === "invalid_argument") return new RequestError(-32602, err.message, data);
    if (err.code === "not_found") return new RequestError(-32002, err.message, data);
    return new RequestError(-32603, err.message, data);
  }
  return new RequestError(-32603, err instanceof Error ? err.message : String(err));
}

/** Runs a handler and turns whatever it throws into a RequestError. */
export async function mapErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toRequestError(err);
  }
}

/** A parser for extension-method params: an object with the named string fields. */
export function objectParams<K extends string>(required: readonly K[], optional: readonly string[] = []) {
  return (raw: unknown): Record<K, string> & Record<string, unknown> => {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw))
      throw RequestError.invalidParams(undefined, "params must be an object");
    const params = raw as Record<string, unknown>;
    for (const key of required) {
      if (typeof params[key] !== "string" || !params[key])
        throw RequestError.invalidParams(undefined, `${key} must be a non-empty string`);
    }
    for (const key of optional) {
      if (params[key] !== undefined && params[key] !== null && typeof params[key] !== "string") {
        throw RequestError.invalidParams(undefined, `${key} must be a string`);
      }
    }
    return params as Record<K, string> & Record<string, unknown>;
  };
}
