import { describe, expect, it } from "vitest";
import { captured, entry, firstOf, lastOf, nth } from "./items.js";

describe("reading an item a test expects", () => {
  it("returns the item that is there", () => {
    const items = ["a", "b", "c"];
    expect(nth(items, 1)).toBe("b");
    expect(lastOf(items)).toBe("c");
    expect(firstOf(items, 2)).toEqual(["a", "b"]);
    expect(entry({ x: 1 }, "x")).toBe(1);
    expect(captured(/v(\d+)/.exec("v12"), "a version")).toBe("12");
  });

  it("keeps an item that is there but undefined or falsy", () => {
    expect(nth([0, undefined, ""], 0)).toBe(0);
    expect(nth([0, undefined, ""], 1)).toBeUndefined();
    expect(lastOf([0, undefined, ""])).toBe("");
  });

  it("fails naming what is missing and what there was", () => {
    expect(() => nth(["one"], 1, "recorded request")).toThrow("expected a 2nd recorded request, got 1");
    expect(() => nth([], 0, "event")).toThrow("expected a 1st event, got 0");
    expect(() => nth([1, 2, 3], 7, "checkpoint")).toThrow("expected an 8th checkpoint, got 3");
    expect(() => nth([1], 10, "turn")).toThrow("expected an 11th turn, got 1");
    expect(() => nth([1], 21, "turn")).toThrow("expected a 22nd turn, got 1");
    expect(() => nth([1], -1, "turn")).toThrow("expected turn at index -1, got 1");
    expect(() => lastOf([], "event")).toThrow("expected at least one event, got none");
    expect(() => firstOf(["ask"], 2, "ask")).toThrow("expected at least 2 asks, got 1");
    expect(() => entry({ a: 1, b: 2 }, "c", "task")).toThrow('expected task "c", got ["a","b"]');
    expect(() => captured(/v(\d+)/.exec("none"), "a version")).toThrow("expected a version to match, got no match");
  });
});
