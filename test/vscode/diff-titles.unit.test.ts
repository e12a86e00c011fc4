/**
 * Two Compares (or two completions' View Changes) left open were two tabs with the same title,
 * "Changes since snapshot": which checkpoint each showed could not be told. Each tab's title now
 * says which checkpoint, by its kind and time as the chat lists it.
 */
import { describe, expect, it } from "vitest";
import { checkpointTabDetail } from "../../adapters/vscode/src/checkpoints/diff-titles.js";

const at = (h: number, m: number, s: number) => new Date(2026, 11, 6, h, m, s).getTime();
const clock = (ms: number) =>
  new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });

describe("which checkpoint a diff tab shows", () => {
  it("names the task's start, a turn and a completion by kind and time: two checkpoints read apart", () => {
    const start = checkpointTabDetail("54f8eeb7cf62", { kind: "CHECKPOINT_KIND_BASELINE", createdAt: at(7, 58, 48) });
    const turn = checkpointTabDetail("67f08190efd1", { kind: "CHECKPOINT_KIND_TURN", createdAt: at(7, 58, 49) });
    const done = checkpointTabDetail("071750a7aed8", { kind: "CHECKPOINT_KIND_COMPLETION", createdAt: at(7, 59, 2) });
    expect(start).toBe(`task start, ${clock(at(7, 58, 48))}`);
    expect(turn).toBe(`turn, ${clock(at(7, 58, 49))}`);
    expect(done).toBe(`completion, ${clock(at(7, 59, 2))}`);
    expect(new Set([start, turn, done]).size).toBe(3);
  });

  it("falls back to the short id when the time or the checkpoint is not known", () => {
    expect(checkpointTabDetail("67f08190efd1cb7b", { kind: "CHECKPOINT_KIND_TURN" })).toBe("turn 67f08190");
    expect(checkpointTabDetail("67f08190efd1cb7b", undefined)).toBe("checkpoint 67f08190");
    expect(checkpointTabDetail("67f08190efd1cb7b", { kind: "CHECKPOINT_KIND_UNSPECIFIED", createdAt: 1 })).toBe(
      "checkpoint 67f08190",
    );
  });
});
