import * as fs from "node:fs";
import * as path from "node:path";
import { legacyMessageText } from "./legacy-message-text.js";
import { TaskFileDamaged } from "./task-db.js";
import type { StoredUiMessage } from "./message-store.js";
import type { TaskRecordInit } from "./task-record.js";

/**
 * Parsers of the Cline-shaped legacy files (docs/cline-import.md). Each returns
 * typed values or throws TaskFileDamaged with the first problem; none of them writes.
 */

function readText(file: string): string {
  return fs.readFileSync(file, "utf8");
}

/** JSON lines; a torn last line (a crash mid-append) is dropped, a bad line before it is damage. */
export function parseJsonLines(file: string): { values: unknown[]; lines: string[] } {
  const lines = readText(file).split("\n");
  const values: unknown[] = [];
  const kept: string[] = [];
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    try {
      values.push(JSON.parse(line));
      kept.push(line);
    } catch (err) {
      const isLast = !lines.slice(i + 1).some((l) => l.trim());
      if (!isLast)
        throw new TaskFileDamaged(file, `line ${i + 1} is not valid JSON (${(err as Error).message.slice(0, 80)})`);
    }
  });
  return { values, lines: kept };
}

function parseJsonFile(file: string): unknown {
  try {
    return JSON.parse(readText(file));
  } catch (err) {
    throw new TaskFileDamaged(file, `is not valid JSON (${(err as Error).message.slice(0, 80)})`);
  }
}

const USER_SAYS = new Set(["task", "user_feedback", "user_feedback_diff"]);
const TOOL_NAMES = new Set([
  "tool",
  "command",
  "command_output",
  "use_mcp_server",
  "mcp_server_response",
  "browser_action",
  "browser_action_launch",
  "browser_action_result",
]);
const SYSTEM_SAYS = new Set([
  "api_req_started",
  "api_req_finished",
  "api_req_retried",
  "checkpoint_created",
  "deleted_api_reqs",
  "subagent_usage",
  "shell_integration_warning",
  "hook_status",
]);
/** Cline marks a completion whose changes can be viewed by appending this to its text. */
const COMPLETION_CHANGES_FLAG = "HAS_CHANGES";
const KIND_OF: Record<string, string> = {
  text: "text",
  task: "text",
  user_feedback: "text",
  reasoning: "reasoning",
  tool: "tool",
  command: "command",
  command_output: "command",
  completion_result: "completion",
  followup: "followup",
  error: "error",
  checkpoint_created: "checkpoint",
};

/** Maps Cline's `{ts, type, ask?, say?, text?, partial?}` messages to UI messages with stable ids. */
export function clineMessagesToUi(file: string, raw: unknown[]): StoredUiMessage[] {
  return raw.map((entry, i) => {
    const m = entry as Record<string, unknown>;
    if (typeof m !== "object" || m === null || Array.isArray(m))
      throw new TaskFileDamaged(file, `entry ${i + 1} is not an object`);
    if (typeof m.ts !== "number" || !Number.isFinite(m.ts))
      throw new TaskFileDamaged(file, `entry ${i + 1} has no numeric ts`);
    if (m.type !== "ask" && m.type !== "say")
      throw new TaskFileDamaged(file, `entry ${i + 1} has type ${JSON.stringify(m.type)?.slice(0, 20)}`);
    const sub = String((m.type === "ask" ? m.ask : m.say) ?? "");
    if (m.text !== undefined && m.text !== null && typeof m.text !== "string")
      throw new TaskFileDamaged(file, `entry ${i + 1} has a non-text text`);
    const raw = typeof m.text === "string" ? m.text : "";
    const shown =
      sub === "completion_result" && raw.endsWith(COMPLETION_CHANGES_FLAG)
        ? raw.slice(0, -COMPLETION_CHANGES_FLAG.length)
        : raw;
    const text = legacyMessageText(sub, shown);
    const role: StoredUiMessage["role"] =
      m.type === "say" && USER_SAYS.has(sub)
        ? "user"
        : TOOL_NAMES.has(sub)
          ? "tool"
          : SYSTEM_SAYS.has(sub)
            ? "system"
            : "assistant";
    let tool = "";
    if (sub === "tool") {
      try {
        tool = String((JSON.parse(raw) as { tool?: unknown }).tool ?? "");
      } catch {
        tool = "";
      }
    }
    return {
      id: `legacy-${i}`,
      time: m.ts,
      role,
      kind: KIND_OF[sub] ?? (sub || "text"),
      text,
      partial: m.partial === true,
      tool,
      // What Cline stored, where the text shown is a reading of it.
      detail: sub === "tool" || SYSTEM_SAYS.has(sub) || text !== shown ? raw : "",
      checkpointId: "",
      askId: m.type === "ask" ? `legacy-ask-${i}` : "",
    };
  });
}

