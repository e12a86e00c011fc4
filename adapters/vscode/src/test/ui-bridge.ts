import * as fs from "node:fs";
import * as path from "node:path";
import { waitFor } from "./runner.js";

/**
 * Asks the harness outside the editor (Playwright driving the browser that shows this
 * workbench) to act on the page: take a screenshot, click an element, read texts. A request
 * is a file `ui-request-<n>.json` in the output folder; the answer `ui-answer-<n>.json`.
 */
export type UiRequest =
  | { action: "screenshot"; name: string }
  | { action: "click"; selector: string; text?: string; frame?: "webview" | "main" }
  | { action: "widenSidebar"; width: number }
  | { action: "fill"; selector: string; value: string; press?: string; frame?: "webview" | "main" }
  | { action: "texts"; selector: string; frame?: "webview" | "main" }
  /** The values of form fields (a textarea's text as typed). */
  | { action: "values"; selector: string; frame?: "webview" | "main" }
  /** Runs a JavaScript expression in the frame (the chat's document for "webview"): the answer is its JSON. */
  | { action: "evaluate"; expression: string; frame?: "webview" | "main" }
  | { action: "press"; press: string }
  /** Something the test file does outside the editor (runExtensionSuite's `outside`), e.g. start another process. */
  | { action: "outside"; name: string };

export class UiBridge {
  private counter = 0;

  constructor(private readonly outDir: string) {}

  async request(req: UiRequest, timeoutMs = 20_000): Promise<string[]> {
    const n = ++this.counter;
    const answerFile = path.join(this.outDir, `ui-answer-${n}.json`);
    const requestFile = path.join(this.outDir, `ui-request-${n}.json`);
    fs.writeFileSync(`${requestFile}.tmp`, JSON.stringify(req));
    fs.renameSync(`${requestFile}.tmp`, requestFile);
    const answer = await waitFor(
      `the harness to do ${JSON.stringify(req)}`,
      () =>
        fs.existsSync(answerFile) &&
        (JSON.parse(fs.readFileSync(answerFile, "utf8")) as { ok: boolean; error?: string; texts?: string[] }),
      timeoutMs,
    );
    if (!answer.ok) throw new Error(`the harness could not do ${JSON.stringify(req)}: ${answer.error}`);
    return answer.texts ?? [];
  }

  /** The value of a JavaScript expression evaluated in the page (JSON round trip). */
  async evaluate<T>(expression: string, frame: "webview" | "main" = "webview"): Promise<T> {
    const [json] = await this.request({ action: "evaluate", expression, frame });
    if (json === undefined) throw new Error(`the harness evaluated ${expression} but sent no value back`);
    return JSON.parse(json) as T;
  }
}
