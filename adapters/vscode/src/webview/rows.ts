import type {
  ChatCheckpoint,
  ChatItem,
  ChatMessageItem,
  ChatState,
  ChatToolCall,
  ChatToolItem,
  ToolCallStatusName,
} from "../chat/chat-state.js";
import { isLeftOut, leftOutNote, lineCount, writtenText } from "../chat/left-out-edit.js";
import { button, el, visibleText, type Child } from "./dom.js";
import { feedbackShownOnCall } from "./feedback.js";
import { checkpointButtonNames, parseInput, TOOL_LABELS } from "./step-names.js";

/** What drawing a row needs from the chat around it. */
export interface RowContext {
  state: ChatState;
  markdown(text: string): string;
  post: (action: import("../chat/chat-state.js").WebviewAction) => void;
  /** Starts editing a sent message (Restore Chat / Restore All). */
  edit(item: ChatMessageItem): void;
  /** Whether a <details> of a row is open: the person's choice when they made one. */
  isOpen(key: string, fallback: boolean): boolean;
}

const STATUS_WORDS: Record<ToolCallStatusName, string> = {
  pending: "Waiting for approval",
  running: "Running…",
  done: "Done",
  failed: "Failed",
  denied: "Denied",
  interrupted: "Interrupted",
  unknown: "",
};

/** The nodes of one chat item (a checkpoint marker follows the message it belongs to). */
export function renderItem(item: ChatItem, ctx: RowContext): Node[] {
  if (item.type === "error")
    return [
      el(
        "div",
        { class: "row-error", role: "alert" },
        el("strong", {}, "Error"),
        " ",
        visibleText(item.code ? `${item.code}: ${item.message}` : item.message),
      ),
    ];
  if (item.type === "tool") return [legacyToolRow(item, ctx)];
  // Feedback given with a reject reads on the denied row ("Denied with feedback"): not twice.
  const once = item.kind === "denied" && feedbackShownOnCall(ctx.state.items, ctx.state.items.indexOf(item));
  const nodes: Node[] = once ? [] : [renderMessage(item, ctx)];
  const checkpoint = checkpointFor(item, ctx.state);
  if (checkpoint) nodes.push(checkpointMarker(checkpoint, item, ctx));
  return nodes;
}

/** A key that changes whenever what `renderItem` draws would change. */
export function itemSignature(item: ChatItem, state: ChatState): string {
  const extra =
    item.type === "message"
      ? [
          JSON.stringify(checkpointFor(item, state) ?? null),
          item.kind === "completion" ? state.status : "",
          state.pendingAsk?.toolCallId ?? "",
          item.kind === "denied" ? String(feedbackShownOnCall(state.items, state.items.indexOf(item))) : "",
          item.cutOff ? (modelStopReason(item, state) ?? "") : "",
        ]
      : [];
  return JSON.stringify(item) + extra.join("|");
}

export function itemKey(item: ChatItem, index: number): string {
  if (item.type === "message") return `m:${item.id}`;
  if (item.type === "tool") return `t:${item.toolCallId}`;
  return `e:${index}`;
}

function renderMessage(item: ChatMessageItem, ctx: RowContext): HTMLElement {
  const base = { "data-message-id": item.id };
  if (item.role === "tool" || item.kind === "tool" || item.kind === "command") return toolRow(item, ctx);
  if (item.role === "user") {
    if (item.kind === "denied") {
      return el(
        "div",
        { class: "message feedback", ...base },
        el("div", { class: "row-label" }, "Your feedback"),
        el("div", { class: "text" }, visibleText(item.text)),
      );
    }
    const node = el(
      "div",
      { class: "message user", title: "Click to edit this message", tabindex: "0", ...base },
      el("div", { class: "text" }, visibleText(item.text)),
    );
    node.addEventListener("click", () => ctx.edit(item));
    node.addEventListener("keydown", (e) => {
      if (e.key === "Enter") ctx.edit(item);
    });
    return node;
  }
  if (item.kind === "reasoning") {
    const key = `m:${item.id}:reasoning`;
    return el(
      "details",
      { class: "message reasoning", open: ctx.isOpen(key, item.partial), "data-details-key": key, ...base },
      el("summary", {}, item.partial ? "Thinking…" : "Thought"),
      markdownBlock(item.text, ctx, item.partial),
    );
  }
  if (item.kind === "completion") {
    return el(
      "div",
      { class: "message completion", ...base },
      el("div", { class: "row-label success" }, "✓ Task completed"),
      markdownBlock(item.text, ctx, item.partial),
      ctx.state.status === "completed"
        ? button("View Changes", () => ctx.post({ type: "viewChanges", messageId: item.id }), "secondary", {
            "data-action": "view-changes",
          })
        : undefined,
    );
  }
  if (item.kind === "followup") {
    return el(
      "div",
      { class: "message followup", ...base },
      el("div", { class: "row-label" }, "Question"),
      markdownBlock(item.text, ctx, item.partial),
    );
  }
  if (item.kind === "text" || item.role === "assistant") {
    return el(
      "div",
      { class: `message assistant kind-${item.kind}${item.partial ? " partial" : ""}`, ...base },
      markdownBlock(item.text, ctx, item.partial),
      item.cutOff ? cutOffMarker(item, ctx.state) : undefined,
    );
  }
  // Lines the core adds (notices, compaction, trims, refusals): quiet, as they are.
  return el(
    "div",
    { class: `message system kind-${item.kind}`, ...base },
    el("span", { class: "row-label" }, item.kind),
    " ",
    visibleText(item.text),
  );
}

