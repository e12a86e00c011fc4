import { describe, expect, it } from "vitest";
import { listPrices, priceTableKey } from "../../core/src/agent/providers/price-table.js";
import { resolvePrices } from "../../core/src/agent/providers/pricing.js";

const unset = { inputPerMTok: 0, outputPerMTok: 0, cacheReadPerMTok: 0, cacheWritePerMTok: 0, zeroCost: false };

describe("the price table", () => {
  it("finds a model however a profile or a router spells it", () => {
    for (const id of [
      "claude-sonnet-4-5",
      "claude-sonnet-4-5-20250929",
      "anthropic/claude-sonnet-4.5",
      "CLAUDE-SONNET-4-5",
    ]) {
      expect(priceTableKey(id), id).toBe("claude-sonnet-4-5");
    }
    expect(priceTableKey("gpt-4o-2024-08-06")).toBe("gpt-4o");
    expect(priceTableKey("claude-3-5-sonnet-latest")).toBe("claude-3-5-sonnet");
  });

  it("prices cache reads and writes, and tells close models apart", () => {
    expect(listPrices("claude-sonnet-4-5")).toMatchObject({
      inputPerMTok: 3,
      outputPerMTok: 15,
      cacheReadPerMTok: 0.3,
      cacheWritePerMTok: 3.75,
    });
    expect(listPrices("claude-opus-4-5")).toMatchObject({ inputPerMTok: 5, outputPerMTok: 25 });
    expect(listPrices("claude-opus-4-1-20250805")).toMatchObject({ inputPerMTok: 15, outputPerMTok: 75 });
    expect(listPrices("gpt-4o-mini")).toMatchObject({ inputPerMTok: 0.15, cacheReadPerMTok: 0.075 });
    expect(listPrices("gpt-4o")).toMatchObject({ inputPerMTok: 2.5 });
    expect(listPrices("llama3.1:8b")).toBeUndefined();
    expect(listPrices("gpt-5-1-codex-mini")).toBeUndefined();
  });
});

describe("which prices a profile is charged at", () => {
  it("uses the table for a known model whose profile sets no prices", () => {
    const resolved = resolvePrices({ ...unset, model: "claude-haiku-4-5" });
    expect(resolved.source).toBe("price table (claude-haiku-4-5)");
    expect(resolved.prices).toEqual({
      inputPerMTok: 1,
      outputPerMTok: 5,
      cacheReadPerMTok: 0.1,
      cacheWritePerMTok: 1.25,
    });
  });

  it("lets the profile's prices win, and fills cache prices it leaves out", () => {
    const known = resolvePrices({ ...unset, model: "claude-sonnet-4-5", inputPerMTok: 2, outputPerMTok: 10 });
    expect(known.prices).toEqual({
      inputPerMTok: 2,
      outputPerMTok: 10,
      cacheReadPerMTok: 0.3,
      cacheWritePerMTok: 3.75,
    });
    const unknownModel = resolvePrices({ ...unset, model: "my-finetune", inputPerMTok: 2, outputPerMTok: 10 });
    expect(unknownModel.source).toBe("profile");
    // Never a silent $0 for cache tokens: the input price bounds them.
    expect(unknownModel.prices).toEqual({
      inputPerMTok: 2,
      outputPerMTok: 10,
      cacheReadPerMTok: 2,
      cacheWritePerMTok: 2,
    });
  });

  it("says unknown, not $0, when nothing is known, unless the model costs nothing", () => {
    expect(resolvePrices({ ...unset, model: "llama3.1:8b" })).toEqual({ prices: undefined, source: "unknown" });
    expect(resolvePrices({ ...unset, model: "llama3.1:8b", zeroCost: true }).source).toBe("zero cost");
  });
});
