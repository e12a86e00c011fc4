import type { ChatMessageItem, ChatState, HistoryRow, WebviewAction } from "../chat/chat-state.js";
import { button, el, visibleText } from "./dom.js";
import { itemKey, itemSignature, renderItem, type RowContext } from "./rows.js";

interface Cached {
  signature: string;
  nodes: Node[];
}

/**
 * The conversation: one cached set of nodes per item, redrawn only when the item changed (a
 * streamed answer redraws its own Markdown, not the whole chat), and only the nodes that changed
 * are put in the page (the others stay where they are: a screen reader's live region hears what
 * is new, not the whole conversation again at each streamed word). Kept scrolled to the bottom
 * while the person is there, also when the panels below it grow; scrolled up, it stays where
 * the person reads, and "Latest" takes them back down. With no task: the welcome (no model
 * yet) or the start screen.
 */
export class MessagesView {
  private readonly cache = new Map<string, Cached>();
  /** Open/closed choices the person made on <details> (reasoning, outputs), by key. */
  private readonly opened = new Map<string, boolean>();
  /** The message being edited, with its live edit box. */
  private editing: { messageId: string; box: HTMLElement } | undefined;
  private state: ChatState | undefined;
  private recent: HistoryRow[] = [];
  /** Whether the person is at the end of the conversation (as of their last scroll): it follows what comes. */
  private following = true;
  /** The conversation's scroll position as of the last scroll event or scroll to the end. */
  private lastTop = 0;
  private readonly jump: HTMLButtonElement;

  constructor(
    private readonly container: HTMLElement,
    private readonly markdown: (text: string) => string,
    private readonly post: (action: WebviewAction) => void,
    private readonly show: (screen: "history" | "model") => void,
    /** Puts text in the message input, for the person to send (Restore All does not send its edit). */
    private readonly keepInInput: (text: string) => void = () => {},
  ) {
    container.addEventListener(
      "toggle",
      (e) => {
        const target = e.target as HTMLElement;
        const key = target.getAttribute?.("data-details-key");
        if (key) this.opened.set(key, (target as HTMLDetailsElement).open);
      },
      true,
    );
    this.jump = button(
      "↓ Latest",
      () => {
        this.scrollToBottom();
        container.focus({ preventScroll: true });
      },
      "primary",
      { class: "jump-latest", "aria-label": "Jump to the latest message", title: "Jump to the latest message" },
    );
    this.jump.hidden = true;
    container.after(el("div", { class: "jump-latest-anchor" }, this.jump));
    if (!container.hasAttribute("tabindex")) container.setAttribute("tabindex", "-1");
    // Only a move up (the person scrolling, or the view clamped when rows shrank) leaves the end: a
    // scroll event can come a frame after the scroll to the end that caused it, when the rows have
    // grown meanwhile (a code block highlighted, a table laid out) without a render to follow them.
    container.addEventListener("scroll", () => {
      const top = container.scrollTop;
      if (top < this.lastTop || !this.following) this.following = this.atBottom();
      this.lastTop = top;
      if (this.following && !this.atBottom()) this.scrollToBottom();
      this.jump.hidden = this.following;
    });
    // The approval panel, the composer or the window changed the conversation's height: still at
    // the end if the person was there.
    new ResizeObserver(() => {
      if (this.following) this.scrollToBottom();
      else this.jump.hidden = this.atBottom();
    }).observe(container);
    // Copy buttons of code blocks (rendered Markdown has no listeners of its own).
    container.addEventListener("click", (e) => {
      const target = e.target as HTMLElement;
      if (!target.classList.contains("copy-code")) return;
      e.stopPropagation();
      const code = target.closest("pre")?.querySelector("code")?.textContent ?? "";
      this.post({ type: "copy", text: code });
      target.textContent = "Copied";
      setTimeout(() => (target.textContent = "Copy"), 1500);
    });
  }

  setRecent(rows: HistoryRow[]): void {
    this.recent = rows;
    if (this.state && !this.state.taskId) this.render(this.state);
  }

  /**
   * Restore All of `messageId` ended: done, it rewound and restored the files without sending the
   * new text, which waits in the input instead of going with the edit box; declined at its
   * question, nothing changed and the edit box stays as it was.
   */
  restoreAllDone(messageId: string, text: string, restored: boolean): void {
    if (!restored) return;
    this.keepInInput(text);
    if (this.editing?.messageId === messageId) this.editing = undefined;
    if (this.state) this.render(this.state);
  }

  render(state: ChatState): void {
    this.state = state;
    if (this.editing && !state.items.some((i) => i.type === "message" && i.id === this.editing!.messageId))
      this.editing = undefined;
    const c = this.container;
    const nearBottom = this.followsEnd();
    const ctx: RowContext = {
      state,
      markdown: this.markdown,
      post: this.post,
      edit: (item) => this.startEdit(item),
      isOpen: (key, fallback) => this.opened.get(key) ?? fallback,
    };
    const nodes: Node[] = [];
    const seen = new Set<string>();
    state.items.forEach((item, index) => {
      const key = itemKey(item, index);
      seen.add(key);
      if (this.editing && item.type === "message" && item.id === this.editing.messageId) {
        nodes.push(this.editing.box);
        return;
      }
      const signature = itemSignature(item, state);
      let cached = this.cache.get(key);
      if (!cached || cached.signature !== signature) {
        cached = { signature, nodes: renderItem(item, ctx) };
        this.cache.set(key, cached);
      }
      nodes.push(...cached.nodes);
    });
    for (const key of [...this.cache.keys()]) if (!seen.has(key)) this.cache.delete(key);
    if (nodes.length === 0)
      nodes.push(
        !state.taskId
          ? this.startScreen(state)
          : state.status === "none"
            ? el("div", { class: "empty" }, "Loading the task…")
            : // Loaded, and empty: rewound to before its first message.
              el("div", { class: "empty" }, "No messages: what you send next continues the task."),
      );
    place(c, nodes);
    if (nearBottom) this.scrollToBottom();
    else this.jump.hidden = this.atBottom();
  }

