import * as path from "node:path";
import type { ClineRoots } from "./cline-roots.js";
import { emptyUsage, type ClineItem } from "./import-types.js";
import { isObject, listDir, readJsonFile, statOrUndefined } from "./read-only-files.js";
import { importedTaskId, sessionSourceKey } from "./source-keys.js";

/**
 * A Cline 4 session folder's manifest (`<id>.json`) and its other files, read without parsing
 * the lead agent's messages: the workspace, where the session came from, its flags.
 */

export const MESSAGES_SUFFIX = ".messages.json";

export type Manifest = Record<string, unknown>;

/** The manifest beside the messages file, or why there is none (never follows messages_path). */
export function readManifest(dir: string, sessionId: string): { manifest?: Manifest; problem?: string } {
  const name = `${sessionId}.json`;
  try {
    const value = readJsonFile(path.join(dir, name), name);
    if (value === undefined) return { problem: "no manifest beside the messages: no workspace" };
    if (!isObject(value)) return { problem: "the manifest is not a JSON object: no workspace" };
    return { manifest: value };
  } catch (err) {
    return { problem: `the manifest is unreadable (${(err as Error).message}): no workspace` };
  }
}

export function field(o: Record<string, unknown> | undefined, ...names: string[]): unknown {
  if (!o) return undefined;
  for (const n of names) if (o[n] !== undefined && o[n] !== null) return o[n];
  return undefined;
}

export function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

export function metadataOf(manifest: Manifest | undefined): Record<string, unknown> | undefined {
  return isObject(manifest?.metadata) ? manifest.metadata : undefined;
}

/** A session another tool imported into Cline: that tool owns the conversation. */
export function importedElsewhere(manifest: Manifest | undefined): string | undefined {
  const meta = metadataOf(manifest);
  const from = field(meta, "importedFrom", "imported_from");
  if (from)
    return `imported into Cline from ${typeof from === "string" ? from : isObject(from) ? str(from.source ?? from.tool ?? from.name) || "another tool" : "another tool"}`;
  // Cline writes sessionHistoryOrigin; the other spellings are kept for older records.
  for (const key of ["sessionHistoryOrigin", "historyOrigin", "history_origin"]) {
    const origin = meta?.[key];
    if (!isObject(origin) || origin.mode !== "import") continue;
    const source = str(origin.source) || str(origin.trigger);
    return `imported into Cline${source ? ` from ${source}` : ""}`;
  }
  return undefined;
}

/** Cline 4 resumed a legacy task as this session (same id): its manifest says so. */
export function continuesLegacyTask(manifest: Manifest | undefined): boolean {
  const meta = metadataOf(manifest);
  return meta?.legacyTask === true || meta?.migratedFromLegacyTask === true;
}

/** Cline's favourite flag: `isFavorited` (the VS Code extension) or `pinned` (other clients). */
export function favoriteOf(manifest: Manifest | undefined): boolean {
  const meta = metadataOf(manifest);
  return meta?.isFavorited === true || meta?.is_favorited === true || meta?.pinned === true;
}

export function timeOf(v: unknown): number {
  if (typeof v === "number" && Number.isFinite(v)) return v < 1e11 ? Math.round(v * 1000) : v;
  if (typeof v === "string") {
    const t = Date.parse(v);
    if (Number.isFinite(t)) return t;
  }
  return 0;
}

/** When a session started: the manifest's started_at, else the time in its id. */
export function sessionStart(manifest: Manifest | undefined, sessionId: string): number {
  const idTime = /^(\d{13})(?:_|$)/.exec(sessionId)?.[1];
  return timeOf(field(manifest, "started_at", "startedAt")) || (idTime ? Number(idTime) : 0);
}

function trimSeparators(p: string): string {
  return p.replace(/[\\/]+$/, "").replace(/\\/g, "/");
}

function isInside(child: string, parent: string): boolean {
  const windows = /^[A-Za-z]:/.test(parent);
  const a = windows ? trimSeparators(child).toLowerCase() : trimSeparators(child);
  const b = windows ? trimSeparators(parent).toLowerCase() : trimSeparators(parent);
  return a === b || a.startsWith(`${b}/`);
}

