import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import type { ChatController } from "./chat-controller.js";
import type { WebviewRequest, WebviewUpdate } from "./chat-state.js";

/**
 * The chat view: a webview (plain HTML, CSS and a script in media/) that draws the
 * controller's state and sends the person's actions back. Updates are coalesced so that a
 * fast stream of text deltas redraws at most every 30 ms.
 */
export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = "dline.chat";
  private view: vscode.WebviewView | undefined;
  private pending: NodeJS.Timeout | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
  ) {
    this.subscriptions.push(controller.onDidChangeState(() => this.schedule()));
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = this.html(view.webview, media);
    this.subscriptions.push(
      view.webview.onDidReceiveMessage((message: WebviewRequest) => void this.controller.handle(message)),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
      }),
    );
  }

  /** Reveals the chat view (used by commands that open a task). */
  async reveal(): Promise<void> {
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      const update: WebviewUpdate = { type: "state", state: this.controller.state };
      void this.view?.webview.postMessage(update);
    }, 30);
  }

  private html(webview: vscode.Webview, media: vscode.Uri): string {
    const nonce = randomBytes(16).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.css"));
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${style}" rel="stylesheet">
<title>Dline</title>
</head>
<body>
<header id="header"></header>
<main id="messages" aria-live="polite"></main>
<section id="ask"></section>
<footer id="composer">
  <textarea id="input" rows="3" placeholder="Type a task…"></textarea>
  <div class="row">
    <button id="send">Send</button>
    <button id="cancel" class="secondary">Cancel</button>
    <button id="resume" class="secondary">Resume</button>
  </div>
</footer>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    if (this.pending) clearTimeout(this.pending);
    for (const s of this.subscriptions) s.dispose();
  }
}
