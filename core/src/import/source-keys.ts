import { createHash } from "node:crypto";

/** Source keys and the Dline task ids they import as; both are stable across runs and sidecars. */

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/;

export function legacySourceKey(taskId: string): string {
  return `legacy:${taskId}`;
}

export function sessionSourceKey(sessionId: string): string {
  return `session:${sessionId}`;
}

/** The history row's `source` for an imported item. */
export function importSource(sourceKey: string): string {
  return `cline-import:${sourceKey}`;
}

/**
 * The Dline task id of an item: derived from the source key, so two sidecars importing the same
 * item at once aim at the same task (and the one that comes second finds it imported).
 */
export function importedTaskId(kind: "legacy_task" | "session", sourceId: string): string {
  const prefix = kind === "legacy_task" ? "cline-" : "cline-session-";
  if (SAFE_ID.test(sourceId) && !sourceId.includes("..")) return prefix + sourceId;
  return prefix + "h" + createHash("sha256").update(sourceId).digest("hex").slice(0, 32);
}

/** Per-request usage key of a legacy task: a re-import never counts a request twice. */
export function requestKey(sourceId: string, index: number): string {
  return `cline:${sourceId}:${index}`;
}

/**
 * Per-request usage key of a Cline 4 session. Distinct from the legacy keys: Cline 4 resumes a
 * legacy task as a session with the same id, and the two are imported as one task whose
 * metrics.db holds the requests of both.
 */
export function sessionRequestKey(sessionId: string, index: number): string {
  return `cline:session:${sessionId}:${index}`;
}
