import * as path from "node:path";
import { clineMessagesToUi, TaskFileDamaged } from "../tasks/index.js";
import { MalformedClineFile, type ClineItem, type ParsedClineItem } from "./import-types.js";
import { legacyConversation } from "./legacy-conversation.js";
import type { LegacyHistoryIndex } from "./legacy-task-history.js";
import { legacyUsage } from "./legacy-usage.js";
import { isObject, readJsonFile, statOrUndefined } from "./read-only-files.js";
import { importedTaskId, legacySourceKey } from "./source-keys.js";

/** Cline's message kinds (ask/say) that Dline renders; anything else is reported as unknown. */
const KNOWN_KINDS = new Set([
  "task",
  "text",
  "reasoning",
  "error",
  "error_retry",
  "user_feedback",
  "user_feedback_diff",
  "completion_result",
  "followup",
  "plan_mode_respond",
  "act_mode_respond",
  "command",
  "command_output",
  "tool",
  "api_req_started",
  "api_req_finished",
  "api_req_retried",
  "api_req_failed",
  "checkpoint_created",
  "deleted_api_reqs",
  "subagent_usage",
  "shell_integration_warning",
  "shell_integration_warning_with_suggestion",
  "resume_task",
  "resume_completed_task",
  "mistake_limit_reached",
  "auto_approval_max_req_reached",
  "info",
  "diff_error",
  "clineignore_error",
  "command_permission_denied",
  "task_progress",
  "hook_status",
  "hook_output_stream",
  "conditional_rules_applied",
]);

/** Cline tool names (the `tool` of a "tool" message) that have a Dline tool. */
const TOOLS_WITH_DLINE_EQUIVALENT = new Set([
  "readFile",
  "listFilesTopLevel",
  "listFilesRecursive",
  "searchFiles",
  "newFileCreated",
  "editedExistingFile",
]);
/** Message kinds that are tool calls Dline has no tool for. */
const KINDS_WITHOUT_DLINE_TOOL = new Set([
  "browser_action",
  "browser_action_launch",
  "browser_action_result",
  "use_mcp_server",
  "mcp_server_response",
  "mcp_server_request_started",
  "mcp_notification",
  "new_task",
  "condense",
  "summarize_task",
  "report_bug",
  "load_mcp_documentation",
  "subagent",
  "use_subagents",
  "generate_explanation",
]);

/** Where Cline keeps a legacy task's UI messages: ui_messages.json, or claude_messages.json (older versions; Cline still reads it). */
export const LEGACY_UI_FILES = ["ui_messages.json", "claude_messages.json"] as const;

/** The UI messages file a task folder has, if any. */
export function legacyUiFile(dir: string): { name: string; mtimeMs: number } | undefined {
  for (const name of LEGACY_UI_FILES) {
    const st = statOrUndefined(path.join(dir, name));
    if (st?.isFile()) return { name, mtimeMs: st.mtimeMs };
  }
  return undefined;
}

function counted(counts: Map<string, number>): string {
  return [...counts].map(([k, n]) => (n > 1 ? `${k} (${n})` : k)).join(", ");
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** The last deleted range a UI message recorded (Cline stamps each message with the range of its time). */
function lastRecordedRange(raw: Record<string, unknown>[]): [number, number] | undefined {
  for (let i = raw.length - 1; i >= 0; i--) {
    const r = raw[i]!.conversationHistoryDeletedRange;
    if (Array.isArray(r) && r.length === 2 && r.every((n) => Number.isInteger(n)))
      return [r[0] as number, r[1] as number];
  }
  return undefined;
}

/** The UI messages of a legacy task folder (required): the file read, its entries and the rows they become. */
function readLegacyUiMessages(dir: string, rel: (name: string) => string) {
  const uiName = legacyUiFile(dir)?.name ?? LEGACY_UI_FILES[0];
  const raw = readJsonFile(path.join(dir, uiName), rel(uiName));
  if (raw === undefined) throw new MalformedClineFile(rel(uiName), "is missing");
  if (!Array.isArray(raw)) throw new MalformedClineFile(rel(uiName), "does not hold a JSON array");
  try {
    return { uiName, entries: raw as Record<string, unknown>[], messages: clineMessagesToUi(rel(uiName), raw) };
  } catch (err) {
    if (err instanceof TaskFileDamaged) throw new MalformedClineFile(rel(uiName), err.reason);
    throw err;
  }
}

/** What the messages say beyond their rows: the task's text, and what cannot be carried over. */
function surveyMessages(entries: Record<string, unknown>[]) {
  const unknownKinds = new Map<string, number>();
  const foreignTools = new Map<string, number>();
  let images = 0;
  let checkpoints = 0;
  let taskText = "";
  for (const m of entries) {
    const sub = String((m.type === "ask" ? m.ask : m.say) ?? "");
    const text = typeof m.text === "string" ? m.text : "";
    if (!taskText && sub === "task") taskText = text;
    if (Array.isArray(m.images)) images += m.images.length;
    if (sub === "checkpoint_created" || typeof m.lastCheckpointHash === "string") checkpoints++;
    if (KINDS_WITHOUT_DLINE_TOOL.has(sub)) bump(foreignTools, sub);
    else if (sub && !KNOWN_KINDS.has(sub)) bump(unknownKinds, sub);
    if (sub === "tool") {
      const tool = toolNameOf(text);
      if (tool && !TOOLS_WITH_DLINE_EQUIVALENT.has(tool)) bump(foreignTools, tool);
    }
  }
  return { taskText, images, checkpoints, unknownKinds, foreignTools };
}

/** The tool a "tool" message names in its JSON text ("" when it names none). */
function toolNameOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as unknown;
    return isObject(parsed) && typeof parsed.tool === "string" ? parsed.tool : "";
  } catch {
    return "";
  }
}

