import * as path from "node:path";
import { clineMessagesToUi } from "../tasks/legacy-parsers.js";
import { TaskFileDamaged } from "../tasks/task-db.js";
import { emptyUsage, MalformedClineFile, type ClineItem, type ImportedRequest, type ParsedClineItem } from "./import-types.js";
import { finiteNumber, isObject, readJsonFile } from "./read-only-files.js";
import { importedTaskId, legacySourceKey, requestKey } from "./source-keys.js";

/** Cline's message kinds (ask/say) that Dline renders; anything else is reported as unknown. */
const KNOWN_KINDS = new Set([
  "task", "text", "reasoning", "error", "user_feedback", "user_feedback_diff", "completion_result", "followup",
  "plan_mode_respond", "act_mode_respond", "command", "command_output", "tool", "api_req_started", "api_req_finished",
  "api_req_retried", "api_req_failed", "checkpoint_created", "deleted_api_reqs", "shell_integration_warning",
  "resume_task", "resume_completed_task", "mistake_limit_reached", "auto_approval_max_req_reached", "info", "diff_error",
]);

/** Cline tool names (the `tool` of a "tool" message) that have a Dline tool. */
const TOOLS_WITH_DLINE_EQUIVALENT = new Set([
  "readFile", "listFilesTopLevel", "listFilesRecursive", "searchFiles", "newFileCreated", "editedExistingFile",
]);
/** Message kinds that are tool calls Dline has no tool for. */
const KINDS_WITHOUT_DLINE_TOOL = new Set([
  "browser_action", "browser_action_launch", "browser_action_result", "use_mcp_server", "mcp_server_response",
  "mcp_server_request_started", "mcp_notification", "new_task", "condense", "summarize_task", "report_bug", "load_mcp_documentation",
]);

const NO_WORKSPACE_NOTE = "legacy Cline tasks record no reliable working directory; imported without a workspace";

