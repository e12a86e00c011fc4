/**
 * SystemService's Health and Initialize messages in the Connect protocol's two encodings (JSON
 * and protobuf binary), written without protobuf-es: the sidecar answers an editor's first calls
 * with them until connect and protobuf-es are loaded (system-early.ts). protobuf-es needs the
 * descriptor of descriptor.proto before it can read any generated file's descriptor, and
 * building it is most of what loading them costs.
 *
 * Decoding accepts only what it can read exactly as protobuf-es and connect read it; anything
 * else (unknown binary fields, duplicate JSON keys, escaped surrogates, a byte-order mark, wrong
 * types) is `undefined`, and the call is left to connect's own handler, which gives the answer or
 * the error it always gives. Encoding gives the bytes protobuf-es gives (fields in number order,
 * default values left out, int64 as a JSON string); test/sidecar/system-wire.unit.test.ts
 * compares both with protobuf-es and checks that system.proto's messages have exactly the fields
 * written here.
 */
import { isUtf8 } from "node:buffer";
import type { HealthAnswer, InitializeAnswer, InitializeQuestion } from "./system-calls.js";

/** Whether a Health request is one this module reads: an empty message (HealthRequest has no fields). */
export function isPlainHealthRequest(body: Uint8Array, binary: boolean): boolean {
  if (binary) return body.byteLength === 0;
  const object = jsonObjectOf(body);
  // Connect ignores unknown JSON fields, and HealthRequest has none: any key is unknown.
  return object !== undefined;
}

export function decodeInitializeRequest(body: Uint8Array, binary: boolean): InitializeQuestion | undefined {
  return binary ? initializeFromBinary(body) : initializeFromJson(body);
}

export function encodeHealthResponse(answer: HealthAnswer, binary: boolean): Uint8Array {
  if (binary) {
    const out = new BinaryWriter();
    out.string(1, answer.status);
    out.string(2, answer.serverVersion);
    out.int64(3, answer.uptimeMs);
    out.int32(4, answer.pid);
    return out.bytes();
  }
  const json: Record<string, string | number> = {};
  if (answer.status !== "") json.status = answer.status;
  if (answer.serverVersion !== "") json.serverVersion = answer.serverVersion;
  if (answer.uptimeMs !== 0n) json.uptimeMs = answer.uptimeMs.toString();
  if (answer.pid !== 0) json.pid = answer.pid;
  return Buffer.from(JSON.stringify(json));
}

export function encodeInitializeResponse(answer: InitializeAnswer, binary: boolean): Uint8Array {
  if (binary) {
    const out = new BinaryWriter();
    out.string(1, answer.serverVersion);
    out.int32(2, answer.protocolVersion);
    out.string(3, answer.dataRoot);
    out.string(4, answer.homeRoot);
    out.string(5, answer.documentsRoot);
    out.int32(6, answer.pid);
    out.string(7, answer.gitVersion);
    out.string(8, answer.logFile);
    return out.bytes();
  }
  const json: Record<string, string | number> = {};
  if (answer.serverVersion !== "") json.serverVersion = answer.serverVersion;
  if (answer.protocolVersion !== 0) json.protocolVersion = answer.protocolVersion;
  if (answer.dataRoot !== "") json.dataRoot = answer.dataRoot;
  if (answer.homeRoot !== "") json.homeRoot = answer.homeRoot;
  if (answer.documentsRoot !== "") json.documentsRoot = answer.documentsRoot;
  if (answer.pid !== 0) json.pid = answer.pid;
  if (answer.gitVersion !== "") json.gitVersion = answer.gitVersion;
  if (answer.logFile !== "") json.logFile = answer.logFile;
  return Buffer.from(JSON.stringify(json));
}

/** InitializeRequest's fields: 1 client_name, 2 client_version (strings), 3 workspace_roots (repeated string). */
function initializeFromBinary(body: Uint8Array): InitializeQuestion | undefined {
  const question: InitializeQuestion = { clientName: "", clientVersion: "", workspaceRoots: [] };
  let pos = 0;
  while (pos < body.byteLength) {
    const tag = readVarint32(body, pos);
    if (!tag) return undefined;
    const length = readVarint32(body, tag.next);
    // Only the three string fields (wire type 2, length-delimited) are read here.
    if (!length || tag.value >>> 3 < 1 || tag.value >>> 3 > 3 || (tag.value & 7) !== 2) return undefined;
    const end = length.next + length.value;
    if (end > body.byteLength) return undefined;
    const bytes = body.subarray(length.next, end);
    // protobuf-es refuses invalid UTF-8 in a proto3 string.
    if (!isUtf8(bytes)) return undefined;
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
    const field = tag.value >>> 3;
    if (field === 1) question.clientName = text;
    else if (field === 2) question.clientVersion = text;
    else question.workspaceRoots.push(text);
    pos = end;
  }
  return question;
}

