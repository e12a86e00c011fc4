import * as path from "node:path";
import type { StoredUiMessage } from "../tasks/message-store.js";
import type { ClineRoots } from "./cline-roots.js";
import { emptyUsage, MalformedClineFile, type ClineItem, type ImportedRequest, type ParsedClineItem } from "./import-types.js";
import { finiteNumber, isObject, listDir, readJsonFile, statOrUndefined } from "./read-only-files.js";
import { visibleUserText } from "./session-text.js";
import { importedTaskId, requestKey, sessionSourceKey } from "./source-keys.js";

/** Tool names Dline has (the rest are shown but reported as having no Dline equivalent). */
const DLINE_TOOLS = new Set([
  "read_file", "list_files", "search_files", "write_to_file", "replace_in_file", "execute_command", "ask_followup_question", "attempt_completion",
]);
const HIDDEN_DISPLAY_ROLES = new Set(["system", "status", "error"]);

const MESSAGES_SUFFIX = ".messages.json";

/** The manifest beside the messages file, or why there is none (never follows messages_path). */
function readManifest(dir: string, sessionId: string): { manifest?: Record<string, unknown>; problem?: string } {
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

function field(o: Record<string, unknown> | undefined, ...names: string[]): unknown {
  if (!o) return undefined;
  for (const n of names) if (o[n] !== undefined && o[n] !== null) return o[n];
  return undefined;
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** A session another tool imported into Cline: that tool owns the conversation. */
export function importedElsewhere(manifest: Record<string, unknown> | undefined): string | undefined {
  const meta = isObject(manifest?.metadata) ? manifest.metadata : undefined;
  const from = field(meta, "importedFrom", "imported_from");
  if (from) return `imported into Cline from ${typeof from === "string" ? from : isObject(from) ? str(from.source ?? from.tool ?? from.name) || "another tool" : "another tool"}`;
  const origin = field(meta, "historyOrigin", "history_origin");
  if (isObject(origin) && origin.mode === "import") return `imported into Cline${str(origin.source) ? ` from ${str(origin.source)}` : ""}`;
  return undefined;
}

function timeOf(v: unknown): number {
  if (typeof v === "number" && Number.isFinite(v)) return v < 1e11 ? Math.round(v * 1000) : v;
  if (typeof v === "string") {
    const t = Date.parse(v);
    if (Number.isFinite(t)) return t;
  }
  return 0;
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

function workspaceOf(manifest: Record<string, unknown> | undefined, problem: string | undefined, roots: ClineRoots) {
  if (!manifest) return { workspaceRoot: "", workspaceNote: problem ?? "no manifest: no workspace" };
  const recorded = field(manifest, "workspace_root", "workspaceRoot");
  const ws = (Array.isArray(recorded) ? str(recorded[0]) : str(recorded)) || str(field(manifest, "cwd"));
  if (!ws) return { workspaceRoot: "", workspaceNote: "the manifest records no working directory" };
  if (isInside(ws, roots.chatWorkspaceDir)) return { workspaceRoot: "", workspaceNote: "ran in Cline's chat workspace: no project" };
  return { workspaceRoot: ws, workspaceNote: "" };
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
  return str(m.model) || str(m.modelId) || str(info?.modelId) || str(meta?.model) || str(meta?.modelId);
}

function usageOf(m: Record<string, unknown>) {
  const meta = isObject(m.metadata) ? m.metadata : undefined;
  const u = [m.usage, m.metrics, meta?.usage].find(isObject);
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

/** The lead agent's messages file of a session folder. */
export function sessionMessagesFile(dir: string, sessionId: string): string {
  return path.join(dir, `${sessionId}${MESSAGES_SUFFIX}`);
}

/** Subagent (`<agentId>.messages.json`) and teammate (`<agentId>__<teamTaskId>.messages.json`) files: never imported. */
export function subagentItems(dir: string, sessionId: string, root: string): ClineItem[] {
  return listDir(dir)
    .filter((e) => e.isFile() && e.name.endsWith(MESSAGES_SUFFIX) && e.name !== `${sessionId}${MESSAGES_SUFFIX}`)
    .map((e) => {
      const agent = e.name.slice(0, -MESSAGES_SUFFIX.length);
      const teammate = agent.includes("__");
      const stat = statOrUndefined(path.join(dir, e.name));
      return {
        sourceKey: `${sessionSourceKey(sessionId)}/${agent}`,
        kind: "session" as const,
        root,
        path: path.join(dir, e.name),
        taskId: "",
        title: `${teammate ? "teammate" : "subagent"} ${agent} of session ${sessionId}`,
        startedAt: stat?.birthtimeMs ? Math.round(stat.birthtimeMs) : 0,
        updatedAt: stat ? Math.round(stat.mtimeMs) : 0,
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
 * Parses one session folder (`sessions/<id>/`) read-only. Throws MalformedClineFile when the
 * messages file cannot be used; a missing or unreadable manifest only means "no workspace".
 */
export function parseSession(dir: string, sessionId: string, roots: ClineRoots): ParsedClineItem {
  const { manifest, problem } = readManifest(dir, sessionId);
  const meta = isObject(manifest?.metadata) ? manifest.metadata : undefined;
  const { workspaceRoot, workspaceNote } = workspaceOf(manifest, problem, roots);
  const messagesName = `${sessionId}${MESSAGES_SUFFIX}`;
  const messagesFile = sessionMessagesFile(dir, sessionId);
  const doc = readJsonFile(messagesFile, messagesName);
  if (doc === undefined) throw new MalformedClineFile(messagesName, "is missing");
  if (!isObject(doc) || !Array.isArray(doc.messages)) throw new MalformedClineFile(messagesName, 'does not hold {"version", "messages": [...]}');
  if (doc.version !== undefined && doc.version !== 1) throw new MalformedClineFile(messagesName, `has version ${JSON.stringify(doc.version)?.slice(0, 20)} (only 1 is known)`);
  const stat = statOrUndefined(messagesFile);
  const idTime = /^(\d{13})_/.exec(sessionId)?.[1];
  const startedAt = timeOf(field(manifest, "started_at", "startedAt")) || (idTime ? Number(idTime) : 0) || Math.round(stat?.mtimeMs ?? 0);

  const ui: StoredUiMessage[] = [];
  const conversation: string[] = [];
  const requests: ImportedRequest[] = [];
  const usage = emptyUsage();
  const models = new Set<string>();
  const foreignTools = new Map<string, number>();
  const otherRoles = new Map<string, number>();
  let images = 0;
  let taskText = "";
  let requestIndex = 0;
  let lastTime = startedAt;
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
    if (m.role === "assistant") {
      const model = modelOf(m);
      if (model) models.add(model);
      const u = usageOf(m);
      if (u) {
        const index = requestIndex++;
        usage.tokensIn += u.tokensIn;
        usage.tokensOut += u.tokensOut;
        usage.cacheReads += u.cacheReads;
        usage.cacheWrites += u.cacheWrites;
        usage.cost += u.cost;
        requests.push({ key: requestKey(sessionId, index), metrics: { time, ...u, data: JSON.stringify({ source: "cline-session", request: index, model }) } });
      }
    }
    if (displayOnly || HIDDEN_DISPLAY_ROLES.has(displayRoleOf(m))) return;
    const blocks = (typeof content === "string" ? [{ type: "text", text: content }] : content).filter(isObject);
    const text = blocks
      .filter((b) => b.type === "text" && typeof b.text === "string")
      .map((b) => b.text as string)
      .join("\n");
    images += blocks.filter((b) => b.type === "image").length;
    if (m.role === "user") {
      const visible = visibleUserText(text);
      if (!visible) return;
      if (!taskText) taskText = visible;
      ui.push({ id: `cline4-${i}`, time, role: "user", kind: "text", text: visible, partial: false, tool: "", detail: "", checkpointId: "", askId: "" });
      return;
    }
    if (text.trim()) {
      ui.push({ id: `cline4-${i}`, time, role: "assistant", kind: "text", text: text.trim(), partial: false, tool: "", detail: "", checkpointId: "", askId: "" });
    }
    blocks.forEach((b, j) => {
      if (b.type !== "tool_use") return;
      const name = str(b.name);
      if (!DLINE_TOOLS.has(name)) bump(foreignTools, name || "unnamed");
      const detail = JSON.stringify(b.input ?? {});
      ui.push({ id: `cline4-${i}-tool-${j}`, time, role: "tool", kind: "tool", text: name, partial: false, tool: name, detail, checkpointId: "", askId: "" });
    });
  });

  const notCarriedOver: string[] = [];
  if (images > 0) notCarriedOver.push(`${images} image(s) (the model sees a placeholder)`);
  if (foreignTools.size > 0) notCarriedOver.push(`tool calls without a Dline equivalent (shown, cannot be repeated): ${counted(foreignTools)}`);
  if (otherRoles.size > 0) notCarriedOver.push(`messages of unknown kinds: ${counted(otherRoles)}`);
  const checkpoints = field(meta, "checkpoints");
  if (Array.isArray(checkpoints) && checkpoints.length > 0) notCarriedOver.push(`${checkpoints.length} Cline checkpoint(s) (Dline cannot restore them)`);
  if (workspaceNote) notCarriedOver.push(`workspace: ${workspaceNote}`);

  const title = (str(meta?.title) || taskText || `Cline session ${sessionId}`).trim().split("\n")[0].slice(0, 200);
  const item: ClineItem = {
    sourceKey: sessionSourceKey(sessionId),
    kind: "session",
    root: roots.sessionsDir,
    path: dir,
    taskId: importedTaskId("session", sessionId),
    title,
    startedAt,
    updatedAt: Math.max(lastTime, Math.round(stat?.mtimeMs ?? 0)),
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
    messages: ui,
    conversation,
    requests,
    notCarriedOver,
    metadata,
  };
}

/** A session listed without parsing its messages (imported elsewhere, or its messages are missing). */
export function sessionStub(dir: string, sessionId: string, roots: ClineRoots): { item: ClineItem; manifest?: Record<string, unknown> } {
  const { manifest, problem } = readManifest(dir, sessionId);
  const meta = isObject(manifest?.metadata) ? manifest.metadata : undefined;
  const ws = workspaceOf(manifest, problem, roots);
  const idTime = /^(\d{13})_/.exec(sessionId)?.[1];
  const startedAt = timeOf(field(manifest, "started_at", "startedAt")) || (idTime ? Number(idTime) : 0);
  return {
    manifest,
    item: {
      sourceKey: sessionSourceKey(sessionId),
      kind: "session",
      root: roots.sessionsDir,
      path: dir,
      taskId: importedTaskId("session", sessionId),
      title: (str(meta?.title) || `Cline session ${sessionId}`).split("\n")[0].slice(0, 200),
      startedAt,
      updatedAt: startedAt,
      ...ws,
      models: [],
      messageCount: 0,
      usage: emptyUsage(),
    },
  };
}
