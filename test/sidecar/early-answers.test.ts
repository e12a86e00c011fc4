import * as fs from "node:fs";
import * as http from "node:http";
import { create, fromBinary, fromJsonString, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { HealthResponseSchema, InitializeRequestSchema } from "../../core/src/gen/dline/v1/system_pb.js";
import type { RunningSidecar } from "../helpers/sidecar.js";
import { sidecarsStoppedAfterEach } from "../helpers/sidecar-per-test.js";
import { nth } from "../helpers/items.js";

// The sidecar answers an editor's first Initialize and Health before connect and protobuf-es
// load (core/src/rpc/system-early.ts); these tests hold those answers to connect's own.

const start = sidecarsStoppedAfterEach();

interface Answer {
  status: number;
  type: string | undefined;
  length: string | undefined;
  connection: string | undefined;
  body: Buffer;
}

/** One POST on its own connection, as raw as an editor's client sends it. */
function post(
  s: RunningSidecar,
  method: string,
  type: string,
  body: Uint8Array | string,
  token: string | null = s.process.handshake.token,
  extra: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${s.process.handshake.url}/dline.v1.SystemService/${method}`, {
      method: "POST",
      agent: false,
      headers: {
        "content-type": type,
        "connect-protocol-version": "1",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...extra,
      },
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          type: res.headers["content-type"],
          length: res.headers["content-length"],
          connection: res.headers.connection,
          body: Buffer.concat(chunks),
        }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

const INITIALIZE = { clientName: "vitest", clientVersion: "1", workspaceRoots: ["/w/é", "/w/b"] };
/** The Neovim and JetBrains clients send a deadline with every call. */
const DEADLINE = { "connect-timeout-ms": "30000" };
const FIRST_CALLS: [method: string, type: string, body: Uint8Array | string, extra?: Record<string, string>][] = [
  ["Initialize", "application/json", JSON.stringify(INITIALIZE)],
  ["Initialize", "application/proto", toBinary(InitializeRequestSchema, create(InitializeRequestSchema, INITIALIZE))],
  ["Health", "application/json", "{}"],
  ["Health", "application/proto", new Uint8Array(0)],
  ["Initialize", "application/json", JSON.stringify(INITIALIZE), DEADLINE],
  ["Health", "application/proto", new Uint8Array(0), DEADLINE],
];

/** Health's answer without its uptime, which differs between two calls. */
function withoutUptime(answer: Answer): unknown {
  const message =
    answer.type === "application/proto"
      ? fromBinary(HealthResponseSchema, answer.body)
      : fromJsonString(HealthResponseSchema, answer.body.toString());
  const shape = answer.type === "application/proto" ? "" : Object.keys(JSON.parse(answer.body.toString())).join(",");
  return { status: message.status, serverVersion: message.serverVersion, pid: message.pid, shape };
}

describe("an editor's first calls, answered while connect loads", () => {
  it("get the answers connect gives to the same calls later, byte for byte", async () => {
    // A fresh sidecar for each: only a sidecar's very first call is sure to come before connect.
    for (const [method, type, body, extra] of FIRST_CALLS) {
      const s = await start();
      const early = await post(s, method, type, body, undefined, extra);
      // A method SystemService does not have: connect's handler answers it, and is built for it.
      expect((await post(s, "NoSuchMethod", "application/json", "{}")).status).toBe(404);
      const later = await post(s, method, type, body, undefined, extra);
      expect(early.status, `${method} ${type}`).toBe(200);
      expect([early.type, early.connection], `${method} ${type}`).toEqual([later.type, later.connection]);
      if (method === "Initialize") {
        expect(early.body.toString("hex"), `${method} ${type}`).toBe(later.body.toString("hex"));
        expect(early.length).toBe(later.length);
      } else {
        expect(withoutUptime(early), `${method} ${type}`).toEqual(withoutUptime(later));
        expect(withoutUptime(early)).toMatchObject({ status: "ok", pid: s.process.handshake.pid });
      }
      await s.stop();
      // Initialize ran once per call: none was answered twice.
      const initialized = fs.readFileSync(s.stderrFile, "utf8").match(/"msg":"client initialized"/g) ?? [];
      expect(initialized).toHaveLength(method === "Initialize" ? 2 : 0);
    }
  });

  it("leave a first call they cannot read to connect, which gets its body", async () => {
    // Duplicate keys: connect refuses them (protobuf-es's JSON rules).
    const refused = await post(await start(), "Initialize", "application/json", '{"clientName":"a","clientName":"b"}');
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body.toString())).toMatchObject({ code: "invalid_argument" });
    // An unknown binary field: connect reads past it and answers.
    const s = await start();
    const withUnknown = Buffer.concat([
      toBinary(InitializeRequestSchema, create(InitializeRequestSchema, INITIALIZE)),
      Buffer.from([0xa0, 0x06, 0x01]), // field 100, varint 1
    ]);
    const answered = await post(s, "Initialize", "application/proto", withUnknown);
    expect(answered.status).toBe(200);
    const plain = await post(s, "Initialize", "application/proto", nth(FIRST_CALLS, 1, "first call")[2]);
    expect(answered.body.toString("hex")).toBe(plain.body.toString("hex"));
    // A timeout header connect refuses: its error, not an answer.
    for (const timeout of ["soon", "12345678901"]) {
      const refusedTimeout = await post(await start(), "Health", "application/json", "{}", undefined, {
        "connect-timeout-ms": timeout,
      });
      expect(refusedTimeout.status, timeout).toBe(400);
      expect(JSON.parse(refusedTimeout.body.toString()), timeout).toMatchObject({ code: "invalid_argument" });
    }
  });

  it("never read a first call without the token", async () => {
    for (const [method, type, body] of FIRST_CALLS) {
      const s = await start();
      const refused = await post(s, method, type, body, "wrong-token-of-the-right-length-0123456789ab");
      expect(refused.status, `${method} ${type}`).toBe(401);
      expect(refused.connection).toBe("close");
      expect(JSON.parse(refused.body.toString())).toMatchObject({ code: "unauthenticated" });
      const missing = await post(s, method, type, body, null);
      expect(missing.status).toBe(401);
      await s.stop();
      expect(fs.readFileSync(s.stderrFile, "utf8")).not.toMatch(/client initialized/);
    }
  });
});
