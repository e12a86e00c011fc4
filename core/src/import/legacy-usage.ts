import { emptyUsage, type ImportedRequest, type UsageTotals } from "./import-types.js";
import { finiteNumber, isObject } from "./read-only-files.js";
import { requestKey } from "./source-keys.js";

/**
 * The usage of a legacy task as Cline counts it: every `api_req_started` merged with the first
 * `api_req_finished` after it (older versions put the numbers in the finished message), plus
 * the `deleted_api_reqs` entries (the usage of requests whose messages a checkpoint restore
 * removed) and the `subagent_usage` entries (what subagent batches spent). The task message
 * itself (the first entry) never counts. Each counted entry becomes one metrics row with a key
 * of its own, so a re-import stores it once.
 */
export interface LegacyUsage {
  usage: UsageTotals;
  requests: ImportedRequest[];
  /** Entries whose JSON could not be read (not counted, as Cline does not count them). */
  unreadable: number;
  deletedEntries: number;
  subagentEntries: number;
}

type UiEntry = Record<string, unknown>;

const COUNTED = new Set(["api_req_started", "deleted_api_reqs", "subagent_usage"]);

function sayOf(m: UiEntry): string {
  return m.type === "say" && typeof m.say === "string" ? m.say : "";
}

function parseObject(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== "string" || !text) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Index of the `api_req_finished` that completes the request started at `i`, if any. */
function finishedAfter(entries: UiEntry[], i: number): number {
  for (let j = i + 1; j < entries.length; j++) if (sayOf(entries[j]!) === "api_req_finished") return j;
  return -1;
}

export function legacyUsage(taskId: string, entries: UiEntry[]): LegacyUsage {
  const usage = emptyUsage();
  const requests: ImportedRequest[] = [];
  let unreadable = 0;
  let deletedEntries = 0;
  let subagentEntries = 0;
  let requestIndex = 0;
  // A request that took a later api_req_finished swallows the starts in between, as Cline's
  // pairing does (they keep their own numbers).
  let pairedUpTo = -1;
  entries.forEach((m, i) => {
    const say = sayOf(m);
    if (!COUNTED.has(say)) return;
    const index = say === "api_req_started" ? requestIndex++ : 0;
    if (i === 0) return;
    let info = parseObject(m.text);
    if (say === "api_req_started" && i > pairedUpTo) {
      const j = finishedAfter(entries, i);
      if (j >= 0) {
        pairedUpTo = j;
        // Cline reads a message without text as `{}` when it pairs them.
        const started = info ?? (m.text ? undefined : {});
        const finishedText = entries[j]!.text;
        const finished = parseObject(finishedText) ?? (finishedText ? undefined : {});
        if (started && finished) info = { ...started, ...finished };
      }
    }
    if (!info) {
      if (typeof m.text === "string" && m.text) unreadable++;
      return;
    }
    const row = {
      tokensIn: finiteNumber(info.tokensIn),
      tokensOut: finiteNumber(info.tokensOut),
      cacheWrites: finiteNumber(info.cacheWrites),
      cacheReads: finiteNumber(info.cacheReads),
      cost: finiteNumber(info.cost),
    };
    usage.tokensIn += row.tokensIn;
    usage.tokensOut += row.tokensOut;
    usage.cacheWrites += row.cacheWrites;
    usage.cacheReads += row.cacheReads;
    usage.cost += row.cost;
    const time = typeof m.ts === "number" ? m.ts : 0;
    if (say === "api_req_started") {
      const extra: Record<string, unknown> = { source: "cline", request: index };
      if (typeof info.cancelReason === "string") extra.cancelReason = info.cancelReason;
      if (typeof info.streamingFailedMessage === "string") extra.streamingFailedMessage = info.streamingFailedMessage;
      requests.push({ key: requestKey(taskId, index), metrics: { time, ...row, data: JSON.stringify(extra) } });
    } else {
      const n = say === "deleted_api_reqs" ? deletedEntries++ : subagentEntries++;
      requests.push({
        key: `${requestKey(taskId, i)}:${say}`,
        metrics: { time, ...row, data: JSON.stringify({ source: "cline", kind: say, entry: n }) },
      });
    }
  });
  return { usage, requests, unreadable, deletedEntries, subagentEntries };
}