function counted(counts: Map<string, number>): string {
  return [...counts].map(([k, n]) => (n > 1 ? `${k} (${n})` : k)).join(", ");
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function modelOf(message: Record<string, unknown>): string | undefined {
  const info = message.modelInfo;
  if (isObject(info) && typeof info.modelId === "string" && info.modelId) return info.modelId;
  if (typeof message.model === "string" && message.model) return message.model;
  return undefined;
}

/**
 * Parses one legacy task folder (`tasks/<taskId>/`) read-only: ui_messages.json (required),
 * api_conversation_history.json and task_metadata.json (read when present). Throws
 * MalformedClineFile for a file that cannot be used; a usage entry that cannot be read is only
 * reported.
 */
export function parseLegacyTask(dir: string, taskId: string, root: string): ParsedClineItem {
  const rel = (name: string) => path.join(path.basename(dir), name);
  const uiFile = path.join(dir, "ui_messages.json");
  const raw = readJsonFile(uiFile, rel("ui_messages.json"));
  if (raw === undefined) throw new MalformedClineFile(rel("ui_messages.json"), "is missing");
  if (!Array.isArray(raw)) throw new MalformedClineFile(rel("ui_messages.json"), "does not hold a JSON array");
  let messages;
  try {
    messages = clineMessagesToUi(rel("ui_messages.json"), raw);
  } catch (err) {
    if (err instanceof TaskFileDamaged) throw new MalformedClineFile(rel("ui_messages.json"), err.reason);
    throw err;
  }

  const notCarried: string[] = [];
  const usage = emptyUsage();
  const requests: ImportedRequest[] = [];
  const unknownKinds = new Map<string, number>();
  const foreignTools = new Map<string, number>();
  let images = 0;
  let checkpoints = 0;
  let unreadableUsage = 0;
  let title = "";
  let taskText = "";
  let requestIndex = 0;
  raw.forEach((entry) => {
    const m = entry as Record<string, unknown>;
    const sub = String((m.type === "ask" ? m.ask : m.say) ?? "");
    const text = typeof m.text === "string" ? m.text : "";
    if (!taskText && sub === "task") taskText = text;
    if (Array.isArray(m.images)) images += m.images.length;
    if (sub === "checkpoint_created" || typeof m.lastCheckpointHash === "string") checkpoints++;
    if (KINDS_WITHOUT_DLINE_TOOL.has(sub)) bump(foreignTools, sub);
    else if (sub && !KNOWN_KINDS.has(sub)) bump(unknownKinds, sub);
    if (sub === "tool") {
      let tool = "";
      try {
        const parsed = JSON.parse(text) as unknown;
        tool = isObject(parsed) && typeof parsed.tool === "string" ? parsed.tool : "";
      } catch {
        tool = "";
      }
      if (tool && !TOOLS_WITH_DLINE_EQUIVALENT.has(tool)) bump(foreignTools, tool);
    }
    if (m.type === "say" && sub === "api_req_started") {
      const index = requestIndex++;
      let info: unknown;
      try {
        info = JSON.parse(text);
      } catch {
        unreadableUsage++;
        return;
      }
      if (!isObject(info)) {
        unreadableUsage++;
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
      const extra: Record<string, unknown> = { source: "cline", request: index };
      if (typeof info.cancelReason === "string") extra.cancelReason = info.cancelReason;
      if (typeof info.streamingFailedMessage === "string") extra.streamingFailedMessage = info.streamingFailedMessage;
      requests.push({ key: requestKey(taskId, index), metrics: { time: m.ts as number, ...row, data: JSON.stringify(extra) } });
    }
  });
  title = (taskText || messages.find((m) => m.text)?.text || `Cline task ${taskId}`).trim().split("\n")[0].slice(0, 200);

  // The conversation as sent to the model: carried into journal.db so the task can be continued.
  const models = new Set<string>();
  const conversation: string[] = [];
  let conversationImages = 0;
  const history = readJsonFile(path.join(dir, "api_conversation_history.json"), rel("api_conversation_history.json"));
  if (history !== undefined) {
    if (!Array.isArray(history)) throw new MalformedClineFile(rel("api_conversation_history.json"), "does not hold a JSON array");
    history.forEach((entry, i) => {
      if (!isObject(entry) || (entry.role !== "user" && entry.role !== "assistant")) {
        throw new MalformedClineFile(rel("api_conversation_history.json"), `message ${i + 1} has no user/assistant role`);
      }
      if (typeof entry.content !== "string" && !Array.isArray(entry.content)) {
        throw new MalformedClineFile(rel("api_conversation_history.json"), `message ${i + 1} has content that is neither text nor blocks`);
      }
      if (Array.isArray(entry.content)) conversationImages += entry.content.filter((b) => isObject(b) && b.type === "image").length;
      const model = entry.role === "assistant" ? modelOf(entry) : undefined;
      if (model) models.add(model);
      conversation.push(JSON.stringify({ role: entry.role, content: entry.content }));
    });
  } else {
    notCarried.push("no api_conversation_history.json: the task can be read but the model will not see its earlier conversation");
  }

  // task_metadata.json is part of the layout but never required.
  const metadata: Record<string, unknown> = {};
  try {
    const clineMeta = readJsonFile(path.join(dir, "task_metadata.json"), rel("task_metadata.json"));
    if (isObject(clineMeta)) {
      metadata.clineTaskMetadata = clineMeta;
      for (const u of Array.isArray(clineMeta.model_usage) ? clineMeta.model_usage : []) {
        if (isObject(u) && typeof u.model_id === "string" && u.model_id) models.add(u.model_id);
      }
    } else if (clineMeta !== undefined) notCarried.push("task_metadata.json does not hold a JSON object");
  } catch (err) {
    notCarried.push(`task_metadata.json: ${(err as Error).message}`);
  }

  if (images > 0) notCarried.push(`${images} image(s) attached to messages`);
  if (conversationImages > 0) notCarried.push(`${conversationImages} image(s) in the conversation (the model sees a placeholder)`);
  if (foreignTools.size > 0) notCarried.push(`tool calls without a Dline equivalent (shown, cannot be repeated): ${counted(foreignTools)}`);
  if (checkpoints > 0) notCarried.push(`${checkpoints} Cline checkpoint(s) (Dline cannot restore them)`);
  if (unknownKinds.size > 0) notCarried.push(`unknown message kinds (kept as text): ${counted(unknownKinds)}`);
  if (unreadableUsage > 0) notCarried.push(`${unreadableUsage} request(s) whose usage could not be read`);
  notCarried.push(`workspace: ${NO_WORKSPACE_NOTE}`);

  const last = raw[raw.length - 1] as Record<string, unknown> | undefined;
  const lastKind = last ? String((last.type === "ask" ? last.ask : last.say) ?? "") : "";
  const item: ClineItem = {
    sourceKey: legacySourceKey(taskId),
    kind: "legacy_task",
    root,
    path: dir,
    taskId: importedTaskId("legacy_task", taskId),
    title,
    startedAt: messages[0]?.time ?? 0,
    updatedAt: messages[messages.length - 1]?.time ?? 0,
    workspaceRoot: "",
    workspaceNote: NO_WORKSPACE_NOTE,
    models: [...models],
    messageCount: messages.length,
    usage,
  };
  return {
    item,
    taskText,
    status: lastKind === "completion_result" ? "completed" : "interrupted",
    messages,
    conversation,
    requests,
    notCarriedOver: notCarried,
    metadata,
  };
}
