import { create, type DescMessage } from "@bufbuild/protobuf";
import { createMethodSerializationLookup } from "@connectrpc/connect/protocol";
import { describe, expect, it } from "vitest";
import {
  HealthRequestSchema,
  HealthResponseSchema,
  InitializeRequestSchema,
  InitializeResponseSchema,
  SystemService,
} from "../../core/src/gen/dline/v1/system_pb.js";
import type { HealthAnswer, InitializeAnswer, InitializeQuestion } from "../../core/src/rpc/system-calls.js";
import {
  decodeInitializeRequest,
  encodeHealthResponse,
  encodeInitializeResponse,
  isPlainHealthRequest,
} from "../../core/src/rpc/system-wire.js";
import { nth } from "../helpers/items.js";

// system-wire.ts encodes and decodes SystemService's first calls without protobuf-es; here every
// answer is compared with what connect's own serialization (as the sidecar's router uses it)
// gives, and every request it reads with what connect reads from the same bytes.

const limits = { readMaxBytes: 16 * 1024 * 1024, writeMaxBytes: 64 * 1024 * 1024 };
const initialize = createMethodSerializationLookup(SystemService.method.initialize, undefined, undefined, limits);
const health = createMethodSerializationLookup(SystemService.method.health, undefined, undefined, limits);

/** A message's fields as `name number kind` lines, the form this module is written for. */
function fieldsOf(desc: DescMessage): string[] {
  return desc.fields.map((f) => `${f.name} ${f.number} ${f.fieldKind} ${(f as { scalar?: number }).scalar}`);
}

/** What connect reads from a request body, or the error it answers. */
function connectReads(body: Uint8Array, binary: boolean): InitializeQuestion | Error {
  try {
    const m = initialize.getI(binary).parse(body);
    return { clientName: m.clientName, clientVersion: m.clientVersion, workspaceRoots: [...m.workspaceRoots] };
  } catch (e) {
    return e as Error;
  }
}

const STRINGS = [
  "",
  "vitest",
  "é",
  "日本語",
  "😀 emoji",
  'quote " and \\ backslash',
  "line\nbreak\ttab\u0001",
  "\ufeffbom",
  "/a/b/c",
];

function* answersOfInitialize(): Generator<InitializeAnswer> {
  for (const s of STRINGS) {
    yield {
      serverVersion: s,
      protocolVersion: 1,
      dataRoot: `/home/${s}/data`,
      homeRoot: s,
      documentsRoot: "/docs",
      pid: 4242,
      gitVersion: s,
      logFile: s,
    };
  }
  yield {
    serverVersion: "",
    protocolVersion: 0,
    dataRoot: "",
    homeRoot: "",
    documentsRoot: "",
    pid: 0,
    gitVersion: "",
    logFile: "",
  };
  yield {
    serverVersion: "x",
    protocolVersion: -1,
    dataRoot: "",
    homeRoot: "",
    documentsRoot: "",
    pid: 2 ** 31 - 1,
    gitVersion: "",
    logFile: "",
  };
  yield {
    serverVersion: "x",
    protocolVersion: -(2 ** 31),
    dataRoot: "d",
    homeRoot: "h",
    documentsRoot: "",
    pid: 127,
    gitVersion: "2.47.3",
    logFile: "",
  };
}

function* answersOfHealth(): Generator<HealthAnswer> {
  for (const s of STRINGS) yield { status: "ok", serverVersion: s, uptimeMs: 1234n, pid: 99 };
  for (const uptimeMs of [0n, 1n, 127n, 128n, 16_383n, 16_384n, 2n ** 53n + 1n, 2n ** 63n - 1n, -1n])
    yield { status: "stopping", serverVersion: "0.1.0", uptimeMs, pid: 1 };
  yield { status: "", serverVersion: "", uptimeMs: 0n, pid: 0 };
  yield { status: "ok", serverVersion: "v", uptimeMs: 5n, pid: -7 };
}

