import { describe, expect, it } from "vitest";
import { compareNames } from "../../core/src/text/name-order.js";
import { withThousands } from "../../core/src/text/numbers.js";

describe("withThousands", () => {
  it("groups digits as English writes counts, for numbers and bigints", () => {
    const cases: [number | bigint, string][] = [
      [0, "0"],
      [7, "7"],
      [999, "999"],
      [1000, "1,000"],
      [27000, "27,000"],
      [123456, "123,456"],
      [1234567, "1,234,567"],
      [-1234, "-1,234"],
      [12345678901234567890n, "12,345,678,901,234,567,890"],
      [1n, "1"],
    ];
    for (const [n, text] of cases) expect(withThousands(n)).toBe(text);
  });

  it("writes what toLocaleString('en') writes for whole numbers", () => {
    for (const n of [0, 5, 12, 999, 1000, 1001, 65536, 999999, 1000000, 2 ** 40, -42000])
      expect(withThousands(n)).toBe(n.toLocaleString("en"));
  });

  it("leaves what is not a whole number as String shows it", () => {
    expect(withThousands(1.5)).toBe("1.5");
    expect(withThousands(Number.NaN)).toBe("NaN");
  });
});

describe("compareNames", () => {
  it("orders names with their case set aside, then by code units", () => {
    const names = ["c.md", "B.md", "a.md", "A.md", "readme", "README", "10-x.md", "2-x.md", "src/", "Src/"];
    expect([...names].sort(compareNames)).toEqual([
      "10-x.md",
      "2-x.md",
      "A.md",
      "a.md",
      "B.md",
      "c.md",
      "README",
      "readme",
      "Src/",
      "src/",
    ]);
  });

  it("is a total order: equal only for the same name", () => {
    expect(compareNames("x", "x")).toBe(0);
    expect(compareNames("X", "x")).not.toBe(0);
    expect(Math.sign(compareNames("X", "x"))).toBe(-Math.sign(compareNames("x", "X")));
  });
});