export function workspaceOf(manifest: Manifest | undefined, problem: string | undefined, roots: ClineRoots) {
  if (!manifest) return { workspaceRoot: "", workspaceNote: problem ?? "no manifest: no workspace" };
  const recorded = field(manifest, "workspace_root", "workspaceRoot");
  const ws = (Array.isArray(recorded) ? str(recorded[0]) : str(recorded)) || str(field(manifest, "cwd"));
  if (!ws) return { workspaceRoot: "", workspaceNote: "the manifest records no working directory" };
  if (isInside(ws, roots.chatWorkspaceDir))
    return { workspaceRoot: "", workspaceNote: "ran in Cline's chat workspace: no project" };
  return { workspaceRoot: ws, workspaceNote: "" };
}

/** The lead agent's messages file of a session folder. */
export function sessionMessagesFile(dir: string, sessionId: string): string {
  return path.join(dir, `${sessionId}${MESSAGES_SUFFIX}`);
}

/** A session listed without parsing its messages (imported elsewhere, or its messages are missing). */
export function sessionStub(
  dir: string,
  sessionId: string,
  roots: ClineRoots,
): { item: ClineItem; manifest?: Manifest } {
  const { manifest, problem } = readManifest(dir, sessionId);
  const meta = metadataOf(manifest);
  const startedAt = sessionStart(manifest, sessionId);
  return {
    manifest,
    item: {
      sourceKey: sessionSourceKey(sessionId),
      kind: "session",
      root: roots.sessionsDir,
      path: dir,
      taskId: importedTaskId("session", sessionId),
      title: (str(meta?.title) || `Cline session ${sessionId}`).split("\n")[0]!.slice(0, 200),
      startedAt,
      updatedAt: startedAt,
      ...workspaceOf(manifest, problem, roots),
      models: [],
      messageCount: 0,
      usage: emptyUsage(),
    },
  };
}

/**
 * Subagent (`<agentId>.messages.json`) and teammate (`<agentId>__<teamTaskId>.messages.json`)
 * files: never imported. Dated by the lead session until `datedSubagentItem` reads their own
 * messages (listing stays a matter of folder listings and stats).
 */
export function subagentItems(dir: string, sessionId: string, root: string, leadStartedAt: number): ClineItem[] {
  return listDir(dir)
    .filter((e) => e.isFile() && e.name.endsWith(MESSAGES_SUFFIX) && e.name !== `${sessionId}${MESSAGES_SUFFIX}`)
    .map((e) => {
      const agent = e.name.slice(0, -MESSAGES_SUFFIX.length);
      const teammate = agent.includes("__");
      return {
        sourceKey: `${sessionSourceKey(sessionId)}/${agent}`,
        kind: "session" as const,
        root,
        path: path.join(dir, e.name),
        taskId: "",
        title: `${teammate ? "teammate" : "subagent"} ${agent} of session ${sessionId}`,
        startedAt: leadStartedAt,
        updatedAt: leadStartedAt,
        workspaceRoot: "",
        workspaceNote: "",
        models: [],
        messageCount: 0,
        usage: emptyUsage(),
        skip: {
          code: "subagent_file" as const,
          reason: `${teammate ? "teammate" : "subagent"} file of session ${sessionId}: its prompts come from the lead agent, which is imported with the session`,
        },
      };
    });
}

/**
 * A subagent or teammate item dated by its own messages (the first and last message times, or
 * the document's updated_at), not by its file's times: a copied or restored folder has new
 * ones. An unreadable file keeps the lead session's dates.
 */
export function datedSubagentItem(item: ClineItem): ClineItem {
  let doc: unknown;
  try {
    doc = readJsonFile(item.path);
  } catch {
    return item;
  }
  const messages = isObject(doc) && Array.isArray(doc.messages) ? doc.messages.filter(isObject) : [];
  const times = messages
    .map((m) => timeOf(field(m, "ts", "timestamp", "createdAt", "created_at")))
    .filter((t) => t > 0);
  const updated = isObject(doc) ? timeOf(doc.updated_at) : 0;
  const startedAt = times[0] ?? item.startedAt;
  return {
    ...item,
    startedAt,
    updatedAt: Math.max(updated, times[times.length - 1] ?? 0, startedAt),
    messageCount: messages.length,
  };
}

/** The session's messages file's modification time (0 when it cannot be read). */
export function messagesFileTime(dir: string, sessionId: string): number {
  return Math.round(statOrUndefined(sessionMessagesFile(dir, sessionId))?.mtimeMs ?? 0);
}
