import type { HistoryRow, WebviewAction } from "../chat/chat-state.js";
import { button, compactNumber, el, visibleText } from "./dom.js";
import { relativeTime } from "./messages-view.js";

/**
 * Task history inside the chat, as in Cline: search, open, favourite, and delete after a
 * confirmation in the row itself; empty states that say what to do. The list is drawn anew at
 * each change, and the keyboard focus stays where the person is: on the same button of the same
 * row, on Keep when a delete asks for confirmation, on the next row once one is deleted.
 */
export class HistoryView {
  private rows: HistoryRow[] = [];
  private query = "";
  private confirming: string | undefined;
  private loaded = false;
  private readonly search: HTMLInputElement;
  private readonly list = el("div", { class: "history-list", role: "list" });
  private searchTimer: ReturnType<typeof setTimeout> | undefined;
  /** The button to focus at the next draw (data-action), in the row of that task. */
  private focusNext: { taskId: string; action: string } | undefined;

  constructor(
    root: HTMLElement,
    private readonly post: (action: WebviewAction) => void,
    private readonly close: () => void,
  ) {
    this.search = el("input", {
      type: "search",
      class: "history-search",
      placeholder: "Search tasks",
      "aria-label": "Search tasks",
    });
    this.search.addEventListener("input", () => {
      if (this.searchTimer) clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.refresh(), 200);
    });
    // Escape answers a delete's question with Keep, else goes back to the chat.
    root.addEventListener("keydown", (e) => {
      if (e.key !== "Escape" || e.defaultPrevented) return;
      // In the search box with words in it, Escape clears them (the box's own behaviour).
      if (e.target === this.search && this.search.value) return;
      e.preventDefault();
      if (this.confirming) {
        this.focusNext = { taskId: this.confirming, action: "delete" };
        this.confirming = undefined;
        this.render();
      } else this.close();
    });
    root.replaceChildren(
      el(
        "div",
        { class: "screen-head" },
        el("h2", {}, "History"),
        el("span", { class: "spacer" }),
        button("Delete All…", () => this.post({ type: "deleteAllHistory" }), "secondary", {
          "data-action": "delete-all",
        }),
        button("Done", this.close, "primary", { "data-action": "close-history" }),
      ),
      this.search,
      this.list,
    );
  }

  /** Asks the extension for the list (it answers with a `history` update). */
  refresh(): void {
    this.post({ type: "listHistory", query: this.search.value.trim() });
  }

  focus(): void {
    this.search.focus();
  }

  show(query: string, rows: HistoryRow[]): void {
    // A list for another search than the one in the box (sent before the person typed on): the
    // answer to the box's own search follows.
    if (this.loaded && query !== this.search.value.trim()) return;
    this.loaded = true;
    this.query = query;
    this.rows = rows;
    if (this.confirming && !rows.some((r) => r.id === this.confirming)) this.confirming = undefined;
    this.render();
  }

  private render(): void {
    const focus = this.focusToKeep();
    this.draw();
    focus?.focus();
  }

  /** The element that should have the focus after the list is drawn again (the one with it now, or its successor). */
  private focusToKeep(): { focus(): void } | undefined {
    const active = document.activeElement as HTMLElement | null;
    const wanted = this.focusNext;
    this.focusNext = undefined;
    if (!wanted && (!active || !this.list.contains(active))) return undefined;
    const row = active?.closest<HTMLElement>("[data-task-id]");
    const taskId = wanted?.taskId ?? row?.dataset.taskId ?? "";
    const action = wanted?.action ?? active?.dataset.action ?? "open";
    const index = this.rows.findIndex((r) => r.id === taskId);
    const rowsBefore = [...this.list.querySelectorAll<HTMLElement>("[data-task-id]")].map((r) => r.dataset.taskId);
    const position = Math.max(0, rowsBefore.indexOf(taskId));
    return {
      focus: () => {
        const find = (id: string, name: string) =>
          this.list.querySelector<HTMLElement>(`[data-task-id="${CSS.escape(id)}"] [data-action="${name}"]`);
        if (index >= 0) {
          (find(taskId, action) ?? find(taskId, "open"))?.focus();
          return;
        }
        // The row went (deleted): the row now in its place, or the one before, or the search.
        const next = this.rows[Math.min(position, this.rows.length - 1)];
        const target = next ? find(next.id, "open") : null;
        if (target) target.focus();
        else this.search.focus();
      },
    };
  }

  private draw(): void {
    if (!this.loaded) {
      this.list.replaceChildren(el("div", { class: "empty" }, "Loading…"));
      return;
    }
    if (this.rows.length === 0) {
      this.list.replaceChildren(
        el(
          "div",
          { class: "empty", "data-empty": this.query ? "search" : "history" },
          this.query
            ? `No task matches “${this.query}”. Try other words, or clear the search.`
            : "No tasks yet. Describe a task in the chat to start one; tasks from Dline's other editors and the CLI show up here too.",
        ),
      );
      return;
    }
    this.list.replaceChildren(...this.rows.map((row) => this.renderRow(row)));
  }

  private renderRow(row: HistoryRow): HTMLElement {
    const cost = row.costUnknown ? "cost unknown" : `$${row.cost.toFixed(4)}`;
    const meta = [
      relativeTime(row.updatedAt),
      row.status !== "completed" && row.status !== "none" ? row.status : "",
      `↑${compactNumber(row.tokensIn)} ↓${compactNumber(row.tokensOut)}`,
      cost,
    ]
      .filter(Boolean)
      .join(" · ");
    const confirming = this.confirming === row.id;
    return el(
      "div",
      { class: `history-row${confirming ? " confirming" : ""}`, role: "listitem", "data-task-id": row.id },
      el(
        "button",
        {
          class: "history-open",
          type: "button",
          "data-action": "open",
          title: "Open this task",
          onclick: () => this.post({ type: "openTask", taskId: row.id }),
        },
        el("span", { class: "history-title" }, visibleText(row.title || "(untitled task)")),
        el("span", { class: "history-meta" }, meta),
      ),
      confirming
        ? el(
            "span",
            { class: "row confirm", role: "group", "aria-label": "Delete this task and its checkpoints?" },
            el("span", {}, "Delete this task and its checkpoints?"),
            button(
              "Delete",
              () => {
                this.confirming = undefined;
                this.post({ type: "deleteTask", taskId: row.id });
              },
              "primary",
              { "data-action": "confirm-delete" },
            ),
            button(
              "Keep",
              () => {
                this.confirming = undefined;
                this.focusNext = { taskId: row.id, action: "delete" };
                this.render();
              },
              "secondary",
              { "data-action": "cancel-delete" },
            ),
          )
        : el(
            "span",
            { class: "row history-actions" },
            button(row.favorite ? "★" : "☆", () => this.post({ type: "toggleFavorite", taskId: row.id }), "icon", {
              title: row.favorite ? "Remove from favourites" : "Add to favourites",
              // Read as "Favourite, toggle button, pressed", not as the star character.
              "aria-label": "Favourite",
              "aria-pressed": String(row.favorite),
              "data-action": "favorite",
            }),
            button(
              "Delete",
              () => {
                this.confirming = row.id;
                // The safe answer has the focus: a second Enter keeps the task.
                this.focusNext = { taskId: row.id, action: "cancel-delete" };
                this.render();
              },
              "secondary",
              { title: "Delete this task", "data-action": "delete" },
            ),
          ),
    );
  }
}
