import type { TaskEventLog } from "./event-log.js";
import type { RuntimeEvent } from "./runtime-events.js";

/**
 * A task's newest events, kept in its state.json by the process that holds the task, for a
 * window whose sidecar could not follow that process while it held it: a restore made by a
 * `dline` run, or a window opened and closed, takes the task, restores and lets go within a
 * moment, and its events lived only in its memory. A sidecar that loads the task again sends
 * a subscriber that is behind the ones it missed (TaskRuntime.subscribe).
 *
 * Chunks of streamed text and command output are left out: the message or call they belong to
 * is sent whole when it ends (message_finalized, tool_finished).
 */
const STREAMED = new Set<RuntimeEvent["event"]["case"]>(["messageDelta", "reasoningDelta", "toolOutput"]);
const MOST_EVENTS = 64;
/** What the events may take in state.json, which every save of the task writes whole. */
const MOST_BYTES = 64 * 1024;

/** One event as JSON holds it: seq, time and the body's bigints as decimal strings. */
export type RecordedEvent = { seq: string; time: string; event: unknown };

/**
 * The newest events a later load may send (oldest first, none streamed): those `earlier` kept
 * (read when this process loaded the task) followed by the log's, at most 64 events and about
 * 64 KB. A single event too large to fit (a whole file's edit) ends the list there: older events
 * without it would give a window a history with a hole in its middle.
 */
export function recordRecent(earlier: readonly RuntimeEvent[], log: TaskEventLog): RecordedEvent[] {
  const { events, all } = log.newestInMemory(MOST_EVENTS, MOST_BYTES, (e) => !STREAMED.has(e.event.case));
  const room = MOST_EVENTS - events.length;
  const older = all && room > 0 ? earlier.slice(-room) : [];
  return [...older, ...events].map((event) => ({
    seq: event.seq.toString(),
    time: event.time.toString(),
    event: toJson(event.event),
  }));
}

/** The events `recordRecent` kept, for `taskId`, in seq order; whatever cannot be read is left out. */
export function readRecorded(taskId: string, recorded: unknown): RuntimeEvent[] {
  if (!Array.isArray(recorded)) return [];
  const events: RuntimeEvent[] = [];
  for (const item of recorded as unknown[]) {
    const r = item as Partial<RecordedEvent> | null;
    if (!r || typeof r.seq !== "string" || typeof r.time !== "string" || !/^\d+$/.test(r.seq + r.time)) continue;
    const body = fromJson(r.event) as RuntimeEvent["event"] | undefined;
    if (!body || typeof body !== "object" || typeof body.case !== "string") continue;
    const seq = BigInt(r.seq);
    if (events.length && seq <= events.at(-1)!.seq) continue;
    events.push({ seq, taskId, time: BigInt(r.time), event: body });
  }
  return events;
}

const BIGINT = "$bigint";

function toJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? { [BIGINT]: String(v) } : v)));
}

function fromJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value), (_key, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const big = (v as Record<string, unknown>)[BIGINT];
      if (Object.keys(v).length === 1 && typeof big === "string" && /^-?\d+$/.test(big)) return BigInt(big);
    }
    return v;
  });
}