/** The end of an answer that stopped before it was finished. */
export const CUT_OFF_MARKER = "— answer cut off here";

/**
 * The marker at the end of a cut answer. An answer the model itself stopped (its output limit,
 * a full context window, a refusal) ended the task's turn: the marker says why, in the core's
 * words, and how to go on; a Cancel or a stopped sidecar says so in the task's own status line.
 */
function cutOffMarker(item: ChatMessageItem, state: ChatState): HTMLElement {
  const reason = modelStopReason(item, state);
  return el(
    "div",
    { class: "cut-off", title: "This answer was not finished: it ends here." },
    CUT_OFF_MARKER,
    reason ? [": ", visibleText(reason), ". Send “go on” to have it continue."] : undefined,
  );
}

/** Why the model stopped this cut answer, when it is the last row of a task that then ended its turn. */
function modelStopReason(item: ChatMessageItem, state: ChatState): string | undefined {
  if (state.status !== "completed" || !state.statusReason) return undefined;
  const last = state.items[state.items.length - 1];
  return last === item ? state.statusReason : undefined;
}

function markdownBlock(text: string, ctx: RowContext, partial: boolean): HTMLElement {
  const block = el("div", { class: `markdown${partial ? " partial" : ""}` });
  // markdown-it escapes every HTML the text holds (html: false): what is set here is its own markup.
  block.innerHTML = ctx.markdown(text);
  return block;
}

function statusOf(item: ChatMessageItem): ToolCallStatusName {
  if (item.toolCall) return item.toolCall.status;
  if (item.ok !== undefined) return item.ok ? "done" : "failed";
  return item.toolCallId ? "running" : "pending";
}

function fileLink(path: string, ctx: RowContext): HTMLElement {
  return el(
    "a",
    {
      class: "file-link",
      href: "#",
      title: `Open ${path}`,
      "data-action": "open-file",
      onclick: (e: Event) => {
        e.preventDefault();
        e.stopPropagation();
        ctx.post({ type: "openFile", path });
      },
    },
    visibleText(path),
  );
}

function toolRow(item: ChatMessageItem, ctx: RowContext): HTMLElement {
  const call: ChatToolCall | undefined = item.toolCall;
  const status = statusOf(item);
  const input = parseInput(call?.input ?? item.detail);
  const tool = call?.tool || item.tool;
  const editPaths = call?.edits.map((e) => e.path) ?? [];
  const inputPath = typeof input.path === "string" ? input.path : "";
  const paths = editPaths.length > 0 ? editPaths : inputPath ? [inputPath] : [];
  const label = TOOL_LABELS[tool] ?? tool;
  const head: Child[] = [
    el("span", { class: `tool-icon tool-${tool}`, "aria-hidden": "true" }),
    el("span", { class: "tool-label" }, label),
  ];
  if (paths.length > 0 && tool !== "execute_command")
    head.push(
      el(
        "span",
        { class: "tool-paths" },
        paths.map((p) => fileLink(p, ctx)),
      ),
    );
  else if (tool !== "execute_command") head.push(el("span", { class: "tool-summary" }, visibleText(item.text)));
  head.push(el("span", { class: `tool-status status-${status}` }, STATUS_WORDS[status]));

  const body: Child[] = [];
  const command = call?.command;
  if (tool === "execute_command" || command) {
    const line = command?.command ?? (typeof input.command === "string" ? input.command : item.text);
    body.push(el("pre", { class: "command-line" }, el("span", { class: "prompt" }, "$ "), visibleText(line)));
    if (command?.workingDirectory)
      body.push(el("div", { class: "tool-note" }, "in ", visibleText(command.workingDirectory)));
  }
  if (call && call.edits.length > 0) {
    const pending = status === "pending";
    const count = call.edits.length;
    body.push(
      el(
        "div",
        { class: "tool-edits" },
        pending
          ? button("Open diff", () => ctx.post({ type: "showProposed" }), "link", { "data-action": "show-proposed" })
          : status === "done"
            ? button(
                `Changed ${count} file${count === 1 ? "" : "s"}`,
                () => ctx.post({ type: "showEdits", messageId: item.id }),
                "link",
                { "data-action": "show-edits" },
              )
            : undefined,
        call.edits.map((e) => [
          el(
            "span",
            { class: `edit-chip ${e.status}` },
            e.status === "added" ? "+" : e.status === "deleted" ? "−" : "~",
            " ",
            visibleText(e.path),
          ),
          // No diff shows a binary or too-large file: its sizes say what the edit changes.
          isLeftOut(e) ? el("span", { class: "tool-note left-out" }, leftOutNote(e, pending)) : undefined,
        ]),
      ),
    );
    // What such an edit writes, when the core sent it (the file now is binary or too large).
    call.edits.forEach((e, index) => {
      const text = writtenText(e);
      if (text === undefined) return;
      const key = `m:${item.id}:written:${index}`;
      const verb = pending ? "writes" : status === "done" ? "wrote" : "would write";
      body.push(
        el(
          "details",
          { class: "tool-output written", open: ctx.isOpen(key, false), "data-details-key": key },
          el("summary", {}, "What the edit to ", visibleText(e.path), ` ${verb} (${lineCount(text)})`),
          el("pre", { class: "output written-text", "data-written": e.path }, visibleText(text)),
        ),
      );
    });
  }
  if (call?.feedback)
    body.push(
      el(
        "div",
        { class: "tool-feedback" },
        el("span", { class: "row-label" }, status === "denied" ? "Denied with feedback" : "Feedback"),
        " ",
        visibleText(call.feedback),
      ),
    );
  if (call?.reason && status !== "done") body.push(el("div", { class: "tool-note reason" }, visibleText(call.reason)));
  const output = status === "running" || !call ? (item.output ?? "") : call.output || item.output || "";
  if (output) {
    const key = `m:${item.id}:output`;
    body.push(
      el(
        "details",
        {
          class: "tool-output",
          open: ctx.isOpen(key, status === "running" && tool === "execute_command"),
          "data-details-key": key,
        },
        el("summary", {}, call?.outputTruncated ? "Output (shortened)" : "Output"),
        el("pre", { class: "output" }, visibleText(output)),
      ),
    );
  }
  return el(
    "div",
    {
      class: `message tool-row status-${status}`,
      "data-message-id": item.id,
      "data-tool": tool,
      "data-status": status,
    },
    el("div", { class: "tool-head" }, head),
    body.length > 0 ? el("div", { class: "tool-body" }, body) : undefined,
  );
}

