/**
 * The Dline chat webview: draws the state the extension posts and sends the person's actions
 * back (src/chat/chat-state.ts has both shapes). Three screens share the view: the chat, the
 * task history and the model form; the conversation itself always keeps most of the height.
 */
import type { ChatState, Screen, WebviewUpdate } from "../chat/chat-state.js";
import { renderAsk } from "./ask-view.js";
import { Bridge } from "./bridge.js";
import { Composer } from "./composer.js";
import { renderHeader } from "./header-view.js";
import { HistoryView } from "./history-view.js";
import { createMarkdownRenderer } from "./markdown.js";
import { MessagesView } from "./messages-view.js";
import { ModelView } from "./model-view.js";

const $ = (id: string) => {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the chat page has no #${id}`);
  return node;
};

const bridge = new Bridge();
const screens: Record<Screen, HTMLElement> = {
  chat: $("chat-screen"),
  history: $("history-screen"),
  model: $("model-screen"),
};
let screen: Screen = "chat";
let state: ChatState | undefined;

function show(next: Screen): void {
  screen = next;
  for (const [name, node] of Object.entries(screens)) node.hidden = name !== next;
  document.body.dataset.screen = next;
  if (next === "history") {
    history.refresh();
    history.focus();
  } else if (next === "model") {
    if (state) models.render(state);
    models.focus();
  } else composer.input.focus();
}

const composer = new Composer($("composer"), bridge, () => show("model"));
const messages = new MessagesView(
  $("messages"),
  createMarkdownRenderer(),
  (a) => bridge.post(a),
  show,
  (text) => composer.prefill(text),
);
const history = new HistoryView(
  screens.history,
  (a) => bridge.post(a),
  () => show("chat"),
);
const models = new ModelView(screens.model, bridge, () => show("chat"));

function render(next: ChatState): void {
  const hadTask = Boolean(state?.taskId);
  state = next;
  renderHeader($("header"), next, (a) => bridge.post(a));
  // Measured before anything changes: the approval panel and the composer below the
  // conversation take their height from it, so the scroll comes after they are drawn.
  const atBottom = messages.followsEnd();
  messages.render(next);
  renderAsk($("ask"), next, {
    post: (a) => bridge.post(a),
    approve: () => void composer.respond(true),
    reject: () => void composer.respond(false),
    answer: (o) => void composer.answer(o),
  });
  composer.render(next);
  // Still at the bottom, with the approval panel drawn: the newest row (the step asked about) shows above it.
  if (atBottom) messages.scrollToBottom();
  if (screen === "model") models.render(next);
  // Back on the start screen: its recent tasks.
  if (!next.taskId && (hadTask || !recentAsked)) {
    recentAsked = true;
    bridge.post({ type: "listHistory", query: "", recent: true });
  }
}
let recentAsked = false;

window.addEventListener("message", (event: MessageEvent<WebviewUpdate>) => {
  const update = event.data;
  if (!update || typeof update !== "object" || bridge.settle(update)) return;
  if (update.type === "state") render(update.state);
  else if (update.type === "history") {
    if (!update.recent) history.show(update.query, update.tasks);
    if (!update.query) messages.setRecent(update.tasks);
  } else if (update.type === "screen") show(update.screen);
  else if (update.type === "restoreAllDone") messages.restoreAllDone(update.messageId, update.text, update.restored);
});

show("chat");
bridge.post({ type: "ready" });
