/**
 * What the chat webview shows, as plain JSON (webview messages cannot carry bigint or class
 * instances), and the messages between the webview and the extension. Shared by the extension
 * (which builds the state) and the webview script (src/webview, which draws it).
 */

/** A proposed or applied change of one file (what an edit approval is about). */
export interface ChatFileEdit {
  /** Relative to the workspace root, "/" separators. */
  path: string;
  status: "added" | "modified" | "deleted" | "unknown";
  originalText: string;
  proposedText: string;
  /** The texts are left out (binary, or too large). */
  truncated: boolean;
  /** When the texts are left out for size: the change as a unified diff ("" when none). */
  diff: string;
  /**
   * Sizes in bytes of the file now (0 when added) and of what the edit writes (0 when deleted),
   * known even when the texts are left out; both 0 in rows of earlier versions. Numbers: webview
   * messages carry no bigint.
   */
  originalSize: number;
  proposedSize: number;
  /** The file now is binary: its text is never shown. */
  originalBinary: boolean;
}

/** The exact command line of an execute_command call, and the folder it runs in. */
export interface ChatCommandLine {
  command: string;
  workingDirectory: string;
}

export type ToolCallStatusName = "pending" | "running" | "done" | "failed" | "denied" | "interrupted" | "unknown";

/** A tool call as the core records it on its row (the same live and after a reopen). */
export interface ChatToolCall {
  toolCallId: string;
  tool: string;
  status: ToolCallStatusName;
  /** JSON of the tool's arguments. */
  input: string;
  /** What the tool returned, bounded (head and tail) by the core. */
  output: string;
  outputTruncated: boolean;
  edits: ChatFileEdit[];
  command?: ChatCommandLine;
  /** What the person wrote when approving or denying it. */
  feedback: string;
  /** Why it failed, was refused or interrupted. */
  reason: string;
}

export interface ChatMessageItem {
  type: "message";
  id: string;
  time: number;
  role: "user" | "assistant" | "tool" | "system" | "unknown";
  /** "text", "reasoning", "tool", "command", "completion", "followup", "denied", "error", ... */
  kind: string;
  text: string;
  partial: boolean;
  tool: string;
  detail: string;
  checkpointId: string;
  /** For a tool row: the live call shown in it (streamed output, outcome). */
  toolCallId?: string;
  output?: string;
  ok?: boolean;
  /** For a tool row: the call as the core records it (status, edits, exact command). */
  toolCall?: ChatToolCall;
  /**
   * An answer the task stopped while it streamed (Cancel, or its sidecar stopping or dying): its
   * text ends where it was cut, and the chat marks that end. The core's `UiMessage.cut_off`, live
   * and as stored, so it is the same whichever client cut it or opens it.
   */
  cutOff?: boolean;
}

/** A tool call that has no row of its own (older cores): shown from its events alone. */
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
  command?: ChatCommandLine;
  /** Why the same call is asked again (its file changed on disk while it waited); "" the first time. */
  askedAgainBecause?: string;
}

export interface ChatCheckpoint {
  id: string;
  kind: string;
  messageId: string;
  hasFiles: boolean;
  restored: boolean;
  /** Milliseconds since the Unix epoch (a number: webview messages carry no bigint); 0 or absent when unknown. */
  createdAt?: number;
  /** The paths the task's editing tools recorded for it (a "before restore" one: what the restore changed). */
  editedPaths?: string[];
  /** A "before restore" checkpoint still offered as the Undo of its restore. */
  undoAvailable?: boolean;
}

export interface CheckpointHeader {
  state: string;
  message: string;
  canRetry: boolean;
  canDisable: boolean;
}

/** Checkpoints of the task's workspace while they initialize (the first baseline scan). */
export interface CheckpointProgress {
  /** "initializing", "slow", ... (the CheckpointState name, lower case). */
  state: string;
  message: string;
  /** "scanning" or "staging"; "" when the core gives no phase. */
  phase: string;
  filesDone: number;
  filesTotal: number;
}

export interface AutoApprovalView {
  enabled: boolean;
  readFiles: boolean;
  editFiles: boolean;
  executeSafeCommands: boolean;
  executeAllCommands: boolean;
  useMcp: boolean;
  maxRequests: number;
}

export const AUTO_APPROVAL_DEFAULTS: AutoApprovalView = {
  enabled: false,
  readFiles: false,
  editFiles: false,
  executeSafeCommands: false,
  executeAllCommands: false,
  useMcp: false,
  maxRequests: 20,
};

export interface ProfileView {
  id: string;
  name: string;
  provider: string;
  model: string;
  baseUrl: string;
  /** A profile of the sidecar's environment (OPENAI_* / ANTHROPIC_*), never stored. */
  fromEnvironment: boolean;
  hasKey: boolean;
  contextWindow: number;
}

