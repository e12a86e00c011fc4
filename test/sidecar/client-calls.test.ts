import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";

const { sidecar } = scopedSidecars();

const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);
beforeEach(() => void process.on("warning", onWarning));
afterEach(() => {
  process.off("warning", onWarning);
  warnings.length = 0;
});

describe("the TS client's plain unary calls", () => {
  it("make many calls at once without a signal and leave no listener behind (no MaxListenersExceededWarning)", async () => {
    const s = await sidecar();
    const answers = await Promise.all(Array.from({ length: 40 }, () => s.clients.system.health({})));
    expect(answers.every((a) => a.status === "ok")).toBe(true);
    // Node emits process warnings on the next tick.
    await new Promise((r) => setImmediate(r));
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
  });

  it("still cancel a call whose signal aborts", async () => {
    const s = await sidecar();
    const controller = new AbortController();
    const call = s.clients.system.health({}, { signal: controller.signal });
    controller.abort();
    await expect(call).rejects.toThrow(/cancel|abort/i);
    expect((await s.clients.system.health({})).status).toBe("ok");
  });
});
