// The Dline chat webview: draws the state the extension posts ({type:"state"}) and posts the
// person's actions back (see src/chat/chat-state.ts for both shapes). No framework: the state
// is small, and a redraw is cheap; the composer and an open edit box are kept across redraws.
(function () {
  const vscode = acquireVsCodeApi();
  const $ = (id) => document.getElementById(id);
  const header = $("header");
  const messages = $("messages");
  const askBox = $("ask");
  const input = $("input");
  let state = undefined;
  /** The message being edited: { messageId, original, box } (box is the live DOM node). */
  let editing = undefined;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (value !== undefined && value !== false) node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  const post = (message) => vscode.postMessage(message);
  const button = (label, onclick, cls, extra) => el("button", { class: cls || "", onclick, ...(extra || {}) }, label);

  function checkpointFor(item) {
    if (!state) return undefined;
    // The baseline (saved when the task starts) belongs to the first message of the task.
    const firstUser = state.items.find((i) => i.type === "message" && i.role === "user");
    if (firstUser && firstUser.id === item.id && !item.checkpointId) {
      const baseline = state.checkpoints.find((c) => c.kind === "CHECKPOINT_KIND_BASELINE");
      if (baseline) return baseline;
    }
    const byId = item.checkpointId ? state.checkpoints.find((c) => c.id === item.checkpointId) : undefined;
    if (byId) return byId;
    const byMessage = [...state.checkpoints].reverse().find((c) => c.messageId === item.id);
    if (byMessage) return byMessage;
    return item.checkpointId ? { id: item.checkpointId, kind: "", hasFiles: true, restored: false } : undefined;
  }

  function checkpointMarker(checkpoint) {
    const compaction = checkpoint.kind === "CHECKPOINT_KIND_COMPACTION";
    const label = compaction ? "Compaction checkpoint" : checkpoint.restored ? "Checkpoint (restored)" : "Checkpoint";
    return el(
      "div",
      { class: "checkpoint", "data-checkpoint-id": checkpoint.id },
      el("span", { class: "checkpoint-label" }, label),
      el(
        "span",
        { class: "checkpoint-actions" },
        checkpoint.hasFiles && !compaction ? button("Compare", () => post({ type: "compare", checkpointId: checkpoint.id }), "link", { "data-action": "compare" }) : undefined,
        button("Restore", () => post({ type: "restore", checkpointId: checkpoint.id }), "link", { "data-action": "restore" }),
      ),
    );
  }

  function startEdit(item) {
    const area = el("textarea", { rows: "3", class: "edit-input" });
    area.value = item.text;
    const restoreAllHidden = state.checkpointHeader && state.checkpointHeader.state === "failed";
    const send = (mode) => {
      if (area.value === item.text) return; // unchanged: neither button restores anything
      editing = undefined;
      post({ type: "editMessage", messageId: item.id, text: area.value, mode });
      render();
    };
    area.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        send("chat");
      } else if (e.key === "Escape") {
        editing = undefined;
        render();
      }
    });
    const box = el(
      "div",
      { class: "edit-box" },
      area,
      el("div", { class: "row" }, button("Restore Chat", () => send("chat")), restoreAllHidden ? undefined : button("Restore All", () => send("all"), "secondary")),
    );
    editing = { messageId: item.id, box };
    render();
    area.focus();
  }

  function renderMessage(item) {
    if (editing && editing.messageId === item.id) return editing.box;
    const body = el("div", { class: "text" }, item.text);
    const node = el("div", { class: `message ${item.role} kind-${item.kind}${item.partial ? " partial" : ""}`, "data-message-id": item.id });
    if (item.role === "user") {
      node.title = "Click to edit this message";
      node.addEventListener("click", () => startEdit(item));
    }
    if (item.kind === "completion") node.append(el("div", { class: "badge" }, "Task completed"));
    if (item.kind === "reasoning") node.append(el("div", { class: "badge" }, "Thinking"));
    if (item.role === "tool" || item.kind === "tool" || item.kind === "command") node.append(el("div", { class: "badge" }, item.tool || item.kind));
    node.append(body);
    if (item.toolCallId) {
      if (item.output) node.append(el("pre", { class: "output" }, item.output));
      node.append(el("div", { class: "tool-status" }, item.ok === undefined ? "running…" : item.ok ? "done" : "failed"));
    }
    if (item.kind === "completion" && state.status === "completed") {
      node.append(button("View Changes", () => post({ type: "viewChanges" }), "secondary", { "data-action": "view-changes" }));
    }
    return node;
  }

  function renderTool(item) {
    const status = item.ok === undefined ? "running" : item.ok ? "done" : "failed";
    return el(
      "details",
      { class: `tool ${status}`, open: item.ok === undefined ? true : undefined },
      el("summary", {}, el("span", { class: "badge" }, item.tool), " ", item.summary || "", el("span", { class: "tool-status" }, ` ${status}`)),
      item.output ? el("pre", { class: "output" }, item.output) : undefined,
      item.result && item.result !== item.output ? el("pre", { class: "result" }, item.result) : undefined,
    );
  }

  function renderHeader() {
    header.replaceChildren();
    if (state.core !== "running") {
      header.append(el("div", { class: `core ${state.core}` }, state.core === "failed" ? `Dline core stopped: ${state.coreMessage}` : `Dline core ${state.core}…`));
    }
    if (state.taskId) {
      header.append(el("div", { class: "title" }, state.title || "Task", el("span", { class: `status ${state.status}` }, state.status)));
      const u = state.usage;
      const cost = u.costUnknown ? (u.cost > 0 ? `$${u.cost.toFixed(4)} + unknown` : "cost unknown") : `$${u.cost.toFixed(4)}`;
      if (u.tokensIn || u.tokensOut) header.append(el("div", { class: "usage" }, `↑ ${u.tokensIn} ↓ ${u.tokensOut} · ${cost}`));
      if (state.notice) header.append(el("div", { class: "notice" }, state.notice));
    }
    const h = state.checkpointHeader;
    if (h) {
      header.append(
        el(
          "div",
          { class: `checkpoint-header ${h.state}` },
          el("span", {}, h.message),
          h.canRetry ? button("Retry Checkpoints", () => post({ type: "retryCheckpoints" }), "link") : undefined,
          h.canDisable ? button("Disable Checkpoints", () => post({ type: "disableCheckpoints" }), "link") : undefined,
        ),
      );
    }
  }

  function renderAsk() {
    askBox.replaceChildren();
    const ask = state.pendingAsk;
    if (!ask) return;
    const box = el("div", { class: `ask ${ask.kind}`, "data-ask-id": ask.askId }, el("div", { class: "summary" }, ask.summary));
    if (ask.kind === "tool" || ask.kind === "command") {
      if (ask.detail) box.append(el("details", {}, el("summary", {}, "Details"), el("pre", {}, ask.detail)));
      box.append(
        el(
          "div",
          { class: "row" },
          button(ask.kind === "command" ? "Run Command" : "Approve", () => post({ type: "respond", approve: true, text: "" }), "", { "data-action": "approve" }),
          button(
            "Reject",
            () => {
              // The feedback goes with the rejection once: the box is emptied.
              post({ type: "respond", approve: false, text: input.value.trim() });
              input.value = "";
              vscode.setState({ draft: "" });
            },
            "secondary",
            { "data-action": "reject" },
          ),
        ),
      );
    } else if (ask.kind === "followup") {
      box.append(el("div", { class: "row options" }, ask.options.map((o) => button(o, () => post({ type: "respond", approve: true, text: o }), "secondary"))));
    } else if (ask.kind === "resume") {
      box.append(el("div", { class: "row" }, button("Resume Task", () => post({ type: "resume" }))));
    }
    askBox.append(box);
  }

  function render() {
    if (!state) return;
    const nearBottom = messages.scrollHeight - messages.scrollTop - messages.clientHeight < 40;
    renderHeader();
    const nodes = [];
    for (const item of state.items) {
      if (item.type === "message") {
        nodes.push(renderMessage(item));
        const checkpoint = checkpointFor(item);
        if (checkpoint) nodes.push(checkpointMarker(checkpoint));
      } else if (item.type === "tool") nodes.push(renderTool(item));
      else if (item.type === "error") nodes.push(el("div", { class: "error" }, `${item.code}: ${item.message}`));
    }
    if (nodes.length === 0) nodes.push(el("div", { class: "empty" }, "Describe a task to start. Dline asks before it changes anything."));
    messages.replaceChildren(...nodes);
    if (nearBottom) messages.scrollTop = messages.scrollHeight;
    renderAsk();
    const running = state.status === "running" || state.status === "waiting";
    $("cancel").hidden = !running;
    $("resume").hidden = !(state.status === "interrupted" || state.status === "cancelled");
    input.placeholder = !state.taskId
      ? "Type a task…"
      : state.pendingAsk && state.pendingAsk.kind === "followup"
        ? "Type your answer…"
        : state.pendingAsk
          ? "Type feedback (declines the request)…"
          : "Type a message…";
  }

  let lastUnsent = 0;

  function submit() {
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    vscode.setState({ draft: "" });
    post(state && state.taskId ? { type: "send", text } : { type: "newTask", text });
  }

  $("send").addEventListener("click", submit);
  $("cancel").addEventListener("click", () => post({ type: "cancel" }));
  $("resume").addEventListener("click", () => post({ type: "resume" }));
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      submit();
    }
  });
  input.addEventListener("input", () => vscode.setState({ draft: input.value }));
  const saved = vscode.getState();
  if (saved && saved.draft) input.value = saved.draft;

  window.addEventListener("message", (event) => {
    const message = event.data;
    if (message && message.type === "state") {
      state = message.state;
      // Words the core refused come back to the input (unless something else was typed since).
      if (state.unsent && state.unsent.id !== lastUnsent) {
        lastUnsent = state.unsent.id;
        if (!input.value.trim()) {
          input.value = state.unsent.text;
          vscode.setState({ draft: input.value });
        }
      }
      if (editing && !state.items.some((i) => i.type === "message" && i.id === editing.messageId)) editing = undefined;
      render();
    }
  });
  post({ type: "ready" });
})();