/** task_metadata.json, part of the layout but never required: kept whole, its models added to `models`. */
function readClineMetadata(
  dir: string,
  rel: (name: string) => string,
  models: Set<string>,
  notCarried: string[],
): Record<string, unknown> {
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
  return metadata;
}

/** Why the task has no workspace, when it has none ("" when Cline recorded its folder). */
function workspaceNoteOf(entry: { cwd?: string } | undefined, historyProblem: string | undefined): string {
  if (entry?.cwd) return "";
  if (entry) return "Cline recorded no working folder for this task: imported without a workspace";
  return `${historyProblem ?? "no history item"} (where Cline records the task's folder, favourite flag and truncation): imported without a workspace`;
}

/**
 * Parses one legacy task folder (`tasks/<taskId>/`) read-only: its UI messages (required),
 * api_conversation_history.json, context_history.json and task_metadata.json (read when
 * present), and its entry in the root's state/taskHistory.json (working folder, favourite,
 * truncation). Throws MalformedClineFile for a file that cannot be used; what can be read of
 * a conversation file cut short is used, with a note.
 */
export function parseLegacyTask(
  dir: string,
  taskId: string,
  root: string,
  historyIndex: LegacyHistoryIndex,
): ParsedClineItem {
  const rel = (name: string) => path.join(path.basename(dir), name);
  const { uiName, entries, messages } = readLegacyUiMessages(dir, rel);
  const { entry, problem: historyProblem } = historyIndex.entry(root, taskId);
  const notCarried: string[] = [];
  const usage = legacyUsage(taskId, entries);
  const survey = surveyMessages(entries);
  const title = (survey.taskText || messages.find((m) => m.text)?.text || `Cline task ${taskId}`)
    .trim()
    .split("\n")[0]!
    .slice(0, 200);

  // The conversation as Cline would send it next: carried into journal.db so the task can be continued.
  const models = new Set<string>(entry?.modelId ? [entry.modelId] : []);
  const conversation = legacyConversation(dir, entry?.deletedRange ?? lastRecordedRange(entries));
  if (conversation) {
    for (const m of conversation.models) models.add(m);
    notCarried.push(...conversation.notes);
  } else {
    notCarried.push(
      "no api_conversation_history.json: the task can be read but the model will not see its earlier conversation",
    );
  }
  const metadata = readClineMetadata(dir, rel, models, notCarried);

  if (uiName !== LEGACY_UI_FILES[0])
    notCarried.push(`read from ${uiName}, the file older Cline versions wrote (there is no ui_messages.json)`);
  if (survey.images > 0) notCarried.push(`${survey.images} image(s) attached to messages`);
  if (conversation && conversation.images > 0)
    notCarried.push(`${conversation.images} image(s) in the conversation (the model sees a placeholder)`);
  if (survey.foreignTools.size > 0)
    notCarried.push(
      `tool calls without a Dline equivalent (shown, cannot be repeated): ${counted(survey.foreignTools)}`,
    );
  if (survey.checkpoints > 0) notCarried.push(`${survey.checkpoints} Cline checkpoint(s) (Dline cannot restore them)`);
  if (survey.unknownKinds.size > 0)
    notCarried.push(`unknown message kinds (kept as text): ${counted(survey.unknownKinds)}`);
  if (usage.unreadable > 0) notCarried.push(`${usage.unreadable} request(s) whose usage could not be read`);
  if (usage.deletedEntries > 0) {
    notCarried.push(
      `usage of requests whose messages a Cline checkpoint restore removed (${usage.deletedEntries} record(s)) is counted, as Cline counts it; the messages are gone`,
    );
  }
  const workspaceNote = workspaceNoteOf(entry, historyProblem);
  if (workspaceNote) notCarried.push(`workspace: ${workspaceNote}`);

  const last = entries[entries.length - 1];
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
    workspaceRoot: entry?.cwd ?? "",
    workspaceNote,
    models: [...models],
    messageCount: messages.length,
    usage: usage.usage,
  };
  return {
    item,
    taskText: survey.taskText,
    status: lastKind === "completion_result" ? "completed" : "interrupted",
    favorite: entry?.favorite ?? false,
    messages,
    conversation: conversation?.lines ?? [],
    requests: usage.requests,
    notCarriedOver: notCarried,
    metadata,
  };
}
