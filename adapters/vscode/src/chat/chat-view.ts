import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import type { ChatController } from "./chat-controller.js";
import { bannerOf } from "./error-banner.js";
import { handleChatRequest, postHistory, type ChatRequestDeps } from "./chat-requests.js";
import type { Screen, WebviewRequest, WebviewUpdate } from "./chat-state.js";

/**
 * The chat view: a webview (out/webview/chat.js built from src/webview, media/chat.css) that
 * draws the controller's state and sends the person's actions back. State updates are
 * coalesced so that a fast stream of text deltas redraws at most every 30 ms.
 */
export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = "dline.chat";
  private view: vscode.WebviewView | undefined;
  private pending: NodeJS.Timeout | undefined;
  private historyRefresh: NodeJS.Timeout | undefined;
  /** A screen asked for before the view existed (History from the view's title bar). */
  private pendingScreen: Screen | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
    private readonly requestDeps: Omit<ChatRequestDeps, "post" | "controller">,
  ) {
    this.subscriptions.push(controller.onDidChangeState(() => this.schedule()));
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const roots = [
      vscode.Uri.joinPath(this.extensionUri, "media"),
      vscode.Uri.joinPath(this.extensionUri, "out", "webview"),
    ];
    view.webview.options = { enableScripts: true, localResourceRoots: roots };
    view.webview.html = this.html(view.webview);
    this.subscriptions.push(
      view.webview.onDidReceiveMessage((message: WebviewRequest) => void this.handle(message)),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
      }),
    );
  }

  /** Reveals the chat view (used by commands that open a task), optionally on one of its screens. */
  async reveal(screen?: Screen): Promise<void> {
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
    if (screen) {
      if (this.view) this.post({ type: "screen", screen });
      else this.pendingScreen = screen;
    }
  }

  /** The task list changed (a task ran, was imported or deleted elsewhere): the history screen follows. */
  refreshHistory(): void {
    // A running task changes its row often: one list per quarter second at most.
    if (!this.view || this.historyRefresh) return;
    this.historyRefresh = setTimeout(() => {
      this.historyRefresh = undefined;
      void postHistory({ ...this.requestDeps, post: (u) => this.post(u) }).catch((err) =>
        this.controller.logWarning(`history: ${(err as Error).message}`),
      );
    }, 250);
  }

  private async handle(request: WebviewRequest): Promise<void> {
    const { requestId, ...action } = request;
    if (action.type === "ready") {
      // The view (re)loaded: it draws what is known now; the core's answers follow as state.
      this.postState();
      if (this.pendingScreen) this.post({ type: "screen", screen: this.pendingScreen });
      this.pendingScreen = undefined;
    }
    try {
      await handleChatRequest(action, { ...this.requestDeps, controller: this.controller, post: (u) => this.post(u) });
      if (requestId !== undefined) this.post({ type: "result", requestId, ok: true });
    } catch (err) {
      if (requestId !== undefined) this.post({ type: "result", requestId, ok: false, error: bannerOf(err) });
      // A core that cannot start is shown in the chat's header (and said once by the reporter).
      else if (action.type === "ready") this.controller.logWarning(`the chat's first load: ${(err as Error).message}`);
      // Other actions whose failure the chat does not show itself get a notification.
      else this.controller.showError(err);
    }
  }

  private post(update: WebviewUpdate): void {
    void this.view?.webview.postMessage(update);
  }

  private postState(): void {
    this.post({ type: "state", state: this.controller.state });
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.postState();
    }, 30);
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "out", "webview", "chat.js")).toString();
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "media", "chat.css")).toString();
    // No inline styles or scripts, no images or fonts from anywhere: model text cannot load anything.
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${style.toString()}" rel="stylesheet">
<title>Dline</title>
</head>
<body>
<div id="chat-screen" class="screen">
  <header id="header"></header>
  <main id="messages" aria-live="polite"></main>
  <section id="ask"></section>
  <footer id="composer"></footer>
</div>
<div id="history-screen" class="screen" hidden></div>
<div id="model-screen" class="screen" hidden></div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }

  dispose(): void {
    if (this.pending) clearTimeout(this.pending);
    if (this.historyRefresh) clearTimeout(this.historyRefresh);
    for (const s of this.subscriptions) s.dispose();
  }
}