/** A deterministic pseudo-random sequence (mulberry32), so that a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("SystemService's first calls without protobuf-es", () => {
  it("is written for exactly the fields system.proto gives Health and Initialize", () => {
    // A change to these messages must change system-wire.ts too; this fails until it does.
    expect(fieldsOf(HealthRequestSchema)).toEqual([]);
    expect(fieldsOf(HealthResponseSchema)).toEqual([
      "status 1 scalar 9",
      "server_version 2 scalar 9",
      "uptime_ms 3 scalar 3",
      "pid 4 scalar 5",
    ]);
    expect(fieldsOf(InitializeRequestSchema)).toEqual([
      "client_name 1 scalar 9",
      "client_version 2 scalar 9",
      "workspace_roots 3 list 9",
    ]);
    expect(fieldsOf(InitializeResponseSchema)).toEqual([
      "server_version 1 scalar 9",
      "protocol_version 2 scalar 5",
      "data_root 3 scalar 9",
      "home_root 4 scalar 9",
      "documents_root 5 scalar 9",
      "pid 6 scalar 5",
      "git_version 7 scalar 9",
      "log_file 8 scalar 9",
    ]);
  });

  it("encodes answers to the bytes connect sends, in JSON and in binary", () => {
    for (const binary of [false, true]) {
      for (const answer of answersOfHealth()) {
        const expected = health.getO(binary).serialize(create(HealthResponseSchema, answer));
        expect(
          Buffer.from(encodeHealthResponse(answer, binary)).toString("hex"),
          JSON.stringify(String(answer.uptimeMs)),
        ).toBe(Buffer.from(expected).toString("hex"));
      }
      for (const answer of answersOfInitialize()) {
        const expected = initialize.getO(binary).serialize(create(InitializeResponseSchema, answer));
        expect(Buffer.from(encodeInitializeResponse(answer, binary)).toString("hex")).toBe(
          Buffer.from(expected).toString("hex"),
        );
      }
    }
  });

  it("reads what clients send as connect reads it", () => {
    const questions: InitializeQuestion[] = [
      { clientName: "", clientVersion: "", workspaceRoots: [] },
      { clientName: "vscode", clientVersion: "1.96.0", workspaceRoots: ["/work/a", "/work/b"] },
      ...STRINGS.map((s) => ({ clientName: s, clientVersion: s, workspaceRoots: [s, s] })),
      {
        clientName: "x".repeat(300),
        clientVersion: "y",
        workspaceRoots: Array.from({ length: 200 }, (_, i) => `/r/${i}`),
      },
    ];
    for (const question of questions) {
      for (const binary of [false, true]) {
        // As the TypeScript clients encode them (connect's own serialization)...
        const bytes = initialize.getI(binary).serialize(create(InitializeRequestSchema, question));
        expect(decodeInitializeRequest(bytes, binary)).toEqual(question);
        expect(connectReads(bytes, binary)).toEqual(question);
      }
    }
    // ...and as other clients write JSON: proto names, nulls, unknown keys, spaces, escapes.
    const json: [string, InitializeQuestion][] = [
      [
        '{"client_name":"nvim","client_version":"0.7.2","workspace_roots":["\\/w"]}',
        { clientName: "nvim", clientVersion: "0.7.2", workspaceRoots: ["/w"] },
      ],
      ['{"clientName":null,"workspaceRoots":null}', { clientName: "", clientVersion: "", workspaceRoots: [] }],
      [
        ' { "clientName" : "a\\u00e9" , "extra" : "ignored", "more": ["x"], "none": null }\n',
        { clientName: "aé", clientVersion: "", workspaceRoots: [] },
      ],
      ['{"__proto__":"x","clientVersion":"2"}', { clientName: "", clientVersion: "2", workspaceRoots: [] }],
      ['{"[dline.ext]":"x","clientName":"k"}', { clientName: "k", clientVersion: "", workspaceRoots: [] }],
      ["{}", { clientName: "", clientVersion: "", workspaceRoots: [] }],
    ];
    for (const [text, question] of json) {
      const bytes = Buffer.from(text);
      expect(decodeInitializeRequest(bytes, false), text).toEqual(question);
      expect(connectReads(bytes, false), text).toEqual(question);
    }
    expect(isPlainHealthRequest(new Uint8Array(0), true)).toBe(true);
    for (const text of ["{}", ' {"unknown": "x"} ']) {
      expect(isPlainHealthRequest(Buffer.from(text), false), text).toBe(true);
      expect(() => health.getI(false).parse(Buffer.from(text))).not.toThrow();
    }
  });

  it("leaves to connect every body it does not read exactly as connect does", () => {
    const refusedByConnect = [
      '{"clientName":"a","clientName":"b"}',
      '{"clientName":"a","client_name":"b"}',
      '{"clientName":"a","client\\u004eame":"b"}',
      '{"clientName":1}',
      '{"workspaceRoots":"/w"}',
      '{"workspaceRoots":[null]}',
      '{"workspaceRoots":[1]}',
      '{"clientName":"\\ud800"}',
      "[]",
      "null",
      '"text"',
      "",
      "{",
    ];
    for (const text of refusedByConnect) {
      expect(decodeInitializeRequest(Buffer.from(text), false), text).toBeUndefined();
      expect(connectReads(Buffer.from(text), false), text).toBeInstanceOf(Error);
    }
    // Read by connect, but not by this module: connect's handler answers them.
    const leftToConnect = [
      Buffer.from('\ufeff{"clientName":"bom"}'),
      Buffer.from('{"clientName":"\\ud83d\\ude00"}'),
      Buffer.from('{"nested":{"a":1},"clientName":"x"}'),
      Buffer.from('{"count":3}'),
    ];
    for (const bytes of leftToConnect) {
      expect(decodeInitializeRequest(bytes, false), bytes.toString()).toBeUndefined();
      expect(connectReads(bytes, false), bytes.toString()).not.toBeInstanceOf(Error);
    }
    const binaryLeft = [
      Buffer.from([0x0a, 0x02, 0xc3, 0x28]), // invalid UTF-8: connect refuses it
      Buffer.from([0x0a, 0x05, 0x61]), // truncated
      Buffer.from([0x20, 0x01]), // field 4, an unknown field: connect keeps it and answers
      Buffer.from([0x08, 0x01]), // field 1 as a varint
      Buffer.from([0x0a]),
    ];
    for (const bytes of binaryLeft) expect(decodeInitializeRequest(bytes, true), bytes.toString("hex")).toBeUndefined();
    expect(isPlainHealthRequest(Buffer.from([0x08, 0x01]), true)).toBe(false);
    for (const text of ["[]", "null", "", '{"a":{}}', '{"a":1,"a":2}'])
      expect(isPlainHealthRequest(Buffer.from(text), false), text).toBe(false);
  });

  it("never reads a mutated or random body otherwise than connect", () => {
    const next = random(27);
    const seeds = [
      initialize
        .getI(true)
        .serialize(
          create(InitializeRequestSchema, { clientName: "vscode", clientVersion: "1", workspaceRoots: ["/a", "é"] }),
        ),
      Buffer.from('{"clientName":"vscode","clientVersion":"1","workspaceRoots":["/a","é"]}'),
    ];
    let read = 0;
    for (let i = 0; i < 5000; i++) {
      const binary = i % 2 === 0;
      const body = Buffer.from(nth(seeds, i % 2, "seed"));
      // Flip, drop or insert a few bytes, or take random bytes altogether.
      const mutated =
        i % 7 === 0
          ? Buffer.from(Array.from({ length: Math.floor(next() * 24) }, () => Math.floor(next() * 256)))
          : mutate(body, next);
      const ours = decodeInitializeRequest(mutated, binary);
      if (ours === undefined) continue;
      read++;
      expect(connectReads(mutated, binary), mutated.toString("hex")).toEqual(ours);
    }
    // The mutations leave many bodies readable: the comparison above did run.
    expect(read).toBeGreaterThan(500);
  });
});

function mutate(body: Buffer, next: () => number): Buffer {
  const bytes = [...body];
  const changes = 1 + Math.floor(next() * 3);
  for (let c = 0; c < changes; c++) {
    const at = Math.floor(next() * bytes.length);
    const what = next();
    if (what < 0.4) bytes[at] = Math.floor(next() * 256);
    else if (what < 0.7) bytes.splice(at, 1);
    else bytes.splice(at, 0, Math.floor(next() * 256));
  }
  return Buffer.from(bytes);
}
