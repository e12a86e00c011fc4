import * as vscode from "vscode";
import type { DlineApi } from "../api.js";
import { ChatUi } from "./chat-ui.js";
import { required } from "./helpers.js";
import { UiBridge } from "./ui-bridge.js";

/** What the parts of the end-to-end suite share: the page, the extension's API, the task ids. */
export class E2eContext {
  readonly ui: UiBridge;
  readonly chat: ChatUi;
  readonly workspace = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  readonly modelUrl = required("DLINE_E2E_MODEL_URL");
  readonly apiKey = required("DLINE_E2E_API_KEY");
  /** The folder the VSIX was installed into. */
  readonly installed = required("DLINE_E2E_INSTALLED");
  private extension: DlineApi | undefined;
  /** The first task (edits, checkpoints, restore). */
  taskId = "";
  baselineId = "";

  constructor(readonly outDir: string) {
    this.ui = new UiBridge(outDir);
    this.chat = new ChatUi(this.ui);
  }

  get api(): DlineApi {
    if (!this.extension) throw new Error("the extension is not activated yet");
    return this.extension;
  }

  set api(value: DlineApi) {
    this.extension = value;
  }

  /** The model server's recorded requests (bodies as JSON). */
  async modelRequests(): Promise<{ body: Record<string, unknown> }[]> {
    const res = await fetch(`${this.modelUrl}/__requests`);
    return (await res.json()) as { body: Record<string, unknown> }[];
  }
}

export const PROFILE_ID = "scripted";
export const BACKUP_PROFILE_ID = "backup";
