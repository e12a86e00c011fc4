import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { FileStatus } from "../gen/dline/v1/checkpoint_pb.js";
import {
  AskKind,
  AskSchema,
  CommandLineSchema,
  FileEditSchema,
  MessageRole,
  TaskStatus,
  TaskSummarySchema,
  ToolCallSchema,
  ToolCallStatus,
  UiMessageSchema,
  TaskEventSchema,
  type Ask,
  type CommandLine,
  type FileEdit,
  type TaskEvent,
  type TaskSummary,
  type ToolCall,
  type UiMessage,
} from "../gen/dline/v1/task_pb.js";
import type { StoredUiMessage, TaskRecord, TaskStatusName } from "../tasks/index.js";
import {
  toolCallOf,
  type CommandLineRecord,
  type FileEditRecord,
  type ToolCallRecord,
  type ToolCallStatusName,
  type AskKindName,
  type RuntimeAsk,
  type RuntimeEvent,
  type RuntimeEventBody,
} from "../runtime/index.js";

/** proto <-> domain mapping of tasks, shared by HistoryService and TaskService. */
export const statusToProto: Record<TaskStatusName, TaskStatus> = {
  running: TaskStatus.RUNNING,
  waiting: TaskStatus.WAITING,
  completed: TaskStatus.COMPLETED,
  cancelled: TaskStatus.CANCELLED,
  interrupted: TaskStatus.INTERRUPTED,
  failed: TaskStatus.FAILED,
  damaged: TaskStatus.DAMAGED,
};

const roleToProto: Record<StoredUiMessage["role"], MessageRole> = {
  unspecified: MessageRole.UNSPECIFIED,
  user: MessageRole.USER,
  assistant: MessageRole.ASSISTANT,
  tool: MessageRole.TOOL,
  system: MessageRole.SYSTEM,
};

export function taskSummaryToProto(r: TaskRecord): TaskSummary {
  return create(TaskSummarySchema, {
    id: r.id,
    title: r.title,
    workspaceRoot: r.workspaceRoot,
    favorite: r.favorite,
    status: statusToProto[r.status],
    createdAt: BigInt(Math.trunc(r.createdAt)),
    updatedAt: BigInt(Math.trunc(r.updatedAt)),
    tokensIn: BigInt(Math.trunc(r.tokensIn)),
    tokensOut: BigInt(Math.trunc(r.tokensOut)),
    cacheReads: BigInt(Math.trunc(r.cacheReads)),
    cacheWrites: BigInt(Math.trunc(r.cacheWrites)),
    cost: r.cost,
    costUnknown: r.costUnknown,
    sizeBytes: BigInt(Math.trunc(r.sizeBytes)),
    source: r.source,
    damagedReason: r.damagedReason,
  });
}

const fileStatusToProto: Record<FileEditRecord["status"], FileStatus> = {
  added: FileStatus.ADDED,
  modified: FileStatus.MODIFIED,
  deleted: FileStatus.DELETED,
};

const toolCallStatusToProto: Record<ToolCallStatusName, ToolCallStatus> = {
  pending: ToolCallStatus.PENDING,
  running: ToolCallStatus.RUNNING,
  done: ToolCallStatus.DONE,
  failed: ToolCallStatus.FAILED,
  denied: ToolCallStatus.DENIED,
  interrupted: ToolCallStatus.INTERRUPTED,
};

export function fileEditsToProto(edits: readonly FileEditRecord[]): FileEdit[] {
  return edits.map((e) =>
    create(FileEditSchema, {
      path: e.path,
      status: fileStatusToProto[e.status],
      originalText: e.originalText,
      proposedText: e.proposedText,
      truncated: e.truncated,
      diff: e.diff ?? "",
      originalSize: BigInt(e.originalBytes ?? 0),
      proposedSize: BigInt(e.proposedBytes ?? 0),
      originalBinary: e.originalBinary ?? false,
    }),
  );
}

export function commandLineToProto(c: CommandLineRecord): CommandLine {
  return create(CommandLineSchema, { command: c.command, workingDirectory: c.workingDirectory });
}