/** The controls of the chat's footer: mode, auto-approval, the model. */
export interface ChatPreferences {
  /** False until the core has answered (the welcome view waits for it). */
  loaded: boolean;
  mode: "act" | "plan";
  autoApproval: AutoApprovalView;
  profiles: ProfileView[];
  defaultProfileId: string;
  /** The open task's model profile ("" when it has none recorded). */
  taskProfileId: string;
}

/** A failure the chat shows above the composer, with what can be done about it. */
export interface ChatBanner {
  message: string;
  /** "no_model" / "no_default_profile" / "profile_not_found": the chat offers Configure Model. */
  reason: string;
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
  /** While the task's checkpoints initialize: what they are doing. */
  checkpointProgress?: CheckpointProgress;
  core: "starting" | "running" | "restarting" | "failed";
  coreMessage: string;
  /** costUnknown: part of the requests had no known price (the cost shown counts the others). */
  usage: { tokensIn: number; tokensOut: number; cost: number; costUnknown?: boolean };
  /** The size of the task's last request and the window it ran under (how full the context is). */
  context?: { tokens: number; window: number };
  /** The latest model status line ("retrying in 4 s (attempt 2 of 6)", a slow first byte); "" when none. */
  notice?: string;
  /**
   * Words the person sent that the core refused (no model set up yet, ...): the input shows
   * them again, never loses them. `reason` is the error's machine-readable reason
   * ("ERROR_REASON_NO_MODEL", ...; "" when it had none). `id` changes with each refusal.
   */
  unsent?: { id: number; text: string; reason: string };
  preferences: ChatPreferences;
  banner?: ChatBanner;
}

export function emptyPreferences(): ChatPreferences {
  return {
    loaded: false,
    mode: "act",
    autoApproval: { ...AUTO_APPROVAL_DEFAULTS },
    profiles: [],
    defaultProfileId: "",
    taskProfileId: "",
  };
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
    preferences: emptyPreferences(),
  };
}

/** A task as the chat's history lists it. */
export interface HistoryRow {
  id: string;
  title: string;
  workspaceRoot: string;
  favorite: boolean;
  status: ChatState["status"];
  /** Milliseconds since the Unix epoch. */
  updatedAt: number;
  tokensIn: number;
  tokensOut: number;
  cost: number;
  costUnknown: boolean;
}

/** The fields of the model form (welcome view, Configure Model). */
export interface ProfileForm {
  id: string;
  provider: "anthropic" | "openai";
  baseUrl: string;
  model: string;
  /** Empty: keep the key already set (or none, for local servers). */
  apiKey: string;
  contextWindow: number;
  makeDefault: boolean;
}

export type Screen = "chat" | "history" | "model";

/** Which completion View Changes shows: its message (a completion card's) or its checkpoint; neither, the latest. */
export interface ViewChangesTarget {
  messageId?: string;
  checkpointId?: string;
}

/** Messages from the webview to the extension; `requestId` asks for a `result` answer. */
export type WebviewAction =
  | { type: "ready" }
  | { type: "newTask"; text: string }
  | { type: "send"; text: string }
  | { type: "respond"; approve: boolean; text: string }
  | { type: "cancel" }
  | { type: "resume" }
  | { type: "retry" }
  | { type: "compare"; checkpointId: string }
  | { type: "restore"; checkpointId: string }
  /** `messageId`: the completion card's own message (its changes, not the latest completion's). */
  | { type: "viewChanges"; messageId?: string }
  | { type: "editMessage"; messageId: string; text: string; mode: "chat" | "all" }
  | { type: "retryCheckpoints" }
  | { type: "disableCheckpoints" }
  | { type: "openFile"; path: string }
  | { type: "showEdits"; messageId: string }
  | { type: "showProposed" }
  | { type: "copy"; text: string }
  | { type: "setMode"; mode: "act" | "plan" }
  | { type: "setAutoApproval"; patch: Partial<AutoApprovalView> }
  | { type: "selectProfile"; profileId: string }
  | { type: "saveProfile"; form: ProfileForm }
  /** `recent`: the start screen's few recent tasks, which leave the history screen's search as it is. */
  | { type: "listHistory"; query: string; recent?: boolean }
  | { type: "openTask"; taskId: string }
  | { type: "deleteTask"; taskId: string }
  | { type: "deleteAllHistory" }
  | { type: "toggleFavorite"; taskId: string }
  | { type: "newChat" }
  | { type: "dismissBanner" }
  | { type: "core"; action: "openSettings" | "showLog" | "restart" };

export type WebviewRequest = WebviewAction & { requestId?: number };

/** Messages from the extension to the webview. */
export type WebviewUpdate =
  | { type: "state"; state: ChatState }
  | { type: "result"; requestId: number; ok: boolean; error?: ChatBanner }
  | { type: "history"; query: string; tasks: HistoryRow[]; recent?: boolean }
  | { type: "screen"; screen: Screen }
  /**
   * Restore All asked from the chat's edit box has ended: `restored`, the edited text goes to the
   * message input (Restore All does not send it); declined at its question, the edit box stays.
   */
  | { type: "restoreAllDone"; messageId: string; text: string; restored: boolean };
