import { create } from "@bufbuild/protobuf";
import { MessageRole, TaskStatus, TaskSummarySchema, UiMessageSchema, type TaskSummary, type UiMessage } from "../gen/dline/v1/task_pb.js";
import type { StoredUiMessage } from "../tasks/message-store.js";
import type { TaskRecord, TaskStatusName } from "../tasks/task-record.js";

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

export function uiMessageToProto(m: StoredUiMessage): UiMessage {
  return create(UiMessageSchema, {
    id: m.id,
    time: BigInt(Math.trunc(m.time)),
    role: roleToProto[m.role],
    kind: m.kind,
    text: m.text,
    partial: m.partial,
    tool: m.tool,
    detail: m.detail,
    checkpointId: m.checkpointId,
    askId: m.askId,
  });
}
