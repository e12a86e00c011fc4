/**
 * What the chat webview shows, as plain JSON (webview messages cannot carry bigint or class
 * instances). Shared by the extension (which builds it) and documents what media/chat.js reads.
 */
export interface ChatMessageItem {
  type: "message";
  id: string;
  time: number;
  role: "user" | "assistant" | "tool" | "system" | "unknown";
  kind: string;
  text: string;
  partial: boolean;
  tool: string;
  detail: string;
  checkpointId: string;
  /** For a tool row: the live tool call shown in it (output streamed, outcome). */
  toolCallId?: string;
  output?: string;
  ok?: boolean;
  /** For a tool row: the call as the core records it (status, edits, exact command). */
  toolCall?: ChatToolCall;
}

/** A proposed or applied change of one file (what an edit approval is about). */
export interface ChatFileEdit {
  /** Relative to the workspace root, "/" separators. */
  path: string;
  status: "added" | "modified" | "deleted" | "unknown";
  originalText: string;
  proposedText: string;
  /** The texts are left out (binary, or too large). */
  truncated: boolean;
}

export interface ChatToolCall {
  toolCallId: string;
  tool: string;
  status: "pending" | "running" | "done" | "failed" | "denied" | "interrupted" | "unknown";
  input: string;
  output: string;
  outputTruncated: boolean;
  edits: ChatFileEdit[];
  /** The exact command line and its folder (execute_command). */
  command?: { command: string; workingDirectory: string };
  feedback: string;
  reason: string;
}

export interface ChatToolItem {
  type: "tool";
  toolCallId: string;
  tool: string;
  summary: string;
  detail: string;
  output: string;
  /** Undefined while the tool runs. */
  ok?: boolean;
  result: string;
}

export interface ChatErrorItem {
  type: "error";
  code: string;
  message: string;
}

export type ChatItem = ChatMessageItem | ChatToolItem | ChatErrorItem;

export interface ChatAsk {
  askId: string;
  kind: "tool" | "command" | "followup" | "completion" | "resume" | "unknown";
  tool: string;
  summary: string;
  detail: string;
  options: string[];
  /** The tool call the approval is about (its row has the same id). */
  toolCallId: string;
  /** An edit approval: the exact change, computed by the core (what is approved is what is written). */
  edits: ChatFileEdit[];
  /** A command approval: the exact command line and its folder. */
  command?: { command: string; workingDirectory: string };
}

export interface ChatCheckpoint {
  id: string;
  kind: string;
  messageId: string;
  hasFiles: boolean;
  restored: boolean;
}

export interface CheckpointHeader {
  state: string;
  message: string;
  canRetry: boolean;
  canDisable: boolean;
}

export interface ChatState {
  taskId: string | undefined;
  title: string;
  status: "none" | "running" | "waiting" | "completed" | "cancelled" | "interrupted" | "failed" | "damaged";
  statusReason: string;
  items: ChatItem[];
  pendingAsk: ChatAsk | undefined;
  checkpoints: ChatCheckpoint[];
  /** Set when checkpoints are limited (no workspace, home folder, git missing, ...). */
  checkpointHeader: CheckpointHeader | undefined;
  core: "starting" | "running" | "restarting" | "failed";
  coreMessage: string;
  /** costUnknown: part of the requests had no known price (the cost shown counts the others). */
  usage: { tokensIn: number; tokensOut: number; cost: number; costUnknown?: boolean };
  /** The latest model status line ("retrying in 4 s (attempt 2 of 6)", a slow first byte); "" when none. */
  notice?: string;
  /**
   * Words the person sent that the core refused (no model set up yet, ...): the input shows
   * them again, never loses them. `reason` is the error's machine-readable reason
   * ("ERROR_REASON_NO_MODEL", ...; "" when it had none). `id` changes with each refusal.
   */
  unsent?: { id: number; text: string; reason: string };
}

export function emptyChatState(): ChatState {
  return {
    taskId: undefined,
    title: "",
    status: "none",
    statusReason: "",
    items: [],
    pendingAsk: undefined,
    checkpoints: [],
    checkpointHeader: undefined,
    core: "starting",
    coreMessage: "",
    usage: { tokensIn: 0, tokensOut: 0, cost: 0 },
  };
}

/** Messages from the webview to the extension. */
export type WebviewRequest =
  | { type: "ready" }
  | { type: "newTask"; text: string }
  | { type: "send"; text: string }
  | { type: "respond"; approve: boolean; text: string }
  | { type: "cancel" }
  | { type: "resume" }
  | { type: "compare"; checkpointId: string }
  | { type: "restore"; checkpointId: string }
  | { type: "viewChanges" }
  | { type: "editMessage"; messageId: string; text: string; mode: "chat" | "all" }
  | { type: "retryCheckpoints" }
  | { type: "disableCheckpoints" };

/** Messages from the extension to the webview. */
export type WebviewUpdate = { type: "state"; state: ChatState };