export function toolCallToProto(r: ToolCallRecord): ToolCall {
  return create(ToolCallSchema, {
    toolCallId: r.toolCallId,
    tool: r.tool,
    status: toolCallStatusToProto[r.status],
    input: r.input === undefined ? "" : JSON.stringify(r.input),
    output: r.output,
    outputTruncated: r.outputTruncated,
    edits: fileEditsToProto(r.edits),
    command: r.command ? commandLineToProto(r.command) : undefined,
    feedback: r.feedback,
    reason: r.reason,
  });
}

/**
 * A stored UI message as the protocol's. `stopped`: nothing runs the task any more, so a tool
 * call still pending or running shows as interrupted, and a text still streaming (its sidecar
 * was killed mid-answer) as it was stored, no longer streaming, and cut off.
 */
export function uiMessageToProto(m: StoredUiMessage, options: { stopped?: boolean } = {}): UiMessage {
  const toolCall = toolCallOf(m, options);
  return create(UiMessageSchema, {
    id: m.id,
    time: BigInt(Math.trunc(m.time)),
    role: roleToProto[m.role],
    kind: m.kind,
    text: m.text,
    partial: m.partial && !options.stopped,
    // A text still streaming when its sidecar was killed was cut there too.
    cutOff: !!m.cutOff || (m.partial && !!options.stopped && m.kind === "text"),
    tool: m.tool,
    detail: m.detail,
    checkpointId: m.checkpointId,
    askId: m.askId,
    toolCall: toolCall ? toolCallToProto(toolCall) : undefined,
  });
}

const askKindToProto: Record<AskKindName, AskKind> = {
  tool_approval: AskKind.TOOL_APPROVAL,
  command_approval: AskKind.COMMAND_APPROVAL,
  followup: AskKind.FOLLOWUP,
  completion: AskKind.COMPLETION,
  resume: AskKind.RESUME,
};

export function askToProto(a: RuntimeAsk): Ask {
  return create(AskSchema, {
    askId: a.askId,
    kind: askKindToProto[a.kind],
    tool: a.tool,
    summary: a.summary,
    detail: a.detail,
    options: a.options,
    edits: fileEditsToProto(a.edits),
    command: a.command ? commandLineToProto(a.command) : undefined,
    toolCallId: a.toolCallId,
    askedAgainBecause: a.askedAgainBecause ?? "",
  });
}

function eventBodyToProto(body: RuntimeEventBody): NonNullable<MessageInitShape<typeof TaskEventSchema>["event"]> {
  switch (body.case) {
    case "messageAdded":
    case "messageFinalized":
      return { case: body.case, value: { message: uiMessageToProto(body.value.message) } };
    case "ask":
      return { case: "ask", value: askToProto(body.value) };
    case "toolStarted": {
      const { command, ...rest } = body.value;
      return { case: "toolStarted", value: { ...rest, command: command ? commandLineToProto(command) : undefined } };
    }
    case "toolFinished": {
      const { edits, status, ...rest } = body.value;
      return {
        case: "toolFinished",
        value: { ...rest, edits: fileEditsToProto(edits ?? []), status: toolCallStatusToProto[status] },
      };
    }
    case "statusChanged":
      return { case: "statusChanged", value: { status: statusToProto[body.value.status], reason: body.value.reason } };
    default:
      // The other events carry only strings, numbers and flags, named as the protocol names them.
      return body;
  }
}

/** Each event's protocol form, made once however many clients subscribe. */
const protoEvents = new WeakMap<RuntimeEvent, TaskEvent>();

/** A runtime event as the protocol's TaskEvent. */
export function taskEventToProto(e: RuntimeEvent): TaskEvent {
  let proto = protoEvents.get(e);
  if (!proto) {
    proto = create(TaskEventSchema, { seq: e.seq, taskId: e.taskId, time: e.time, event: eventBodyToProto(e.event) });
    protoEvents.set(e, proto);
  }
  return proto;
}

/** A runtime subscription as the protocol's events. */
export async function* taskEventsToProto(events: AsyncIterable<RuntimeEvent>): AsyncGenerator<TaskEvent> {
  for await (const event of events) yield taskEventToProto(event);
}
