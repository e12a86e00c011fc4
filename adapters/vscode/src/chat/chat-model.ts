import { FileStatus } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import {
  AskKind,
  MessageRole,
  TaskStatus,
  ToolCallStatus,
  type Ask,
  type CommandLine,
  type FileEdit,
  type GetTaskResponse,
  type TaskEvent,
  type ToolCall,
  type UiMessage,
} from "../../../../core/src/gen/dline/v1/task_pb.js";
import {
  emptyChatState,
  type ChatAsk,
  type ChatBanner,
  type ChatCommandLine,
  type ChatFileEdit,
  type ChatItem,
  type ChatMessageItem,
  type ChatPreferences,
  type ChatState,
  type ChatToolCall,
  type ChatToolItem,
} from "./chat-state.js";

/**
 * Folds a task's events into the chat's state. Pure: no VS Code, no I/O, so the same events
 * always give the same chat (and it can be tested without an editor, with recorded streams).
 */
export class ChatModel {
  private state: ChatState = emptyChatState();

  get snapshot(): ChatState {
    return this.state;
  }

  /** Starts over for another task (or none). Keeps what is known of the core, checkpoints and preferences. */
  reset(taskId: string | undefined, title = ""): void {
    const { core, coreMessage, checkpointHeader, preferences } = this.state;
    this.state = {
      ...emptyChatState(),
      taskId,
      title,
      core,
      coreMessage,
      checkpointHeader,
      preferences: { ...preferences, taskProfileId: "" },
    };
  }

  /** The task was started or continued (the core does not always say so with an event). */
  markRunning(): void {
    if (this.state.status !== "waiting") this.state = { ...this.state, status: "running", statusReason: "" };
  }

  /** A status the task's events cannot carry (its sidecar died): interrupted, damaged. */
  setStatusFromHistory(status: TaskStatus): void {
    const name = statusName(status);
    if (name === "interrupted" || name === "damaged")
      this.state = { ...this.state, status: name, pendingAsk: undefined };
  }

  /** The core refused words the person sent: the input gets them back. */
  setUnsent(text: string, reason: string): void {
    this.state = { ...this.state, unsent: { id: (this.state.unsent?.id ?? 0) + 1, text, reason } };
  }

  setCore(core: ChatState["core"], message = ""): void {
    this.state = { ...this.state, core, coreMessage: message };
  }

  setCheckpointHeader(header: ChatState["checkpointHeader"]): void {
    this.state = { ...this.state, checkpointHeader: header };
  }

  setCheckpoints(checkpoints: ChatState["checkpoints"]): void {
    this.state = { ...this.state, checkpoints };
  }

  setPreferences(change: Partial<ChatPreferences>): void {
    this.state = { ...this.state, preferences: { ...this.state.preferences, ...change } };
  }

  setBanner(banner: ChatBanner | undefined): void {
    this.state = { ...this.state, banner };
  }

  /** Loads what GetTask returned (an opened task), before its events stream in. */
  load(task: GetTaskResponse): void {
    this.reset(task.task?.id, task.task?.title ?? "");
    this.state.items = task.messages.map(messageItem);
    this.state.status = statusName(task.task?.status ?? TaskStatus.UNSPECIFIED);
    this.state.statusReason = task.statusReason;
    // Running or waiting with no sidecar running it: its sidecar died and no other one has
    // marked it yet. It is interrupted (and can be resumed).
    if ((this.state.status === "running" || this.state.status === "waiting") && task.ownerPid === 0)
      this.state.status = "interrupted";
    this.state.pendingAsk = task.pendingAsk ? askItem(task.pendingAsk) : undefined;
    if (task.task) {
      this.state.usage = {
        tokensIn: Number(task.task.tokensIn),
        tokensOut: Number(task.task.tokensOut),
        cost: task.task.cost,
        costUnknown: task.task.costUnknown,
      };
    }
    if (task.contextWindow > 0n && task.contextTokens > 0n)
      this.state.context = { tokens: Number(task.contextTokens), window: Number(task.contextWindow) };
    this.state.preferences = { ...this.state.preferences, taskProfileId: task.profileId };
  }

