import type { StoredUiMessage } from "../tasks/index.js";
import type { ClineRoots } from "./cline-roots.js";
import {
  emptyUsage,
  MalformedClineFile,
  type ClineItem,
  type ImportedRequest,
  type ParsedClineItem,
} from "./import-types.js";
import { finiteNumber, isObject, readJsonFile } from "./read-only-files.js";
import {
  favoriteOf,
  field,
  messagesFileTime,
  metadataOf,
  MESSAGES_SUFFIX,
  readManifest,
  sessionMessagesFile,
  sessionStart,
  str,
  timeOf,
  workspaceOf,
} from "./session-manifest.js";
import { isLegacyResumeWarning, visibleUserText } from "./session-text.js";
import { importedTaskId, sessionRequestKey, sessionSourceKey } from "./source-keys.js";

/** Tool names Dline has (the rest are shown but reported as having no Dline equivalent). */
const DLINE_TOOLS = new Set([
  "read_file",
  "list_files",
  "search_files",
  "write_to_file",
  "replace_in_file",
  "execute_command",
  "ask_followup_question",
  "attempt_completion",
]);
const HIDDEN_DISPLAY_ROLES = new Set(["system", "status", "error"]);
const THINKING_BLOCKS = new Set(["thinking", "redacted_thinking"]);

/** A parsed session, and where its own turns start when it continues a legacy task. */
export interface ParsedSession extends ParsedClineItem {
  /**
   * Set when the session begins with a legacy task's conversation, which Cline 4 ends with its
   * "legacy conversation" notice: how many of the UI messages and requests come before it.
   */
  legacyPart?: { messages: number; requests: number };
}

function flagged(m: Record<string, unknown>, ...names: string[]): boolean {
  const meta = isObject(m.metadata) ? m.metadata : undefined;
  return names.some((n) => m[n] === true || meta?.[n] === true);
}

function displayRoleOf(m: Record<string, unknown>): string {
  const meta = isObject(m.metadata) ? m.metadata : undefined;
  return str(m.displayRole ?? meta?.displayRole);
}

function modelOf(m: Record<string, unknown>): string {
  const info = isObject(m.modelInfo) ? m.modelInfo : undefined;
  const meta = isObject(m.metadata) ? m.metadata : undefined;
  // Cline 4 writes modelInfo.id; the other places are older or other writers' spellings.
  return (
    str(info?.id) || str(info?.modelId) || str(m.model) || str(m.modelId) || str(meta?.model) || str(meta?.modelId)
  );
}

