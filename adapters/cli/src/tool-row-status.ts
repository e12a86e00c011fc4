import { visibleLine } from "../../../core/src/text/visible-text.js";

/**
 * How a tool row of `dline show` ends when its call did not simply run: " (denied)",
 * " (interrupted: why)", " (waiting for approval)"; "" for a call that ran, or a row whose
 * detail says nothing of it (rows of earlier versions).
 */
export function toolRowStatus(detail: string): string {
  let record: { status?: unknown; reason?: unknown };
  try {
    record = JSON.parse(detail) as typeof record;
  } catch {
    return "";
  }
  const status = typeof record?.status === "string" ? record.status : "";
  if (!status || status === "done") return "";
  const word = status === "pending" ? "waiting for approval" : status;
  const reason = typeof record.reason === "string" ? record.reason.split("\n")[0]!.trim() : "";
  return ` (${word}${reason ? `: ${visibleLine(reason)}` : ""})`;
}
