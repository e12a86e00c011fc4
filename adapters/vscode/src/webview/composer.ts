import type { ChatState } from "../chat/chat-state.js";
import { AutoApprovalPanel } from "./auto-approval.js";
import type { Bridge } from "./bridge.js";
import { button, el, visibleText } from "./dom.js";

const ADD_MODEL = "__add_model__";

/**
 * The bottom of the chat: a failure banner (with Configure Model for a missing model), Retry
 * or Resume for a task that stopped, quick auto-approval switches, the prompt, and the row of
 * Plan/Act, the model and Send / Cancel. The typed prompt is cleared only once the core took
 * it: a task refused for want of a model keeps it.
 */
export class Composer {
  readonly input: HTMLTextAreaElement;
  private readonly banner = el("div", { class: "banner-slot" });
  private readonly taskActions = el("div", { class: "task-actions" });
  private readonly autoApprovalRoot = el("div", { class: "auto-approval" });
  private readonly autoApproval: AutoApprovalPanel;
  private readonly modeToggle = el("div", { class: "mode-toggle", role: "group", "aria-label": "Mode" });
  private readonly modelSelect = el("select", {
    class: "model-select",
    "aria-label": "Model",
    title: "The model this task uses",
  });
  private readonly sendButton: HTMLButtonElement;
  private readonly cancelButton: HTMLButtonElement;
  private modelOptionsKey = "";
  private state: ChatState | undefined;
  private sending = false;

