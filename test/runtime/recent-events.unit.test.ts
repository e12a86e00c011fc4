/**
 * The newest events a process leaves in a task's state.json for the next process that loads
 * the task (recent-events.ts): read back exactly (bigints included), streamed chunks left out,
 * at most 64 events and about 64 KB, never with a hole, and those an earlier process left kept
 * ahead of this process's own while there is room.
 */
import { describe, expect, it } from "vitest";
import { TaskEventLog } from "../../core/src/runtime/event-log.js";
import { readRecorded, recordRecent } from "../../core/src/runtime/recent-events.js";
import type { RuntimeEvent } from "../../core/src/runtime/runtime-events.js";

/** Through JSON, as state.json holds it. */
function roundTrip(log: TaskEventLog, earlier: RuntimeEvent[] = []): RuntimeEvent[] {
  return readRecorded("t", JSON.parse(JSON.stringify(recordRecent(earlier, log))));
}

describe("a task's newest events, kept in its state for a later load", () => {
  it("come back as they were appended, bigints included; streamed chunks are left out", () => {
    const log = new TaskEventLog("t", 100n);
    log.append({ case: "statusChanged", value: { status: "running", reason: "" } });
    log.append({ case: "messageDelta", value: { messageId: "m1", text: "Hel" } });
    log.append({ case: "toolOutput", value: { toolCallId: "c1", chunk: "out" } });
    log.append({
      case: "usage",
      value: {
        tokensIn: 12n,
        tokensOut: 3n,
        cacheReads: 0n,
        cacheWrites: 0n,
        cost: 0.5,
        costUnknown: false,
        contextWindow: 200_000n,
      },
    });
    log.append({ case: "filesRestored", value: { checkpointId: "a", undoCheckpointId: "b", undo: false } });
    const back = roundTrip(log);
    expect(back.map((e) => e.seq)).toEqual([101n, 104n, 105n]);
    expect(back[1]!.event).toEqual(log.since(103n)[0]!.event);
    expect(back[2]).toEqual({ ...log.since(104n)[0]!, taskId: "t" });
  });

  it("keep the newest 64, and stop before an event too large to keep rather than skip it", () => {
    const log = new TaskEventLog("t");
    for (let i = 0; i < 100; i++) log.append({ case: "rewound", value: { afterMessageId: `m${i}` } });
    const newest = roundTrip(log);
    expect(newest).toHaveLength(64);
    expect(newest[0]!.seq).toBe(37n);
    expect(newest.at(-1)!.seq).toBe(100n);

    log.append({
      case: "messageAdded",
      value: { message: { id: "big", text: "x".repeat(100_000) } },
    } as RuntimeEvent["event"]);
    log.append({ case: "statusChanged", value: { status: "completed", reason: "" } });
    expect(roundTrip(log).map((e) => e.seq)).toEqual([102n]);
  });

  it("an earlier process's events stay ahead of this one's while they fit, and only when none of this one's was left out", () => {
    const earlierLog = new TaskEventLog("t");
    for (let i = 0; i < 3; i++) earlierLog.append({ case: "rewound", value: { afterMessageId: `e${i}` } });
    const earlier = roundTrip(earlierLog);
    const log = new TaskEventLog("t", 10_000n);
    log.append({ case: "filesRestored", value: { checkpointId: "a", undoCheckpointId: "b", undo: true } });
    expect(roundTrip(log, earlier).map((e) => e.seq)).toEqual([1n, 2n, 3n, 10_001n]);

    log.append({
      case: "messageAdded",
      value: { message: { id: "big", text: "x".repeat(100_000) } },
    } as RuntimeEvent["event"]);
    log.append({ case: "statusChanged", value: { status: "completed", reason: "" } });
    expect(roundTrip(log, earlier).map((e) => e.seq)).toEqual([10_003n]);
  });

  it("what cannot be read is left out, never thrown", () => {
    expect(readRecorded("t", undefined)).toEqual([]);
    expect(readRecorded("t", { seq: "1" })).toEqual([]);
    const read = readRecorded("t", [
      { seq: "x", time: "1", event: { case: "rewound", value: {} } },
      { seq: "2", time: "1", event: null },
      { seq: "3", time: "1", event: { case: "rewound", value: { afterMessageId: "" } } },
      { seq: "3", time: "1", event: { case: "rewound", value: { afterMessageId: "again" } } },
    ]);
    expect(read.map((e) => e.seq)).toEqual([3n]);
  });
});
