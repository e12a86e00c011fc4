/**
 * A tool call as its chat row (a UiMessage of kind "tool" or "command") records it: status,
 * input, bounded output, the edits it proposed or applied, the exact command line. Stored as
 * the row's `detail` JSON; `input`, `ok` and `output` keep the names rows had before, so rows
 * written by earlier versions read the same way.
 */
import type { PreparedEdit } from "../agent/index.js";
import type { StoredUiMessage } from "../tasks/index.js";

export type ToolCallStatusName = "pending" | "running" | "done" | "failed" | "denied" | "interrupted";

export interface FileEditRecord {
  path: string;
  status: "added" | "modified" | "deleted";
  /** "" when added, or when left out (truncated). */
  originalText: string;
  /** "" when deleted, or when left out (truncated). */
  proposedText: string;
  truncated: boolean;
  /** When the texts are left out for size: the change as a unified diff (absent when it too is too large, and in rows of earlier versions). */
  diff?: string;
  /** Sizes in bytes now and after the edit, and whether the file now is binary (absent in rows of earlier versions). */
  originalBytes?: number;
  proposedBytes?: number;
  originalBinary?: boolean;
}

export interface CommandLineRecord {
  command: string;
  workingDirectory: string;
}

export interface ToolCallRecord {
  toolCallId: string;
  tool: string;
  status: ToolCallStatusName;
  /** The tool's arguments (as the model sent them; undefined when they were not an object). */
  input: unknown;
  output: string;
  outputTruncated: boolean;
  edits: FileEditRecord[];
  command: CommandLineRecord | undefined;
  feedback: string;
  reason: string;
}

/** The output a row (and a tool-finished event) keeps: the head and the tail of long output. */
export const ROW_OUTPUT_MAX_CHARS = 64 * 1024;
const HEAD_CHARS = 16 * 1024;

export function boundedOutput(text: string, max = ROW_OUTPUT_MAX_CHARS): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  const head = Math.min(HEAD_CHARS, Math.floor(max / 4));
  const tail = max - head;
  const omitted = text.length - head - tail;
  return {
    text: `${text.slice(0, head)}\n[… ${omitted} characters omitted …]\n${text.slice(text.length - tail)}`,
    truncated: true,
  };
}

export function editRecords(edit: PreparedEdit | undefined): FileEditRecord[] {
  return (edit?.changes ?? []).map((c) => ({
    path: c.path,
    status: c.status,
    originalText: c.previewTruncated ? "" : (c.before ?? ""),
    proposedText: c.previewTruncated ? (c.previewAfter ?? "") : (c.after ?? ""),
    truncated: c.previewTruncated,
    ...(c.previewTruncated && c.previewDiff ? { diff: c.previewDiff } : {}),
    originalBytes: c.beforeBytes,
    proposedBytes: c.afterBytes,
    ...(c.beforeBinary ? { originalBinary: true } : {}),
  }));
}

/** The row's `detail` for a tool call. */
export function toolCallDetail(r: ToolCallRecord): string {
  const finished = r.status !== "pending" && r.status !== "running";
  return JSON.stringify({
    input: r.input,
    ...(finished ? { ok: r.status === "done", output: r.output } : {}),
    toolCallId: r.toolCallId,
    status: r.status,
    ...(r.outputTruncated ? { outputTruncated: true } : {}),
    ...(r.edits.length ? { edits: r.edits } : {}),
    ...(r.command ? { command: r.command } : {}),
    ...(r.feedback ? { feedback: r.feedback } : {}),
    ...(r.reason ? { reason: r.reason } : {}),
  });
}

const STATUSES = new Set<string>(["pending", "running", "done", "failed", "denied", "interrupted"]);

/**
 * The tool call of a tool or command row; undefined for other rows. `stopped`: nothing runs
 * the task any more (its sidecar stopped or died), so a call still pending or running was
 * interrupted.
 */
export function toolCallOf(m: StoredUiMessage, options: { stopped?: boolean } = {}): ToolCallRecord | undefined {
  if (m.kind !== "tool" && m.kind !== "command") return undefined;
  let detail: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(m.detail) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) detail = parsed as Record<string, unknown>;
  } catch {
    // an unparseable detail: the call's input is unknown
  }
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  let status: ToolCallStatusName;
  let input: unknown;
  if (detail && STATUSES.has(str(detail.status))) {
    status = detail.status as ToolCallStatusName;
    input = detail.input;
  } else if (detail && "ok" in detail) {
    // A row of an earlier version, finished: {input, ok, output}.
    status = detail.ok === true ? "done" : "failed";
    input = detail.input;
  } else {
    // A row of an earlier version still running (its detail is the input), or cut short.
    status = m.partial ? "running" : "interrupted";
    input = detail;
  }
  if (options.stopped && (status === "pending" || status === "running")) status = "interrupted";
  const edits = Array.isArray(detail?.edits) ? (detail.edits as FileEditRecord[]) : [];
  const command = detail?.command as CommandLineRecord | undefined;
  return {
    toolCallId: str(detail?.toolCallId) || m.id,
    tool: m.tool,
    status,
    input,
    output: str(detail?.output),
    outputTruncated: detail?.outputTruncated === true,
    edits,
    command: command && typeof command.command === "string" ? command : undefined,
    feedback: str(detail?.feedback),
    reason:
      str(detail?.reason) ||
      (status === "interrupted" && !detail?.reason ? "The task stopped before this call finished." : ""),
  };
}