  apply(event: TaskEvent): void {
    const s = { ...this.state, items: [...this.state.items] };
    const e = event.event;
    switch (e.case) {
      case "messageAdded":
      case "messageFinalized":
        if (e.value.message) upsertMessage(s.items, messageItem(e.value.message));
        break;
      case "messageDelta":
      case "reasoningDelta": {
        s.notice = "";
        const index = s.items.findIndex((i) => i.type === "message" && i.id === e.value.messageId);
        if (index >= 0) {
          const item = s.items[index] as ChatMessageItem;
          s.items[index] = { ...item, text: item.text + e.value.text };
        }
        break;
      }
      case "ask":
        s.pendingAsk = askItem(e.value);
        break;
      case "askResolved":
        if (s.pendingAsk?.askId === e.value.askId) s.pendingAsk = undefined;
        break;
      case "toolStarted": {
        // The call's chat row (named by the event) shows it; older cores: the last tool row of that tool; else its own item.
        const named = e.value.messageId
          ? s.items.findIndex((i) => i.type === "message" && i.id === e.value.messageId)
          : -1;
        const row =
          named >= 0
            ? named
            : s.items.findLastIndex(
                (i) => i.type === "message" && i.role === "tool" && i.tool === e.value.tool && !i.toolCallId,
              );
        if (row >= 0)
          s.items[row] = { ...(s.items[row] as ChatMessageItem), toolCallId: e.value.toolCallId, output: "" };
        else
          s.items.push({
            type: "tool",
            toolCallId: e.value.toolCallId,
            tool: e.value.tool,
            summary: e.value.summary,
            detail: e.value.detail,
            output: "",
            result: "",
          });
        break;
      }
      case "toolOutput":
        updateTool(s.items, e.value.toolCallId, (t) => ({ ...t, output: (t.output ?? "") + e.value.chunk }));
        break;
      case "toolFinished": {
        const { ok, result } = e.value;
        const status = toolCallStatuses[e.value.status];
        const edits = fileEditItems(e.value.edits);
        updateTool(s.items, e.value.toolCallId, (t) => {
          if (t.type === "tool") return { ...t, ok, result };
          const call = t.toolCall
            ? { ...t.toolCall, ...(status ? { status } : {}), ...(edits.length ? { edits } : {}) }
            : undefined;
          return { ...t, ok, ...(call ? { toolCall: call } : {}) };
        });
        break;
      }
      case "checkpointSaved": {
        const { checkpointId, messageId, kind } = e.value;
        const index = s.items.findIndex((i) => i.type === "message" && i.id === messageId);
        if (index >= 0) s.items[index] = { ...(s.items[index] as ChatMessageItem), checkpointId };
        // A new checkpoint clears every "restored" mark (the spec: the state clears when a new one is saved).
        s.checkpoints = [
          ...s.checkpoints.filter((c) => c.id !== checkpointId).map((c) => ({ ...c, restored: false })),
          { id: checkpointId, kind, messageId, hasFiles: kind !== "CHECKPOINT_KIND_COMPACTION", restored: false },
        ];
        break;
      }
      case "checkpointStatus": {
        const state = e.value.state.replace(/^CHECKPOINT_STATE_/, "").toLowerCase();
        // Shown while the baseline is taken; gone once checkpoints are ready (or have a header of their own).
        s.checkpointProgress =
          state === "initializing" || state === "slow_initialization"
            ? {
                state,
                message: e.value.message,
                phase: e.value.phase,
                filesDone: Number(e.value.filesDone),
                filesTotal: Number(e.value.filesTotal),
              }
            : undefined;
        break;
      }
      case "statusChanged":
        s.notice = "";
        s.status = statusName(e.value.status);
        s.statusReason = e.value.reason;
        if (s.status !== "waiting") s.pendingAsk = undefined;
        if (s.status !== "running" && s.status !== "waiting") s.checkpointProgress = undefined;
        break;
      case "usage": {
        const u = e.value;
        s.usage = {
          tokensIn: s.usage.tokensIn + Number(u.tokensIn),
          tokensOut: s.usage.tokensOut + Number(u.tokensOut),
          cost: s.usage.cost + u.cost,
          ...(s.usage.costUnknown || u.costUnknown ? { costUnknown: true } : {}),
        };
        // The task's own requests carry their window (a subagent's do not); one without usage tells nothing.
        const tokens = Number(u.tokensIn + u.cacheReads + u.cacheWrites + u.tokensOut);
        if (u.contextWindow > 0n && tokens > 0) s.context = { tokens, window: Number(u.contextWindow) };
        break;
      }
      case "modelRetry": {
        // The failed attempt's partial answer is gone; the line says when the next one comes.
        const dropped = new Set(e.value.discardedMessageIds);
        s.items = s.items.filter((i) => i.type !== "message" || !dropped.has(i.id));
        s.notice = `${e.value.message}: ${e.value.reason}`;
        break;
      }
      case "modelWaiting":
        s.notice = e.value.message;
        break;
      case "error":
        s.items.push({ type: "error", code: e.value.code, message: e.value.message });
        break;
      case "filesRestored":
        // The files are at this checkpoint now (in any window): it alone reads "restored". After
        // an Undo that is a "before restore" one, so no marker does. ListCheckpoints follows.
        s.checkpoints = s.checkpoints.map((c) => ({ ...c, restored: c.id === e.value.checkpointId }));
        break;
      case "rewound": {
        const after = e.value.afterMessageId;
        const index = after ? s.items.findIndex((i) => i.type === "message" && i.id === after) : -1;
        s.items = after && index < 0 ? s.items : s.items.slice(0, index + 1);
        const kept = new Set(s.items.flatMap((i) => (i.type === "message" ? [i.id] : [])));
        s.checkpoints = s.checkpoints.filter((c) => !c.messageId || kept.has(c.messageId));
        s.pendingAsk = undefined;
        // Restored to before its first message: the title was that message; the next one names the task.
        if (!s.items.some((i) => i.type === "message" && i.role === "user")) s.title = "";
        break;
      }
      default:
        break;
    }
    if (!s.title) {
      const first = s.items.find((i): i is ChatMessageItem => i.type === "message" && i.role === "user");
      if (first) s.title = (first.text.split("\n", 1)[0] ?? "").slice(0, 80);
    }
    this.state = s;
  }
}