function usageOf(m: Record<string, unknown>) {
  const meta = isObject(m.metadata) ? m.metadata : undefined;
  const u = [m.metrics, m.usage, meta?.usage].find(isObject);
  if (!u) return undefined;
  const n = (...keys: string[]) => finiteNumber(field(u, ...keys));
  return {
    tokensIn: n("inputTokens", "input_tokens", "tokensIn"),
    tokensOut: n("outputTokens", "output_tokens", "tokensOut"),
    cacheReads: n("cacheReadTokens", "cache_read_input_tokens", "cacheReads"),
    cacheWrites: n("cacheWriteTokens", "cache_creation_input_tokens", "cacheWrites"),
    cost: n("cost", "totalCost", "total_cost"),
  };
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function counted(counts: Map<string, number>): string {
  return [...counts].map(([k, n]) => (n > 1 ? `${k} (${n})` : k)).join(", ");
}

function uiText(id: string, time: number, role: "user" | "assistant", kind: string, text: string): StoredUiMessage {
  return { id, time, role, kind, text, partial: false, tool: "", detail: "", checkpointId: "", askId: "" };
}

/**
 * Parses one session folder (`sessions/<id>/`) read-only. Throws MalformedClineFile when the
 * messages file cannot be used; a missing or unreadable manifest only means "no workspace".
 */
export function parseSession(dir: string, sessionId: string, roots: ClineRoots): ParsedSession {
  const { manifest, problem } = readManifest(dir, sessionId);
  const meta = metadataOf(manifest);
  const { workspaceRoot, workspaceNote } = workspaceOf(manifest, problem, roots);
  const messagesName = `${sessionId}${MESSAGES_SUFFIX}`;
  const doc = readJsonFile(sessionMessagesFile(dir, sessionId), messagesName);
  if (doc === undefined) throw new MalformedClineFile(messagesName, "is missing");
  if (!isObject(doc) || !Array.isArray(doc.messages))
    throw new MalformedClineFile(messagesName, 'does not hold {"version", "messages": [...]}');
  if (doc.version !== undefined && doc.version !== 1)
    throw new MalformedClineFile(
      messagesName,
      `has version ${JSON.stringify(doc.version)?.slice(0, 20)} (only 1 is known)`,
    );
  const fileTime = messagesFileTime(dir, sessionId);
  const startedAt = sessionStart(manifest, sessionId) || fileTime;

  const ui: StoredUiMessage[] = [];
  const conversation: string[] = [];
  const requests: ImportedRequest[] = [];
  const usage = emptyUsage();
  const models = new Set<string>(str(manifest?.model) ? [str(manifest?.model)] : []);
  const foreignTools = new Map<string, number>();
  const otherRoles = new Map<string, number>();
  let images = 0;
  let thinking = 0;
  let taskText = "";
  let lastTime = startedAt;
  let legacyPart: ParsedSession["legacyPart"];
  doc.messages.forEach((raw, i) => {
    if (!isObject(raw)) throw new MalformedClineFile(messagesName, `message ${i + 1} is not an object`);
    const m = raw;
    const content = m.content;
    if (typeof content !== "string" && !Array.isArray(content)) {
      throw new MalformedClineFile(messagesName, `message ${i + 1} has content that is neither text nor blocks`);
    }
    if (m.role !== "user" && m.role !== "assistant") {
      bump(otherRoles, String(m.role).slice(0, 20));
      return;
    }
    const time = timeOf(field(m, "ts", "timestamp", "createdAt", "created_at")) || lastTime;
    lastTime = time;
    const displayOnly = flagged(m, "displayOnly", "display_only", "isDisplayOnly");
    // What the model saw stays in the journal (so the task continues where it was); display-only
    // errors were never sent to the model.
    if (!displayOnly) conversation.push(JSON.stringify({ role: m.role, content }));
    const blocks = (typeof content === "string" ? [{ type: "text", text: content }] : content).filter(isObject);
    const text = blocks
      .filter((b) => b.type === "text" && typeof b.text === "string")
      .map((b) => b.text as string)
      .join("\n");
    if (m.role === "user" && !legacyPart && isLegacyResumeWarning(text))
      legacyPart = { messages: ui.length, requests: requests.length };
    if (m.role === "assistant") {
      const model = modelOf(m);
      if (model) models.add(model);
      const u = usageOf(m);
      if (u) {
        const index = requests.length;
        usage.tokensIn += u.tokensIn;
        usage.tokensOut += u.tokensOut;
        usage.cacheReads += u.cacheReads;
        usage.cacheWrites += u.cacheWrites;
        usage.cost += u.cost;
        requests.push({
          key: sessionRequestKey(sessionId, index),
          metrics: { time, ...u, data: JSON.stringify({ source: "cline-session", request: index, model }) },
        });
      }
    }
    if (displayOnly || HIDDEN_DISPLAY_ROLES.has(displayRoleOf(m))) return;
    images += blocks.filter((b) => b.type === "image").length;
    if (m.role === "user") {
      const visible = visibleUserText(text);
      if (!visible) return;
      if (!taskText) taskText = visible;
      ui.push(uiText(`cline4-${i}`, time, "user", "text", visible));
      return;
    }
    blocks.forEach((b, j) => {
      if (THINKING_BLOCKS.has(str(b.type))) {
        thinking++;
        const reasoning = str(b.thinking).trim();
        if (reasoning) ui.push(uiText(`cline4-${i}-thinking-${j}`, time, "assistant", "reasoning", reasoning));
      }
    });
    if (text.trim()) ui.push(uiText(`cline4-${i}`, time, "assistant", "text", text.trim()));
    blocks.forEach((b, j) => {
      if (b.type !== "tool_use") return;
      const name = str(b.name);
      if (!DLINE_TOOLS.has(name)) bump(foreignTools, name || "unnamed");
      const detail = JSON.stringify(b.input ?? {});
      ui.push({
        id: `cline4-${i}-tool-${j}`,
        time,
        role: "tool",
        kind: "tool",
        text: name,
        partial: false,
        tool: name,
        detail,
        checkpointId: "",
        askId: "",
      });
    });
  });

  const notCarriedOver: string[] = [];
  if (images > 0) notCarriedOver.push(`${images} image(s) (the model sees a placeholder)`);
  if (thinking > 0)
    notCarriedOver.push(
      `${thinking} thinking block(s): shown as reasoning; the model is sent a placeholder, not the thinking`,
    );
  if (foreignTools.size > 0)
    notCarriedOver.push(`tool calls without a Dline equivalent (shown, cannot be repeated): ${counted(foreignTools)}`);
  if (otherRoles.size > 0) notCarriedOver.push(`messages of unknown kinds: ${counted(otherRoles)}`);
  const checkpoints = field(meta, "checkpoints");
  if (Array.isArray(checkpoints) && checkpoints.length > 0)
    notCarriedOver.push(`${checkpoints.length} Cline checkpoint(s) (Dline cannot restore them)`);
  if (workspaceNote) notCarriedOver.push(`workspace: ${workspaceNote}`);

  const title = (str(meta?.title) || taskText || `Cline session ${sessionId}`).trim().split("\n")[0]!.slice(0, 200);
  const updatedAt = Math.max(lastTime, timeOf(doc.updated_at), fileTime);
  const item: ClineItem = {
    sourceKey: sessionSourceKey(sessionId),
    kind: "session",
    root: roots.sessionsDir,
    path: dir,
    taskId: importedTaskId("session", sessionId),
    title,
    startedAt,
    updatedAt,
    workspaceRoot,
    workspaceNote,
    models: [...models],
    messageCount: ui.length,
    usage,
  };
  const metadata: Record<string, unknown> = {};
  if (manifest) {
    metadata.clineSession = {
      source: str(manifest.source),
      status: str(manifest.status),
      cwd: str(manifest.cwd),
      workspaceRoot: str(field(manifest, "workspace_root", "workspaceRoot")),
      agent: str(doc.agent),
    };
  }
  return {
    item,
    taskText,
    status: str(manifest?.status) === "completed" ? "completed" : "interrupted",
    favorite: favoriteOf(manifest),
    messages: ui,
    conversation,
    requests,
    notCarriedOver,
    metadata,
    legacyPart,
  };
}