  /**
   * Whether what comes next is followed: the person was at the end as of their last scroll, or is
   * there now. Not only a measure: a panel below the conversation opening (the auto-approve
   * settings, the approval) shrinks it before its ResizeObserver runs, and a measure taken then
   * would leave the end behind while an answer streams.
   */
  followsEnd(): boolean {
    return this.following || this.atBottom();
  }

  /** The person is at (or near) the end of the conversation: it follows new rows; scrolled up, it stays. */
  atBottom(): boolean {
    const c = this.container;
    return c.scrollHeight - c.scrollTop - c.clientHeight < 48;
  }

  scrollToBottom(): void {
    this.container.scrollTop = this.container.scrollHeight;
    this.lastTop = this.container.scrollTop;
    this.following = true;
    this.jump.hidden = true;
  }

  private startScreen(state: ChatState): HTMLElement {
    const prefs = state.preferences;
    if (prefs.loaded && prefs.profiles.length === 0) {
      return el(
        "div",
        { class: "welcome", "data-screen": "welcome" },
        el("h2", {}, "Welcome to Dline"),
        el(
          "p",
          {},
          "Dline is a coding agent that works in your workspace: it reads files, proposes edits and commands, and makes them once you approve. Every step is saved as a checkpoint you can compare and restore.",
        ),
        el(
          "p",
          {},
          "To start, connect a model: Anthropic, or any OpenAI-compatible endpoint (OpenAI, OpenRouter, Ollama, LM Studio, vLLM).",
        ),
        button("Set Up a Model", () => this.show("model"), "primary", { "data-action": "set-up-model" }),
        el(
          "p",
          { class: "hint" },
          "Your key is kept by Dline on this machine (readable only by you), never in VS Code's settings.",
        ),
      );
    }
    return el(
      "div",
      { class: "start", "data-screen": "start" },
      el("h2", {}, "What should Dline do?"),
      el(
        "p",
        { class: "hint" },
        "Describe a task below. Dline asks before it changes a file or runs a command; switch to Plan to talk it through first.",
      ),
      this.recent.length > 0
        ? el(
            "section",
            { class: "recent" },
            el("h3", {}, "Recent tasks"),
            this.recent.slice(0, 3).map((t) =>
              el(
                "button",
                {
                  class: "recent-task",
                  type: "button",
                  "data-task-id": t.id,
                  onclick: () => this.post({ type: "openTask", taskId: t.id }),
                },
                el("span", { class: "recent-title" }, visibleText(t.title || "(untitled task)")),
                el("span", { class: "recent-meta" }, relativeTime(t.updatedAt)),
              ),
            ),
            button("View all history", () => this.show("history"), "link", { "data-action": "show-history" }),
          )
        : el("p", { class: "hint" }, "Your tasks will be listed here and under History."),
    );
  }

  private startEdit(item: ChatMessageItem): void {
    if (!this.state) return;
    const area = el("textarea", { rows: "3", class: "edit-input", "aria-label": "Edit message" });
    area.value = item.text;
    const restoreAllHidden = this.state.checkpointHeader?.state === "failed";
    const send = (mode: "chat" | "all") => {
      if (area.value === item.text) return; // unchanged: neither button restores anything
      this.post({ type: "editMessage", messageId: item.id, text: area.value, mode });
      // Restore All asks first (what it overwrites): the edit box stays until it is answered
      // (restoreAllDone).
      if (mode === "all") return;
      this.editing = undefined;
      if (this.state) this.render(this.state);
    };
    area.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        send("chat");
      } else if (e.key === "Escape") {
        this.editing = undefined;
        if (this.state) this.render(this.state);
      }
    });
    const box = el(
      "div",
      { class: "edit-box" },
      area,
      el(
        "div",
        { class: "row" },
        button("Restore Chat", () => send("chat")),
        restoreAllHidden ? undefined : button("Restore All", () => send("all"), "secondary"),
        button(
          "Cancel",
          () => {
            this.editing = undefined;
            if (this.state) this.render(this.state);
          },
          "secondary",
        ),
      ),
    );
    this.editing = { messageId: item.id, box };
    this.render(this.state);
    area.focus();
  }
}

/** Makes `nodes` the container's children, moving and removing only what differs. */
function place(container: HTMLElement, nodes: Node[]): void {
  const keep = new Set(nodes);
  let at = container.firstChild;
  for (const node of nodes) {
    while (at && !keep.has(at)) {
      const next = at.nextSibling;
      container.removeChild(at);
      at = next;
    }
    if (node === at) at = at.nextSibling;
    else container.insertBefore(node, at);
  }
  while (at) {
    const next = at.nextSibling;
    container.removeChild(at);
    at = next;
  }
}

export function relativeTime(ms: number): string {
  if (!ms) return "";
  const minutes = Math.round((Date.now() - ms) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  return new Date(ms).toLocaleDateString();
}
