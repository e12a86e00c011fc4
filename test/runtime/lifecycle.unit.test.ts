import { describe, expect, it } from "vitest";
import { Lifecycle } from "../../core/src/lifecycle.js";
import { silentLogger } from "../../core/src/logging/logger.js";

describe("Lifecycle stop order", () => {
  it("runs the flushers registered `first` before every other, then the others last-registered first", async () => {
    const ran: string[] = [];
    let exited: number | undefined;
    const lifecycle = new Lifecycle(silentLogger(), (code) => (exited = code));
    lifecycle.onStop("checkpoint maintenance", () => void ran.push("checkpoint maintenance"));
    lifecycle.onStop("checkpoint restores", () => void ran.push("checkpoint restores"), { first: true });
    // Registered later (the task runtime is made at its first use), yet after the restores.
    lifecycle.onStop("task runtime", () => void ran.push("task runtime"));
    await lifecycle.stop("stdin closed");
    expect(ran).toEqual(["checkpoint restores", "task runtime", "checkpoint maintenance"]);
    await new Promise((r) => setTimeout(r, 10));
    expect(exited).toBe(0);
  });
});
