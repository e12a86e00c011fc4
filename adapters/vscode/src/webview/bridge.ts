import type { ChatBanner, WebviewAction, WebviewUpdate } from "../chat/chat-state.js";

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What a request came to: ok, or the error the extension reports (with a reason the chat can act on). */
export type Outcome = { ok: true } | { ok: false; error: ChatBanner };

/**
 * The webview's side of the messages with the extension: `post` for actions whose outcome the
 * state shows, `request` for those the view waits on (the composer keeps the typed text until
 * a task really started).
 */
export class Bridge {
  private readonly api = acquireVsCodeApi();
  private next = 1;
  private readonly waiting = new Map<number, (outcome: Outcome) => void>();

  post(action: WebviewAction): void {
    this.api.postMessage(action);
  }

  request(action: WebviewAction): Promise<Outcome> {
    const requestId = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(requestId, resolve);
      this.api.postMessage({ ...action, requestId });
    });
  }

  /** Handles a `result` update; true when it answered a request. */
  settle(update: WebviewUpdate): boolean {
    if (update.type !== "result") return false;
    const resolve = this.waiting.get(update.requestId);
    this.waiting.delete(update.requestId);
    resolve?.(update.ok ? { ok: true } : { ok: false, error: update.error ?? { message: "failed", reason: "" } });
    return true;
  }

  /** The webview's saved state (the draft prompt), kept across reloads of the view. */
  get saved(): { draft?: string } {
    return (this.api.getState() as { draft?: string } | undefined) ?? {};
  }

  save(state: { draft?: string }): void {
    this.api.setState(state);
  }
}