function upsertMessage(items: ChatItem[], message: ChatMessageItem): void {
  const index = items.findIndex((i) => i.type === "message" && i.id === message.id);
  if (index < 0) items.push(message);
  else {
    const previous = items[index] as ChatMessageItem;
    // A finalized row keeps what events added to it: its checkpoint and its live tool call.
    items[index] = {
      ...message,
      checkpointId: message.checkpointId || previous.checkpointId,
      toolCallId: previous.toolCallId,
      output: previous.output,
      ok: previous.ok,
    };
  }
}

function updateTool(
  items: ChatItem[],
  id: string,
  change: <T extends ChatToolItem | ChatMessageItem>(tool: T) => T,
): void {
  const index = items.findIndex(
    (i) =>
      (i.type === "tool" || i.type === "message") &&
      (i.toolCallId === id || (i.type === "message" && i.toolCall?.toolCallId === id)),
  );
  if (index >= 0) items[index] = change(items[index] as ChatToolItem | ChatMessageItem);
}

export function messageItem(m: UiMessage): ChatMessageItem {
  return {
    type: "message",
    id: m.id,
    time: Number(m.time),
    role: roleName(m.role),
    kind: m.kind,
    text: m.text,
    partial: m.partial,
    tool: m.tool,
    detail: m.detail,
    checkpointId: m.checkpointId,
    ...(m.toolCall ? { toolCall: toolCallItem(m.toolCall) } : {}),
    // The core says which answer was stopped midway, live and as stored: the same in every client.
    ...(m.cutOff ? { cutOff: true } : {}),
  };
}

