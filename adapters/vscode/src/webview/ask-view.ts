import type { ChatAsk, ChatFileEdit, ChatState, WebviewAction } from "../chat/chat-state.js";
import { isLeftOut, leftOutNote, lineCount, writtenText } from "../chat/left-out-edit.js";
import { button, el, visibleText, type Child } from "./dom.js";

export interface AskActions {
  post: (action: WebviewAction) => void;
  approve: () => void;
  /** Rejects; the text typed in the composer goes with it as feedback (once). */
  reject: () => void;
  answer: (option: string) => void;
}

/**
 * What the task waits for, above the composer: an approval (what exactly would change or run,
 * with Approve / Reject), a question's options, or Resume. It scrolls on its own, so the
 * conversation above it always keeps most of the view.
 */
export function renderAsk(box: HTMLElement, state: ChatState, actions: AskActions): void {
  const ask = state.pendingAsk;
  if (!ask) {
    box.replaceChildren();
    return;
  }
  box.replaceChildren(
    el(
      "div",
      {
        class: `ask ask-${ask.kind}`,
        "data-ask-id": ask.askId,
        role: "region",
        "aria-label": "Dline is waiting for you",
      },
      askBody(ask, actions),
    ),
  );
}

function askBody(ask: ChatAsk, actions: AskActions): Child[] {
  if (ask.kind === "tool" || ask.kind === "command") {
    const parts: Child[] = [];
    // Asked again (the file changed while the question waited): why, before the same card.
    if (ask.askedAgainBecause)
      parts.push(el("div", { class: "ask-again", role: "status" }, visibleText(ask.askedAgainBecause)));
    if (ask.kind === "command") {
      parts.push(el("div", { class: "ask-title" }, "Dline wants to run this command:"));
      parts.push(
        el(
          "pre",
          { class: "command-line" },
          el("span", { class: "prompt" }, "$ "),
          visibleText(ask.command?.command ?? ask.summary),
        ),
      );
      if (ask.command?.workingDirectory)
        parts.push(el("div", { class: "tool-note" }, "in ", visibleText(ask.command.workingDirectory)));
    } else if (ask.edits.length > 0) {
      const n = ask.edits.length;
      parts.push(
        el("div", { class: "ask-title" }, `Dline wants to ${verb(ask)} ${n === 1 ? "this file" : `${n} files`}:`),
      );
      parts.push(
        el(
          "ul",
          { class: "ask-files" },
          ask.edits.map((e) =>
            el(
              "li",
              {},
              el("span", { class: `edit-chip ${e.status}` }, e.status),
              " ",
              el(
                "a",
                {
                  href: "#",
                  class: "file-link",
                  "data-action": "show-proposed",
                  onclick: (ev: Event) => {
                    ev.preventDefault();
                    actions.post({ type: "showProposed" });
                  },
                },
                visibleText(e.path),
              ),
              isLeftOut(e) ? el("span", { class: "tool-note left-out" }, ` ${leftOutNote(e)}`) : undefined,
              writtenBlock(e),
            ),
          ),
        ),
      );
      parts.push(
        el(
          "div",
          { class: "hint" },
          ask.edits.every((e) => isLeftOut(e) && writtenText(e) === undefined)
            ? "Dline has no preview of this change (too large, or binary). "
            : "The change is open in the diff editor. ",
          button("Show it again", () => actions.post({ type: "showProposed" }), "link", {
            "data-action": "show-proposed",
          }),
        ),
      );
    } else {
      parts.push(
        el("div", { class: "ask-title" }, "Dline wants to use a tool:"),
        el("div", { class: "ask-summary" }, visibleText(ask.summary)),
      );
      if (ask.detail)
        parts.push(el("details", {}, el("summary", {}, "Details"), el("pre", {}, visibleText(ask.detail))));
    }
    parts.push(
      el(
        "div",
        { class: "row actions" },
        button(ask.kind === "command" ? "Run Command" : "Approve", () => actions.approve(), "primary", {
          "data-action": "approve",
        }),
        button("Reject", () => actions.reject(), "secondary", { "data-action": "reject" }),
      ),
      el("div", { class: "hint" }, "To reject with a reason, type it below and press Reject (or Enter)."),
    );
    return parts;
  }
  if (ask.kind === "followup") {
    return [
      el("div", { class: "ask-title" }, "Dline asks:"),
      el("div", { class: "ask-summary" }, visibleText(ask.summary)),
      ask.options.length > 0
        ? el(
            "div",
            { class: "row options" },
            ask.options.map((o) =>
              button(visibleText(o), () => actions.answer(o), "secondary", { "data-action": "option" }),
            ),
          )
        : undefined,
      el("div", { class: "hint" }, "Or type your answer below."),
    ];
  }
  if (ask.kind === "resume") {
    return [
      el("div", { class: "ask-summary" }, visibleText(ask.summary || "The task was interrupted.")),
      el(
        "div",
        { class: "row" },
        button("Resume Task", () => actions.post({ type: "resume" }), "primary", { "data-action": "resume" }),
      ),
    ];
  }
  return [el("div", { class: "ask-summary" }, visibleText(ask.summary))];
}

/**
 * The text a left-out edit writes (the file as it is is binary or too large, so no diff shows
 * the change): shown in the approval itself, so what is approved is read before the answer.
 */
function writtenBlock(e: ChatFileEdit): Child {
  const text = writtenText(e);
  if (text === undefined) return undefined;
  return el(
    "div",
    { class: "written" },
    el("div", { class: "tool-note" }, `The edit writes (${lineCount(text)}):`),
    el("pre", { class: "output written-text", "data-written": e.path }, visibleText(text)),
  );
}

function verb(ask: ChatAsk): string {
  if (ask.edits.every((e) => e.status === "added")) return "create";
  if (ask.edits.every((e) => e.status === "deleted")) return "delete";
  return "edit";
}