/** ui_messages.jsonl, ui_messages.json or claude_messages.json, whichever form the file has. */
export function parseLegacyUiMessages(file: string): StoredUiMessage[] {
  if (file.endsWith(".jsonl")) return clineMessagesToUi(file, parseJsonLines(file).values);
  const value = parseJsonFile(file);
  if (!Array.isArray(value)) throw new TaskFileDamaged(file, "does not hold a JSON array");
  return clineMessagesToUi(file, value);
}

export function parseLegacyActivities(file: string): { time: number; kind: string; data: string }[] {
  const value = parseJsonFile(file);
  const list = Array.isArray(value) ? value : (value as { activities?: unknown })?.activities;
  if (!Array.isArray(list)) throw new TaskFileDamaged(file, "does not hold a JSON array of activities");
  return list.map((a, i) => {
    if (typeof a !== "object" || a === null) throw new TaskFileDamaged(file, `activity ${i + 1} is not an object`);
    const o = a as Record<string, unknown>;
    const time = typeof o.ts === "number" ? o.ts : typeof o.time === "number" ? o.time : 0;
    const kind = typeof o.kind === "string" ? o.kind : typeof o.type === "string" ? o.type : "activity";
    return { time, kind, data: JSON.stringify(o) };
  });
}

/** One api_rate_metrics.jsonl line: usage numbers where present. */
export function metricsFromLegacyLine(value: unknown) {
  const o = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  const n = (...keys: string[]) => {
    for (const k of keys) if (typeof o[k] === "number" && Number.isFinite(o[k])) return o[k];
    return 0;
  };
  return {
    time: n("ts", "time", "timestamp"),
    tokensIn: n("tokensIn", "inputTokens", "tokens_in"),
    tokensOut: n("tokensOut", "outputTokens", "tokens_out"),
    cacheReads: n("cacheReads", "cacheReadTokens", "cache_reads"),
    cacheWrites: n("cacheWrites", "cacheWriteTokens", "cache_writes"),
    cost: n("cost", "totalCost"),
    data: JSON.stringify(o),
  };
}

/**
 * Cline's HistoryItem lines. A line with wrong types becomes a damaged row (when its id can be
 * read) instead of being dropped, so the user sees the task and why it is damaged.
 */
export function parseLegacyHistory(file: string): { records: TaskRecordInit[]; unreadable: number } {
  const lines = readText(file).split("\n");
  const records: TaskRecordInit[] = [];
  let unreadable = 0;
  const idOk = (id: unknown): id is string =>
    typeof id === "string" && /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id) && !id.includes("..");
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(line) as Record<string, unknown>;
    } catch {
      const id = /"id"\s*:\s*"([A-Za-z0-9._-]+)"/.exec(line)?.[1];
      if (idOk(id))
        records.push({
          id,
          status: "damaged",
          damagedReason: `${path.basename(file)} line ${i + 1} is not valid JSON`,
          source: "dline",
        });
      else unreadable++;
      continue;
    }
    if (typeof o !== "object" || o === null || !idOk(o.id)) {
      unreadable++;
      continue;
    }
    const problems: string[] = [];
    const num = (k: string) => {
      if (o[k] === undefined || o[k] === null) return 0;
      if (typeof o[k] === "number" && Number.isFinite(o[k])) return o[k];
      problems.push(`${k} is ${typeof o[k]}`);
      return 0;
    };
    const str = (k: string) => {
      if (o[k] === undefined || o[k] === null) return "";
      if (typeof o[k] === "string") return o[k];
      problems.push(`${k} is ${typeof o[k]}`);
      return "";
    };
    const task = str("task");
    const ts = num("ts");
    const record: TaskRecordInit = {
      id: o.id,
      title: task.split("\n")[0]!.slice(0, 200),
      taskText: task,
      createdAt: ts,
      updatedAt: ts,
      tokensIn: num("tokensIn"),
      tokensOut: num("tokensOut"),
      cacheReads: num("cacheReads"),
      cacheWrites: num("cacheWrites"),
      cost: num("totalCost"),
      sizeBytes: num("size"),
      workspaceRoot: str("cwdOnTaskInitialization"),
      favorite: o.isFavorited === true,
      status: "completed",
      source: "dline",
    };
    if (problems.length) {
      record.status = "damaged";
      record.damagedReason = `${path.basename(file)} line ${i + 1}: ${problems.join(", ")}`;
    }
    records.push(record);
  }
  return { records, unreadable };
}