function legacyToolRow(item: ChatToolItem, ctx: RowContext): HTMLElement {
  const status: ToolCallStatusName = item.ok === undefined ? "running" : item.ok ? "done" : "failed";
  const key = `t:${item.toolCallId}:output`;
  return el(
    "div",
    { class: `message tool-row status-${status}`, "data-tool": item.tool, "data-status": status },
    el(
      "div",
      { class: "tool-head" },
      el("span", { class: "tool-label" }, TOOL_LABELS[item.tool] ?? item.tool),
      el("span", { class: "tool-summary" }, visibleText(item.summary)),
      el("span", { class: `tool-status status-${status}` }, STATUS_WORDS[status]),
    ),
    item.output || item.result
      ? el(
          "details",
          { class: "tool-output", open: ctx.isOpen(key, false), "data-details-key": key },
          el("summary", {}, "Output"),
          el("pre", { class: "output" }, visibleText(item.output || item.result)),
        )
      : undefined,
  );
}

/** The checkpoint a message's marker stands for (the baseline belongs to the task's first message). */
export function checkpointFor(item: ChatMessageItem, state: ChatState): ChatCheckpoint | undefined {
  const firstUser = state.items.find((i): i is ChatMessageItem => i.type === "message" && i.role === "user");
  if (firstUser && firstUser.id === item.id && !item.checkpointId) {
    const baseline = state.checkpoints.find((c) => c.kind === "CHECKPOINT_KIND_BASELINE");
    if (baseline) return baseline;
  }
  const byId = item.checkpointId ? state.checkpoints.find((c) => c.id === item.checkpointId) : undefined;
  if (byId) return byId;
  const byMessage = [...state.checkpoints].reverse().find((c) => c.messageId === item.id);
  if (byMessage) return byMessage;
  return item.checkpointId
    ? { id: item.checkpointId, kind: "", messageId: item.id, hasFiles: true, restored: false }
    : undefined;
}

function checkpointMarker(checkpoint: ChatCheckpoint, item: ChatMessageItem, ctx: RowContext): HTMLElement {
  // Named by the step they follow: a screen reader's list of buttons says which checkpoint each is.
  const names = checkpointButtonNames(checkpoint, item);
  const compaction = checkpoint.kind === "CHECKPOINT_KIND_COMPACTION";
  const label = compaction ? "Compaction checkpoint" : checkpoint.restored ? "Checkpoint (restored)" : "Checkpoint";
  return el(
    "div",
    { class: "checkpoint", "data-checkpoint-id": checkpoint.id },
    el("span", { class: "checkpoint-label" }, label),
    el(
      "span",
      { class: "checkpoint-actions" },
      checkpoint.hasFiles && !compaction
        ? button("Compare", () => ctx.post({ type: "compare", checkpointId: checkpoint.id }), "link", {
            "data-action": "compare",
            "aria-label": names.compare,
            title: names.compare,
          })
        : undefined,
      button("Restore", () => ctx.post({ type: "restore", checkpointId: checkpoint.id }), "link", {
        "data-action": "restore",
        "aria-label": names.restore,
        title: names.restore,
      }),
    ),
  );
}
