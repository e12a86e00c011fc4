/**
 * Pure mappings between the core's task vocabulary and ACP's: tool kinds and locations, the
 * history replay of a session (stored UI messages -> session/update), and the user's prompt
 * content blocks -> the text a task receives.
 */
import * as path from "node:path";
import type { ContentBlock, PlanEntry, SessionUpdate, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import type { StoredUiMessage } from "../tasks/index.js";
import { toolCallOf } from "../runtime/index.js";
import { closingFence } from "./markdown-fence.js";
import { visible } from "../text/visible-text.js";
import { withThousands } from "../text/numbers.js";

const TOOL_KINDS: Record<string, ToolKind> = {
  read_file: "read",
  list_files: "search",
  search_files: "search",
  write_to_file: "edit",
  replace_in_file: "edit",
  execute_command: "execute",
  new_subagent: "think",
};

export function toolKind(tool: string): ToolKind {
  return TOOL_KINDS[tool] ?? "other";
}

/** Parses a tool's JSON arguments; anything unparseable is passed on as the raw text. */
export function parseDetail(detail: string): unknown {
  if (!detail) return undefined;
  try {
    return JSON.parse(detail) as unknown;
  } catch {
    return detail;
  }
}

/** The file a tool call touches, as an absolute path the editor can open ("follow along"). */
export function toolLocations(input: unknown, workspaceRoot: string): ToolCallLocation[] {
  const p = (input as { path?: unknown } | undefined)?.path;
  if (typeof p !== "string" || !p) return [];
  return [{ path: path.resolve(workspaceRoot, p) }];
}

/** Why a call did not run: the person's feedback, else the rule a client applied for them. */
export function deniedText(feedback: string, reason: string): string {
  if (feedback) return `Rejected by the user: ${feedback}`;
  return reason ? `Rejected: ${reason}` : "Rejected by the user.";
}

/** A text content block, its control characters made visible (core/src/text/visible-text.ts). */
export function text(value: string) {
  return { type: "text" as const, text: visible(value) };
}

/**
 * A unified diff as a tool call's content: a fenced block (ACP's diff content carries whole
 * texts), its fence longer than any run of backticks in the diff.
 */
export function unifiedDiffContent(diff: string) {
  const longestRun = Math.max(0, ...(diff.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  return { type: "content" as const, content: text(`${fence}diff\n${diff.replace(/\n$/, "")}\n${fence}`) };
}

/**
 * An edit whose texts are left out and that has no diff (binary, or too large to read): what
 * it changes by size, and the text it writes when that was sent.
 */
export function leftOutEditContent(e: {
  path: string;
  status: string;
  originalBytes: number;
  proposedBytes: number;
  originalBinary: boolean;
  proposedText: string;
}) {
  const bytes = (n: number) => `${withThousands(n)} byte${n === 1 ? "" : "s"}`;
  const now =
    e.status === "added" ? "a new file" : `${e.originalBinary ? "binary, " : ""}${bytes(e.originalBytes)} now`;
  const after = e.status === "deleted" ? "deleted" : `${bytes(e.proposedBytes)} after`;
  // Rows of earlier versions know no sizes.
  const summary =
    e.originalBytes === 0 && e.proposedBytes === 0
      ? `${e.path} (${e.status}): too large or binary to show.`
      : `${e.path} (${e.status}): ${now}, not shown; ${after}.`;
  if (!e.proposedText) return { type: "content" as const, content: text(summary) };
  const longestRun = Math.max(0, ...(e.proposedText.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  return {
    type: "content" as const,
    content: text(`${summary} It writes:\n${fence}\n${e.proposedText.replace(/\n$/, "")}\n${fence}`),
  };
}

/** What ends a replayed answer that was cut off. */
export const CUT_OFF_MARKER = "[answer cut off here]";

/** A replayed answer that was cut off, with the marker after it (outside the code block it stopped in). */
function cutOffText(answer: string): string {
  const fence = closingFence(answer);
  const closed = fence ? `${answer}${answer.endsWith("\n") ? "" : "\n"}${fence}` : answer;
  return `${closed}\n\n${CUT_OFF_MARKER}`;
}

const PLAN_STATUSES = new Set<string>(["pending", "in_progress", "completed"]);
const PLAN_PRIORITIES = new Set<string>(["high", "medium", "low"]);

/** A plan message (update_plan; detail `{steps: [{step, status, priority}]}`) as ACP's plan update: the whole plan. */
export function planUpdate(detail: string): SessionUpdate | undefined {
  const steps = (parseDetail(detail) as { steps?: unknown } | undefined)?.steps;
  if (!Array.isArray(steps)) return undefined;
  const entries: PlanEntry[] = [];
  for (const s of steps as { step?: unknown; status?: unknown; priority?: unknown }[]) {
    if (typeof s?.step !== "string") continue;
    entries.push({
      content: visible(s.step),
      status: PLAN_STATUSES.has(String(s.status)) ? (s.status as PlanEntry["status"]) : "pending",
      priority: PLAN_PRIORITIES.has(String(s.priority)) ? (s.priority as PlanEntry["priority"]) : "medium",
    });
  }
  return { sessionUpdate: "plan", entries };
}

/**
 * A stored conversation replayed for session/load: the user's words as user_message_chunk,
 * the model's answers, questions and results as agent_message_chunk, its reasoning as
 * agent_thought_chunk, every tool call as a finished tool_call with its outcome, and every plan
 * the model made as a plan update (each replaces the previous one, so the latest one stays).
 */
export function replayUpdates(messages: readonly StoredUiMessage[], workspaceRoot: string): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const m of messages) {
    switch (m.kind) {
      case "text":
        if (!m.text) break;
        if (m.role === "user")
          updates.push({ sessionUpdate: "user_message_chunk", content: text(m.text), messageId: m.id });
        // An answer cut off (a Cancel, a stopped sidecar) says so where it ends, as the editors' chats do.
        else
          updates.push({
            sessionUpdate: "agent_message_chunk",
            content: text(m.cutOff ? cutOffText(m.text) : m.text),
            messageId: m.id,
          });
        break;
      case "denied":
        if (m.text) updates.push({ sessionUpdate: "user_message_chunk", content: text(m.text), messageId: m.id });
        break;
      case "reasoning":
        if (m.text) updates.push({ sessionUpdate: "agent_thought_chunk", content: text(m.text), messageId: m.id });
        break;
      case "completion":
      case "followup":
        updates.push({ sessionUpdate: "agent_message_chunk", content: text(m.text), messageId: m.id });
        break;
      case "error":
        updates.push({ sessionUpdate: "agent_message_chunk", content: text(`Error: ${m.text}`), messageId: m.id });
        break;
      case "plan": {
        const plan = planUpdate(m.detail);
        if (plan) updates.push(plan);
        break;
      }
      case "tool":
      case "command": {
        const call = toolCallOf(m, { stopped: true });
        if (!call) break;
        const done = call.status === "done";
        const diffs = done ? call.edits : [];
        const why = call.status === "denied" ? deniedText(call.feedback, call.reason) : call.reason;
        const shown = done ? call.output : why || call.output;
        updates.push({
          sessionUpdate: "tool_call",
          toolCallId: call.toolCallId || m.id,
          title: visible(m.text || m.tool),
          kind: toolKind(m.tool),
          status: done ? "completed" : "failed",
          rawInput: call.input,
          locations: toolLocations(call.input, workspaceRoot),
          content:
            diffs.length > 0
              ? diffs.map((e) =>
                  e.truncated
                    ? e.diff
                      ? unifiedDiffContent(e.diff)
                      : leftOutEditContent({
                          path: e.path,
                          status: e.status,
                          originalBytes: e.originalBytes ?? 0,
                          proposedBytes: e.proposedBytes ?? 0,
                          originalBinary: e.originalBinary ?? false,
                          proposedText: e.proposedText,
                        })
                    : {
                        type: "diff" as const,
                        path: path.resolve(workspaceRoot, e.path),
                        oldText: e.status === "added" ? null : e.originalText,
                        newText: e.proposedText,
                      },
                )
              : shown
                ? [{ type: "content", content: text(shown) }]
                : [],
        });
        break;
      }
      default:
        // checkpoint markers, compaction notes and system rows have no ACP counterpart
        break;
    }
  }
  return withParagraphsBetweenMessages(updates);
}

/**
 * Each answer (and thought) after the first of a turn starts with a blank line, as the live
 * turn sends it (PromptTurn): a client that does not tell messages apart by their messageId
 * appends one to the other ("Done.All done.").
 */
function withParagraphsBetweenMessages(updates: SessionUpdate[]): SessionUpdate[] {
  const started = { agent_message_chunk: false, agent_thought_chunk: false };
  return updates.map((u) => {
    if (u.sessionUpdate === "user_message_chunk") {
      started.agent_message_chunk = started.agent_thought_chunk = false;
      return u;
    }
    if (u.sessionUpdate !== "agent_message_chunk" && u.sessionUpdate !== "agent_thought_chunk") return u;
    const later = started[u.sessionUpdate];
    started[u.sessionUpdate] = true;
    return later && u.content.type === "text" ? { ...u, content: { ...u.content, text: `\n\n${u.content.text}` } } : u;
  });
}

/**
 * What a task receives from a prompt: text blocks as they are, a resource link as the
 * `@path` mention models know, an embedded text resource as a quoted file.
 */
export function promptText(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "resource_link") parts.push(`@${uriToPath(block.uri)}`);
    else if (block.type === "resource") {
      const resource = block.resource as { uri: string; text?: string };
      if (typeof resource.text === "string")
        parts.push(`<file path="${uriToPath(resource.uri)}">\n${resource.text}\n</file>`);
      else parts.push(`@${uriToPath(resource.uri)}`);
    }
    // images and audio are not advertised (promptCapabilities), so none arrive
  }
  return parts.join("\n\n");
}

function uriToPath(uri: string): string {
  return uri.startsWith("file://") ? decodeURIComponent(uri.slice("file://".length)) : uri;
}
