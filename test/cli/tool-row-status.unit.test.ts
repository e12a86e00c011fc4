import { describe, expect, it } from "vitest";
import { toolRowStatus } from "../../adapters/cli/src/tool-row-status.js";

describe("dline show: how a tool row's call ended", () => {
  it("says nothing of a call that ran, names the others with their reason's first line", () => {
    expect(toolRowStatus(JSON.stringify({ status: "done", reason: "" }))).toBe("");
    expect(toolRowStatus(JSON.stringify({ status: "denied", reason: "" }))).toBe(" (denied)");
    expect(toolRowStatus(JSON.stringify({ status: "interrupted", reason: "The task was cancelled.\nmore" }))).toBe(
      " (interrupted: The task was cancelled.)",
    );
    expect(toolRowStatus(JSON.stringify({ status: "pending" }))).toBe(" (waiting for approval)");
  });

  it("a reason's control characters are shown, not sent to the terminal; rows without a record say nothing", () => {
    expect(toolRowStatus(JSON.stringify({ status: "failed", reason: "bad \u001b[2J" }))).not.toContain("\u001b");
    expect(toolRowStatus("")).toBe("");
    expect(toolRowStatus("{}")).toBe("");
  });
});
