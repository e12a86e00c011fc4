import type { ChatState, WebviewAction } from "../chat/chat-state.js";
import { visibleLine } from "../text/visible-text.js";
import { button, compactNumber, el, visibleText, type Child } from "./dom.js";

const STATUS_LABELS: Record<ChatState["status"], string> = {
  none: "",
  running: "Running",
  waiting: "Waiting for you",
  completed: "Completed",
  cancelled: "Cancelled",
  interrupted: "Interrupted",
  failed: "Failed",
  damaged: "Damaged",
};

const STOPPED = new Set<ChatState["status"]>(["interrupted", "cancelled", "failed"]);

/**
 * The top of the chat: the core's state when it is not running, then the open task (title,
 * status, tokens, cost, how full its context is), the model's status line (retries, waits),
 * the checkpoints' progress while they initialize, and their limits.
 */
export function renderHeader(header: HTMLElement, state: ChatState, post: (action: WebviewAction) => void): void {
  const parts: Child[] = [];
  if (state.core !== "running") {
    parts.push(
      el(
        "div",
        { class: `core-status ${state.core}`, role: state.core === "failed" ? "alert" : "status" },
        el(
          "span",
          {},
          state.core === "failed"
            ? `The Dline core is not running: ${state.coreMessage}`
            : state.core === "restarting"
              ? "The Dline core is restarting…"
              : "Starting the Dline core…",
        ),
        state.core === "failed"
          ? el(
              "span",
              { class: "row" },
              button("Open Settings", () => post({ type: "core", action: "openSettings" }), "secondary", {
                "data-action": "core-open-settings",
              }),
              button("Show Log", () => post({ type: "core", action: "showLog" }), "secondary"),
              button("Restart Core", () => post({ type: "core", action: "restart" }), "secondary"),
            )
          : undefined,
      ),
    );
  }
  if (state.taskId) {
    parts.push(
      el(
        "div",
        { class: "task-title" },
        el("span", { class: "title-text", title: state.title }, visibleText(state.title || "Task")),
        el(
          "span",
          {
            class: `status-pill status-${state.status}`,
            "data-status": state.status,
            // Why it stopped (a restore, a stopped core), for a status the footer explains.
            ...(state.statusReason && STOPPED.has(state.status) ? { title: visibleLine(state.statusReason) } : {}),
          },
          STATUS_LABELS[state.status],
        ),
      ),
    );
    const u = state.usage;
    const cost = u.costUnknown
      ? u.cost > 0
        ? `$${u.cost.toFixed(4)} + unknown`
        : "cost unknown"
      : `$${u.cost.toFixed(4)}`;
    const stats: Child[] = [];
    if (u.tokensIn || u.tokensOut)
      stats.push(
        el(
          "span",
          { class: "tokens", title: "Tokens sent and received" },
          `↑ ${compactNumber(u.tokensIn)} ↓ ${compactNumber(u.tokensOut)}`,
        ),
      );
    if (u.tokensIn || u.tokensOut || u.cost)
      stats.push(el("span", { class: "cost", title: "Cost of the task's requests" }, cost));
    if (stats.length > 0) parts.push(el("div", { class: "task-stats" }, stats));
    if (state.context) parts.push(contextBar(state.context.tokens, state.context.window));
    if (state.notice) parts.push(el("div", { class: "notice", role: "status" }, visibleText(state.notice)));
  }
  const progress = state.checkpointProgress;
  if (progress) {
    const counts =
      progress.phase === "staging" && progress.filesTotal > 0
        ? `: taking in ${progress.filesDone.toLocaleString("en")} of ${progress.filesTotal.toLocaleString("en")} files`
        : progress.phase === "scanning"
          ? ": scanning the workspace"
          : "";
    parts.push(
      el(
        "div",
        { class: "checkpoint-progress", role: "status" },
        el("span", { class: "spinner", "aria-hidden": "true" }),
        `${progress.message.replace(/\.$/, "")}${counts}`,
        progress.phase === "staging" && progress.filesTotal > 0
          ? el("progress", { max: String(progress.filesTotal), value: String(progress.filesDone) })
          : undefined,
      ),
    );
  }
  const h = state.checkpointHeader;
  if (h) {
    parts.push(
      el(
        "div",
        { class: `checkpoint-header ${h.state}` },
        el("span", {}, h.message),
        h.canRetry ? button("Retry Checkpoints", () => post({ type: "retryCheckpoints" }), "link") : undefined,
        h.canDisable ? button("Disable Checkpoints", () => post({ type: "disableCheckpoints" }), "link") : undefined,
      ),
    );
  }
  header.replaceChildren(...parts.flatMap((p) => (p ? [p as Node] : [])));
}

function contextBar(tokens: number, window: number): HTMLElement {
  const ratio = Math.min(1, tokens / window);
  const level = ratio > 0.9 ? "full" : ratio > 0.7 ? "high" : "ok";
  const fill = el("span", { class: "context-fill" });
  // Through the CSSOM: the webview's content security policy refuses inline style attributes.
  fill.style.width = `${(ratio * 100).toFixed(1)}%`;
  return el(
    "div",
    {
      class: "context-bar",
      title: `The last request used ${tokens.toLocaleString("en")} of the model's ${window.toLocaleString("en")} tokens of context`,
    },
    el("span", { class: "context-label" }, "Context"),
    el(
      "span",
      {
        class: `context-track ${level}`,
        role: "meter",
        "aria-valuemin": "0",
        "aria-valuemax": String(window),
        "aria-valuenow": String(tokens),
      },
      fill,
    ),
    el("span", { class: "context-figures" }, `${compactNumber(tokens)} / ${compactNumber(window)}`),
  );
}