  constructor(
    root: HTMLElement,
    private readonly bridge: Bridge,
    private readonly showModelForm: () => void,
  ) {
    this.input = el("textarea", {
      id: "input",
      rows: "3",
      placeholder: "Type a task…",
      "aria-label": "Message to Dline",
    });
    this.sendButton = button("Send", () => void this.submit(), "primary", { id: "send", title: "Send (Enter)" });
    this.cancelButton = button("Cancel", () => this.bridge.post({ type: "cancel" }), "secondary", {
      id: "cancel",
      title: "Stop the running task",
    });
    this.input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        void this.submit();
      } else if (e.key === "Escape" && !e.isComposing && this.autoApproval.isOpen) {
        // The auto-approve panel open above the input: Escape closes it, the focus stays here.
        e.preventDefault();
        this.autoApproval.close(false);
      }
    });
    this.autoApproval = new AutoApprovalPanel(this.autoApprovalRoot, (patch) =>
      this.bridge.post({ type: "setAutoApproval", patch }),
    );
    this.input.addEventListener("input", () => this.bridge.save({ draft: this.input.value }));
    this.input.value = this.bridge.saved.draft ?? "";
    this.modelSelect.addEventListener("change", () => {
      const value = this.modelSelect.value;
      if (value === ADD_MODEL) {
        this.modelOptionsKey = ""; // put the selection back at the next draw
        if (this.state) this.render(this.state);
        this.showModelForm();
        return;
      }
      this.bridge.post({ type: "selectProfile", profileId: value });
    });
    root.replaceChildren(
      this.banner,
      this.taskActions,
      this.autoApprovalRoot,
      this.input,
      el(
        "div",
        { class: "controls" },
        this.modeToggle,
        this.modelSelect,
        el("span", { class: "spacer" }),
        this.cancelButton,
        this.sendButton,
      ),
    );
  }

  render(state: ChatState): void {
    this.state = state;
    this.renderBanner(state);
    this.renderTaskActions(state);
    this.autoApproval.render(state.preferences.autoApproval);
    this.renderMode(state.preferences.mode);
    this.renderModels(state);
    const running = state.status === "running" || state.status === "waiting";
    this.cancelButton.hidden = !running;
    const ask = state.pendingAsk;
    this.input.placeholder = !state.taskId
      ? "Type a task…"
      : ask?.kind === "followup"
        ? "Type your answer…"
        : ask && (ask.kind === "tool" || ask.kind === "command")
          ? "Type feedback to reject with it…"
          : running
            ? "Type a message (it is read at the next step)…"
            : "Type a message to continue…";
  }

  /** Puts text in the input for the person to send, unless they are typing something else there. */
  prefill(text: string): void {
    if (this.input.value.trim() && this.input.value !== text) return;
    this.input.value = text;
    this.input.focus();
  }

  /** Sends the prompt: a new task, a message, an answer, or feedback with a rejection. */
  async submit(): Promise<void> {
    const text = this.input.value.trim();
    if (!text || this.sending || !this.state) return;
    const ask = this.state.pendingAsk;
    if (ask && (ask.kind === "tool" || ask.kind === "command")) {
      await this.respond(false);
      return;
    }
    this.sending = true;
    this.sendButton.disabled = true;
    try {
      const outcome = await this.bridge.request(this.state.taskId ? { type: "send", text } : { type: "newTask", text });
      if (outcome.ok) this.clearIf(text);
    } finally {
      this.sending = false;
      this.sendButton.disabled = false;
    }
  }

  /** Approves, or rejects with what is typed as feedback (cleared once it was sent). */
  async respond(approve: boolean): Promise<void> {
    const text = approve ? "" : this.input.value.trim();
    const outcome = await this.bridge.request({ type: "respond", approve, text });
    if (outcome.ok && text) this.clearIf(text);
  }

  async answer(option: string): Promise<void> {
    await this.bridge.request({ type: "respond", approve: true, text: option });
  }

  private clearIf(sent: string): void {
    // Only what was sent: text typed meanwhile stays.
    if (this.input.value.trim() === sent) this.input.value = "";
    this.bridge.save({ draft: this.input.value });
  }

  private renderBanner(state: ChatState): void {
    const b = state.banner;
    if (!b) {
      this.banner.replaceChildren();
      return;
    }
    const needsModel = b.reason === "no_model" || b.reason === "no_default_profile" || b.reason === "profile_not_found";
    this.banner.replaceChildren(
      el(
        "div",
        { class: "banner error", role: "alert", "data-reason": b.reason },
        el("span", { class: "banner-text" }, visibleText(b.message)),
        el(
          "span",
          { class: "row" },
          needsModel
            ? button(
                b.reason === "no_default_profile" ? "Choose a Model" : "Configure Model",
                this.showModelForm,
                "primary",
                { "data-action": "configure-model" },
              )
            : undefined,
          button("Dismiss", () => this.bridge.post({ type: "dismissBanner" }), "secondary", {
            "data-action": "dismiss-banner",
          }),
        ),
      ),
    );
  }

  private renderTaskActions(state: ChatState): void {
    const parts: Node[] = [];
    if (state.taskId && state.status === "failed") {
      parts.push(
        el(
          "div",
          { class: "task-ended failed" },
          el("span", {}, ...because("The task failed", state.statusReason)),
          el(
            "span",
            { class: "row" },
            button("Retry", () => this.bridge.post({ type: "retry" }), "primary", { "data-action": "retry" }),
            el("span", { class: "hint" }, "Choose another model below to retry with it."),
          ),
        ),
      );
    } else if (
      state.taskId &&
      (state.status === "interrupted" || state.status === "cancelled") &&
      !state.pendingAsk &&
      // Rewound to before its first message there is nothing to resume: the chat says what is
      // sent next continues the task (Resume would call the model without the person's words).
      state.items.length > 0
    ) {
      parts.push(
        el(
          "div",
          { class: "task-ended" },
          el(
            "span",
            {},
            ...because(
              state.status === "interrupted" ? "The task was interrupted" : "The task was cancelled",
              // "cancelled" again says nothing more.
              state.statusReason.toLowerCase() === state.status ? "" : state.statusReason,
            ),
          ),
          button("Resume", () => this.bridge.post({ type: "resume" }), "secondary", {
            id: "resume",
            "data-action": "resume",
          }),
        ),
      );
    }
    this.taskActions.replaceChildren(...parts);
  }

  private renderMode(mode: "act" | "plan"): void {
    const choice = (value: "plan" | "act", label: string, title: string) =>
      button(
        label,
        () => this.bridge.post({ type: "setMode", mode: value }),
        mode === value ? "primary" : "secondary",
        {
          "aria-pressed": String(mode === value),
          title,
          "data-mode": value,
        },
      );
    this.modeToggle.replaceChildren(
      choice("plan", "Plan", "Plan: Dline explores and discusses, and changes nothing"),
      choice("act", "Act", "Act: Dline makes changes (asking first unless auto-approved)"),
    );
  }

  private renderModels(state: ChatState): void {
    const prefs = state.preferences;
    const selected =
      (state.taskId && prefs.taskProfileId) ||
      prefs.defaultProfileId ||
      (prefs.profiles.length === 1 ? (prefs.profiles[0]?.id ?? "") : "");
    const key = JSON.stringify([prefs.profiles.map((p) => [p.id, p.name, p.model]), selected]);
    this.modelSelect.hidden = !prefs.loaded;
    if (key === this.modelOptionsKey) return;
    this.modelOptionsKey = key;
    const options = prefs.profiles.map((p) => {
      const option = el(
        "option",
        { value: p.id },
        `${p.name || p.id} · ${p.model}${p.fromEnvironment ? " (environment)" : ""}`,
      );
      option.selected = p.id === selected;
      return option;
    });
    if (!selected) {
      const none = el("option", { value: "" }, prefs.profiles.length === 0 ? "No model set up" : "Choose a model");
      none.selected = true;
      none.disabled = true;
      options.unshift(none);
    }
    options.push(el("option", { value: ADD_MODEL }, "Add a model…"));
    this.modelSelect.replaceChildren(...options);
  }
}

/** "What happened: why." (the core's reason, as it gave it), or "What happened." without one. */
function because(what: string, reason: string): (string | DocumentFragment)[] {
  if (!reason) return [`${what}.`];
  return [what, ": ", visibleText(reason), /[.!?]$/.test(reason) ? "" : "."];
}
