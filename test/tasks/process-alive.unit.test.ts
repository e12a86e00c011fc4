// Whether a claim (a task's owner file, the checkpoints' lock folder) names a process that runs.
// A claim naming this very process is answered from what it knows of itself (its lock is
// checked at every take and release); one naming its pid with another identity is a process
// that had the pid before (another boot, or an earlier start) and counts as gone, as for any pid.
import * as os from "node:os";
import { describe, expect, it } from "vitest";
import { currentProcessIdentity, isClaimLive } from "../../core/src/tasks/index.js";

describe("a claim naming this process's pid", () => {
  const own = currentProcessIdentity();

  it("is live with this process's identity, or with none (a claim of an earlier version)", () => {
    expect(isClaimLive(process.pid, os.hostname(), own)).toBe(true);
    expect(isClaimLive(process.pid, os.hostname(), undefined)).toBe(true);
    expect(isClaimLive(process.pid, undefined, {})).toBe(true);
  });

  it.runIf(process.platform === "linux")("is gone when it was made by an earlier process with this pid", () => {
    expect(own.startTicks).toBeTypeOf("number");
    expect(isClaimLive(process.pid, os.hostname(), { ...own, startTicks: own.startTicks! - 1 })).toBe(false);
    expect(isClaimLive(process.pid, os.hostname(), { ...own, bootId: "another-boot" })).toBe(false);
  });
});

describe("a claim naming another pid", () => {
  it("is gone when no process has that pid", () => {
    // Above Linux's largest pid (4,194,304).
    expect(isClaimLive(4_194_304 + 17, os.hostname(), {})).toBe(false);
  });

  it("of another host is taken to be live (it cannot be checked from here)", () => {
    expect(isClaimLive(4_194_304 + 17, `not-${os.hostname()}`, {})).toBe(true);
  });
});