/** An unsigned varint of at most 32 bits at `pos`: its value and the position after it. */
function readVarint32(bytes: Uint8Array, pos: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    const byte = bytes[pos + i];
    if (byte === undefined) return undefined;
    value += (byte & 0x7f) * 2 ** (7 * i);
    if (byte < 0x80) return value <= 0x7fffffff ? { value, next: pos + i + 1 } : undefined;
  }
  return undefined;
}

/** Each field's JSON name and proto name, both of which the protobuf JSON format accepts. */
const INITIALIZE_JSON_FIELDS = [
  ["clientName", "client_name"],
  ["clientVersion", "client_version"],
  ["workspaceRoots", "workspace_roots"],
] as const;

function initializeFromJson(body: Uint8Array): InitializeQuestion | undefined {
  const object = jsonObjectOf(body);
  if (!object) return undefined;
  const values: unknown[] = [];
  for (const [jsonName, protoName] of INITIALIZE_JSON_FIELDS) {
    // protobuf-es refuses a field set by both its names.
    if (Object.hasOwn(object, jsonName) && Object.hasOwn(object, protoName)) return undefined;
    values.push(Object.hasOwn(object, jsonName) ? object[jsonName] : object[protoName]);
  }
  const [clientName, clientVersion, workspaceRoots] = values;
  // null is the field's default value; other keys are unknown fields, which connect ignores.
  if (clientName !== undefined && clientName !== null && typeof clientName !== "string") return undefined;
  if (clientVersion !== undefined && clientVersion !== null && typeof clientVersion !== "string") return undefined;
  if (workspaceRoots !== undefined && workspaceRoots !== null && !Array.isArray(workspaceRoots)) return undefined;
  return {
    clientName: clientName ?? "",
    clientVersion: clientVersion ?? "",
    workspaceRoots: Array.isArray(workspaceRoots) ? (workspaceRoots as string[]) : [],
  };
}

/**
 * A JSON body as connect reads it, when it is an object whose values are strings, null, or
 * arrays of strings, and nothing in it could be read otherwise by protobuf-es: valid UTF-8
 * without a byte-order mark (connect's TextDecoder drops one), no escaped surrogate (protobuf-es
 * refuses a lone one), no duplicate key (protobuf-es refuses them; JSON.parse keeps the last).
 */
function jsonObjectOf(body: Uint8Array): Record<string, unknown> | undefined {
  if (!isUtf8(body) || (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf)) return undefined;
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  if (/\\u[dD][89a-fA-F]/.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  for (const key of keys) {
    const v = object[key];
    if (v === null || typeof v === "string") continue;
    if (!Array.isArray(v) || !v.every((item) => typeof item === "string")) return undefined;
  }
  return memberNamesOf(text) === keys.length ? object : undefined;
}

/**
 * How many member names the top-level object of `text` (JSON that JSON.parse accepted, with no
 * object nested in it) has, duplicates counted: a string followed by a colon at depth 1.
 */
function memberNamesOf(text: string): number {
  let depth = 0;
  let names = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
      if (depth !== 1) continue;
      let j = i + 1;
      while (isJsonSpace(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) === 0x3a) names++;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return names;
}

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** The protobuf binary encoding of proto3 scalar fields with implicit presence (defaults left out). */
class BinaryWriter {
  private readonly parts: number[] = [];
  private readonly chunks: Buffer[] = [];

  string(field: number, value: string): void {
    if (value === "") return;
    const bytes = Buffer.from(value, "utf8");
    this.varint(field * 8 + 2);
    this.varint(bytes.byteLength);
    this.flush();
    this.chunks.push(bytes);
  }

  int32(field: number, value: number): void {
    if (value === 0) return;
    this.varint(field * 8);
    // A negative int32 is written as its 64-bit two's complement (ten bytes).
    if (value < 0) this.bigVarint(BigInt.asUintN(64, BigInt(value)));
    else this.varint(value);
  }

  int64(field: number, value: bigint): void {
    if (value === 0n) return;
    this.varint(field * 8);
    this.bigVarint(BigInt.asUintN(64, value));
  }

  bytes(): Uint8Array {
    this.flush();
    const [first] = this.chunks;
    return first && this.chunks.length === 1 ? first : Buffer.concat(this.chunks);
  }

  private varint(value: number): void {
    while (value > 0x7f) {
      this.parts.push((value % 0x80) | 0x80);
      value = Math.floor(value / 0x80);
    }
    this.parts.push(value);
  }

  private bigVarint(value: bigint): void {
    while (value > 0x7fn) {
      this.parts.push(Number(value & 0x7fn) | 0x80);
      value >>= 7n;
    }
    this.parts.push(Number(value));
  }

  private flush(): void {
    if (this.parts.length === 0) return;
    this.chunks.push(Buffer.from(this.parts));
    this.parts.length = 0;
  }
}
