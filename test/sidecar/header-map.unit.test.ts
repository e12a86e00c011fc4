import * as http from "node:http";
import * as net from "node:net";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { HeaderMap } from "../../core/src/server/header-map.js";
import { nth } from "../helpers/items.js";

/** Applies the same operations to a HeaderMap and to Node's Headers and returns both views. */
function both(ops: (h: Headers) => void): { ours: [string, string][]; node: [string, string][] } {
  const ours = new HeaderMap();
  const node = new Headers();
  ops(ours);
  ops(node);
  expect(forEachOf(ours)).toEqual(forEachOf(node));
  return { ours: [...ours], node: [...node] };
}

function forEachOf(headers: Headers): string[] {
  const seen: string[] = [];
  headers.forEach((value, key) => seen.push(`${key}=${value}`));
  return seen;
}

/** Sends `head` (request line and headers) to a node:http server; its answer's status and the request's rawHeaders. */
async function rawRequest(head: string): Promise<{ status: string; rawHeaders?: string[] }> {
  let rawHeaders: string[] | undefined;
  const server = http.createServer((req, res) => {
    rawHeaders = req.rawHeaders;
    res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const socket = net.connect((server.address() as AddressInfo).port, "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += String(d)));
    socket.end(`${head}\r\n\r\n`);
    await new Promise((resolve) => socket.on("close", resolve));
    return { status: nth(answer.split("\r\n", 1), 0, "line"), rawHeaders };
  } finally {
    server.close();
  }
}

describe("HeaderMap (the Fetch standard's Headers for the server's unary calls)", () => {
  it("behaves as Node's Headers for names, values, repeats, Set-Cookie and order", () => {
    const cases: ((h: Headers) => void)[] = [
      (h) => {
        h.append("Content-Type", "application/json");
        h.append("x-b", "1");
        h.append("X-B", "2");
        h.append("x-a", "  padded\t");
      },
      (h) => {
        h.append("Set-Cookie", "a=1");
        h.append("set-cookie", "b=2");
        h.set("trailer-x", "y");
        h.delete("TRAILER-X");
      },
      (h) => {
        h.set("z", "1");
        h.set("Z", "2");
        h.append("a", "");
      },
    ];
    for (const ops of cases) {
      const { ours, node } = both(ops);
      expect(ours).toEqual(node);
    }
    const ours = new HeaderMap([
      ["X-Token", "a"],
      ["x-token", "b"],
      ["Set-Cookie", "c=1"],
      ["Set-Cookie", "d=2"],
    ]);
    const node = new Headers([
      ["X-Token", "a"],
      ["x-token", "b"],
      ["Set-Cookie", "c=1"],
      ["Set-Cookie", "d=2"],
    ]);
    expect(ours.get("x-TOKEN")).toBe(node.get("x-TOKEN"));
    expect(ours.get("missing")).toBe(node.get("missing"));
    expect(ours.has("X-TOKEN")).toBe(true);
    expect(ours.getSetCookie()).toEqual(node.getSetCookie());
    expect([...ours.keys()]).toEqual([...node.keys()]);
    expect([...ours.values()]).toEqual([...node.values()]);
    const seen: string[] = [];
    ours.forEach((value, key, parent) => {
      expect(parent).toBe(ours);
      seen.push(`${key}=${value}`);
    });
    const seenNode: string[] = [];
    node.forEach((value, key) => seenNode.push(`${key}=${value}`));
    expect(seen).toEqual(seenNode);
  });

  it("refuses the names and values Node's Headers refuses", () => {
    for (const [name, value] of [
      ["bad name", "v"],
      ["", "v"],
      ["x-ok", "a\r\nInjected: 1"],
      ["x-ok", "nul\0"],
      ["héader", "v"],
    ] as const) {
      expect(() => new Headers().append(name, value), `${name}: ${value}`).toThrow(TypeError);
      expect(() => new HeaderMap().append(name, value), `${name}: ${value}`).toThrow(TypeError);
    }
  });

  it("builds from what node:http's parser let through, as Node's Headers does", async () => {
    const { status, rawHeaders } = await rawRequest(
      "POST /x HTTP/1.1\r\nHost: h\r\nX-Pad:   padded value \t\r\nX-Dup: 1\r\nx-dup: 2\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n" +
        "Authorization: Bearer t\r\nX-Empty:\r\nConnection: close",
    );
    expect(status).toBe("HTTP/1.1 200 OK");
    const ours = HeaderMap.fromRaw(rawHeaders!);
    const node = new Headers();
    for (let i = 0; i < rawHeaders!.length; i += 2)
      node.append(nth(rawHeaders!, i, "raw header name"), nth(rawHeaders!, i + 1, "raw header value"));
    expect([...ours]).toEqual([...node]);
    expect(forEachOf(ours)).toEqual(forEachOf(node));
    expect(ours.getSetCookie()).toEqual(node.getSetCookie());
    expect(ours.get("x-pad")).toBe("padded value");
    // What fromRaw does not check again: node's parser refuses such requests before any handler.
    for (const bad of ["X-Bad: a\0b", "Bad Name: v", "X-Bad: a\rb", "H\u00e9: v"]) {
      const refused = await rawRequest(`POST /x HTTP/1.1\r\nHost: h\r\n${bad}\r\nConnection: close`);
      expect(refused.status, bad).toBe("HTTP/1.1 400 Bad Request");
      expect(refused.rawHeaders, bad).toBeUndefined();
    }
  });

  it("builds from node:http's raw header list", () => {
    const h = HeaderMap.fromRaw([
      "Authorization",
      "Bearer t",
      "Content-Type",
      "application/json",
      "X-Dup",
      "1",
      "x-dup",
      "2",
    ]);
    expect(h.get("authorization")).toBe("Bearer t");
    expect(h.get("x-dup")).toBe("1, 2");
    expect(Object.prototype.toString.call(h)).toBe("[object Headers]");
  });
});