const toolCallStatuses: Record<number, ChatToolCall["status"]> = {
  [ToolCallStatus.PENDING]: "pending",
  [ToolCallStatus.RUNNING]: "running",
  [ToolCallStatus.DONE]: "done",
  [ToolCallStatus.FAILED]: "failed",
  [ToolCallStatus.DENIED]: "denied",
  [ToolCallStatus.INTERRUPTED]: "interrupted",
};

const fileStatuses: Record<number, ChatFileEdit["status"]> = {
  [FileStatus.ADDED]: "added",
  [FileStatus.MODIFIED]: "modified",
  [FileStatus.DELETED]: "deleted",
};

export function fileEditItems(edits: readonly FileEdit[]): ChatFileEdit[] {
  return edits.map((e) => ({
    path: e.path,
    status: fileStatuses[e.status] ?? "unknown",
    originalText: e.originalText,
    proposedText: e.proposedText,
    truncated: e.truncated,
    diff: e.diff,
    originalSize: Number(e.originalSize),
    proposedSize: Number(e.proposedSize),
    originalBinary: e.originalBinary,
  }));
}

function commandItem(c: CommandLine | undefined): { command?: ChatCommandLine } {
  return c ? { command: { command: c.command, workingDirectory: c.workingDirectory } } : {};
}

export function toolCallItem(c: ToolCall): ChatToolCall {
  return {
    toolCallId: c.toolCallId,
    tool: c.tool,
    status: toolCallStatuses[c.status] ?? "unknown",
    input: c.input,
    output: c.output,
    outputTruncated: c.outputTruncated,
    edits: fileEditItems(c.edits),
    ...commandItem(c.command),
    feedback: c.feedback,
    reason: c.reason,
  };
}

export function askItem(a: Ask): ChatAsk {
  const kinds: Record<number, ChatAsk["kind"]> = {
    [AskKind.TOOL_APPROVAL]: "tool",
    [AskKind.COMMAND_APPROVAL]: "command",
    [AskKind.FOLLOWUP]: "followup",
    [AskKind.COMPLETION]: "completion",
    [AskKind.RESUME]: "resume",
  };
  return {
    askId: a.askId,
    kind: kinds[a.kind] ?? "unknown",
    tool: a.tool,
    summary: a.summary,
    detail: a.detail,
    options: [...a.options],
    toolCallId: a.toolCallId,
    edits: fileEditItems(a.edits),
    ...commandItem(a.command),
    ...(a.askedAgainBecause ? { askedAgainBecause: a.askedAgainBecause } : {}),
  };
}

function roleName(role: MessageRole): ChatMessageItem["role"] {
  switch (role) {
    case MessageRole.USER:
      return "user";
    case MessageRole.ASSISTANT:
      return "assistant";
    case MessageRole.TOOL:
      return "tool";
    case MessageRole.SYSTEM:
      return "system";
    default:
      return "unknown";
  }
}

export function statusName(status: TaskStatus): ChatState["status"] {
  switch (status) {
    case TaskStatus.RUNNING:
      return "running";
    case TaskStatus.WAITING:
      return "waiting";
    case TaskStatus.COMPLETED:
      return "completed";
    case TaskStatus.CANCELLED:
      return "cancelled";
    case TaskStatus.INTERRUPTED:
      return "interrupted";
    case TaskStatus.FAILED:
      return "failed";
    case TaskStatus.DAMAGED:
      return "damaged";
    default:
      return "none";
  }
}
