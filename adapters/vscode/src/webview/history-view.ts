import type { HistoryRow, WebviewAction } from "../chat/chat-state.js";
import { button, compactNumber, el, visibleText } from "./dom.js";
import { relativeTime } from "./messages-view.js";

/**
 * Task history inside the chat, as in Cline: search, open, favourite, and delete after a
 * confirmation in the row itself; empty states that say what to do.
 */
export class HistoryView {
  private rows: HistoryRow[] = [];
  private query = "";
  private confirming: string | undefined;
  private loaded = false;
  private readonly search: HTMLInputElement;
  private readonly list = el("div", { class: "history-list", role: "list" });
  private searchTimer: ReturnType<typeof setTimeout> | undefined;

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
    this.loaded = true;
    this.query = query;
    this.rows = rows;
    if (this.confirming && !rows.some((r) => r.id === this.confirming)) this.confirming = undefined;
    this.render();
  }

  private render(): void {
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
          title: "Open this task",
          onclick: () => this.post({ type: "openTask", taskId: row.id }),
        },
        el("span", { class: "history-title" }, visibleText(row.title || "(untitled task)")),
        el("span", { class: "history-meta" }, meta),
      ),
      confirming
        ? el(
            "span",
            { class: "row confirm" },
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
              "aria-pressed": String(row.favorite),
              "data-action": "favorite",
            }),
            button(
              "Delete",
              () => {
                this.confirming = row.id;
                this.render();
              },
              "secondary",
              { title: "Delete this task", "data-action": "delete" },
            ),
          ),
    );
  }
}
