import type { AutoApprovalView } from "../chat/chat-state.js";
import { button, el } from "./dom.js";

const CHOICES: { key: Exclude<keyof AutoApprovalView, "enabled" | "maxRequests">; label: string; short: string }[] = [
  { key: "readFiles", label: "Read files", short: "Read" },
  { key: "editFiles", label: "Edit files", short: "Edit" },
  { key: "executeSafeCommands", label: "Run safe commands", short: "Safe commands" },
  { key: "executeAllCommands", label: "Run all commands", short: "All commands" },
  { key: "useMcp", label: "Use MCP tools", short: "MCP" },
];

/**
 * The composer's auto-approval switches: a toggle showing what is allowed, and the panel it opens
 * (the kinds of actions, the number of requests in a row). Its elements are made once and only
 * updated: the chat is drawn again at every streamed word, and a control drawn anew would lose
 * what the person is typing in it, its focus and its caret. A value the person is editing is
 * left alone until they commit it (a change) or leave the field; closing the panel drops it.
 */
export class AutoApprovalPanel {
  private readonly summary = el("strong");
  private readonly arrow = document.createTextNode(" ▸");
  private readonly toggle: HTMLButtonElement;
  private readonly panel: HTMLDivElement;
  private readonly enabled: HTMLInputElement;
  private readonly kinds = new Map<string, HTMLInputElement>();
  private readonly maxRequests: HTMLInputElement;
  /** The max-requests value last drawn: the field holds an edit of the person's when it differs. */
  private drawnMax = "";
  private open = false;

  constructor(
    private readonly root: HTMLElement,
    private readonly set: (patch: Partial<AutoApprovalView>) => void,
  ) {
    this.toggle = button(
      el("span", {}, "Auto-approve: ", this.summary, this.arrow),
      () => this.setOpen(!this.open),
      "link",
      { "aria-expanded": "false", "data-action": "auto-approve-toggle" },
    );
    this.enabled = this.checkbox("enabled", (v) => this.set({ enabled: v }));
    for (const c of CHOICES)
      this.kinds.set(
        c.key,
        this.checkbox(c.key, (v) => this.set({ [c.key]: v, ...(v ? { enabled: true } : {}) })),
      );
    this.maxRequests = el("input", {
      type: "number",
      min: "1",
      max: "10000",
      class: "max-requests",
      "aria-label": "Requests in a row",
      "data-setting": "maxRequests",
    });
    this.maxRequests.addEventListener("change", () => {
      const n = Number(this.maxRequests.value);
      if (Number.isInteger(n) && n >= 1 && n <= 10_000) this.set({ maxRequests: n });
    });
    this.panel = el(
      "div",
      { class: "auto-approval-panel" },
      el("label", { class: "check" }, this.enabled, " ", "Let Dline act without asking for:"),
      el(
        "div",
        { class: "choices" },
        CHOICES.map((c) => el("label", { class: "check" }, this.kinds.get(c.key), " ", c.label)),
      ),
      el("label", { class: "check" }, "Ask again after ", this.maxRequests, " requests in a row"),
    );
    // Escape inside the panel closes it, and the focus goes back to its toggle.
    this.root.addEventListener("keydown", (e) => {
      if (e.key !== "Escape" || !this.open) return;
      e.preventDefault();
      this.close(true);
    });
    this.root.replaceChildren(this.toggle);
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** Shows the settings as they are now, leaving alone a value the person is typing. */
  render(auto: AutoApprovalView): void {
    const on = CHOICES.filter((c) => auto[c.key]);
    this.summary.textContent = !auto.enabled || on.length === 0 ? "off" : on.map((c) => c.short).join(", ");
    this.enabled.checked = auto.enabled;
    for (const c of CHOICES) this.kinds.get(c.key)!.checked = auto[c.key];
    const max = String(auto.maxRequests);
    const editing = document.activeElement === this.maxRequests && this.maxRequests.value !== this.drawnMax;
    if (!editing && this.maxRequests.value !== max) this.maxRequests.value = max;
    this.drawnMax = max;
  }

  /** Closes the panel; the focus goes to its toggle when it was inside. */
  close(focusToggle: boolean): void {
    this.setOpen(false);
    if (focusToggle) this.toggle.focus();
  }

  private setOpen(open: boolean): void {
    this.open = open;
    // A number typed and not committed (closed with Escape) is dropped: the field shows the setting.
    if (!open) this.maxRequests.value = this.drawnMax;
    this.arrow.textContent = open ? " ▾" : " ▸";
    this.toggle.setAttribute("aria-expanded", String(open));
    if (open) this.root.append(this.panel);
    else this.panel.remove();
  }

  private checkbox(key: string, onChange: (checked: boolean) => void): HTMLInputElement {
    const box = el("input", { type: "checkbox", "data-setting": key });
    box.addEventListener("change", () => onChange(box.checked));
    return box;
  }
}
