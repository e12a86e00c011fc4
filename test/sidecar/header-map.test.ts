import { describe, expect, it } from "vitest";
import { HeaderMap } from "../../core/src/server/header-map.js";

/** Applies the same operations to a HeaderMap and to Node's Headers and returns both views. */
function both(ops: (h: Headers) => void): { ours: [string, string][]; node: [string, string][] } {
  const ours = new HeaderMap();
  const node = new Headers();
  ops(ours);
  ops(node);
  return { ours: [...ours], node: [...node] };
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
    const ours = new HeaderMap([["X-Token", "a"], ["x-token", "b"], ["Set-Cookie", "c=1"], ["Set-Cookie", "d=2"]]);
    const node = new Headers([["X-Token", "a"], ["x-token", "b"], ["Set-Cookie", "c=1"], ["Set-Cookie", "d=2"]]);
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
    ]) {
      expect(() => new Headers().append(name, value), `${name}: ${value}`).toThrow(TypeError);
      expect(() => new HeaderMap().append(name, value), `${name}: ${value}`).toThrow(TypeError);
    }
  });

  it("builds from node:http's raw header list", () => {
    const h = HeaderMap.fromRaw(["Authorization", "Bearer t", "Content-Type", "application/json", "X-Dup", "1", "x-dup", "2"]);
    expect(h.get("authorization")).toBe("Bearer t");
    expect(h.get("x-dup")).toBe("1, 2");
    expect(Object.prototype.toString.call(h)).toBe("[object Headers]");
  });
});
