/**
 * The chat-fold fixtures: event streams recorded from the real sidecar (fixtures/*.json) with
 * the chat state they must fold to. The expected state is the core's own view of the task at
 * the end of the stream (its GetTask), reduced to what every client's chat shows: the
 * messages in order (role, kind, text, partial, checkpoint, and for tool rows the call's id,
 * status and edited paths), the status and the pending question. The TypeScript (VS Code),
 * Lua (Neovim) and Kotlin (JetBrains) folds each reduce their own state the same way and must
 * match it: see README.md beside this file.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { toJson } from "@bufbuild/protobuf";
import { FileStatus } from "../../../core/src/gen/dline/v1/checkpoint_pb.js";
import {
  GetTaskResponseSchema,
  MessageRole,
  TaskEventSchema,
  TaskStatus,
  ToolCallStatus,
  type GetTaskResponse,
  type TaskEvent,
} from "../../../core/src/gen/dline/v1/task_pb.js";

export const fixturesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");

export interface ChatMessageView {
  id: string;
  role: string;
  kind: string;
  text: string;
  partial: boolean;
  checkpointId: string;
  toolCall?: { toolCallId: string; status: string; edits: string[] };
}

/** What every client's chat must show at the end of a stream. */
export interface ChatView {
  status: string;
  pendingAskId: string;
  messages: ChatMessageView[];
}

export interface ChatFixture {
  name: string;
  about: string;
  /** Connect JSON of each TaskEvent, in the order a client received them. */
  events: unknown[];
  expected: ChatView;
}

/** "path FILE_STATUS_MODIFIED": an edit as the views compare it. */
export function editView(path: string, status: string): string {
  return `${path} ${status}`;
}

/** The expected view: the core's GetTask at the end of the stream. */
export function viewOfTask(task: GetTaskResponse): ChatView {
  return {
    status: `TASK_STATUS_${TaskStatus[task.task?.status ?? TaskStatus.UNSPECIFIED]}`,
    pendingAskId: task.pendingAsk?.askId ?? "",
    messages: task.messages.map((m) => ({
      id: m.id,
      role: `MESSAGE_ROLE_${MessageRole[m.role]}`,
      kind: m.kind,
      text: m.text,
      partial: m.partial,
      checkpointId: m.checkpointId,
      ...(m.toolCall
        ? {
            toolCall: {
              toolCallId: m.toolCall.toolCallId,
              status: `TOOL_CALL_STATUS_${ToolCallStatus[m.toolCall.status]}`,
              edits: m.toolCall.edits.map((e) => editView(e.path, `FILE_STATUS_${FileStatus[e.status]}`)),
            },
          }
        : {}),
    })),
  };
}

export function fixtureOf(name: string, about: string, events: TaskEvent[], task: GetTaskResponse): ChatFixture {
  return { name, about, events: events.map((e) => toJson(TaskEventSchema, e)), expected: viewOfTask(task) };
}

export function readFixtures(): ChatFixture[] {
  return fs
    .readdirSync(fixturesDir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(fixturesDir, f), "utf8")) as ChatFixture);
}

export function writeFixture(fixture: ChatFixture): void {
  fs.mkdirSync(fixturesDir, { recursive: true });
  fs.writeFileSync(path.join(fixturesDir, `${fixture.name}.json`), JSON.stringify(fixture, null, 1) + "\n");
}

/**
 * A view with its ids (message, checkpoint, tool call, ask) replaced by their order of first
 * appearance, so two recordings of one scenario compare equal when they behave the same.
 */
export function normalizedView(view: ChatView): ChatView {
  const names = new Map<string, string>();
  const name = (prefix: string, id: string) => {
    if (!id) return "";
    if (!names.has(id)) names.set(id, `${prefix}${names.size + 1}`);
    return names.get(id)!;
  };
  return {
    status: view.status,
    pendingAskId: name("ask-", view.pendingAskId),
    messages: view.messages.map((m) => ({
      ...m,
      id: name("msg-", m.id),
      checkpointId: name("cp-", m.checkpointId),
      ...(m.toolCall ? { toolCall: { ...m.toolCall, toolCallId: name("call-", m.toolCall.toolCallId) } } : {}),
    })),
  };
}

/** GetTask as Connect JSON (for logs when a comparison fails). */
export function taskJson(task: GetTaskResponse): unknown {
  return toJson(GetTaskResponseSchema, task);
}
