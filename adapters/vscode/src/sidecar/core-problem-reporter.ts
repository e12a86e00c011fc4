import * as vscode from "vscode";
import { visibleLine } from "../text/visible-text.js";
import { FailureEpisode } from "./failure-episode.js";
import type { Log } from "./log.js";

export const CORE_PATH_SETTING = "dline.corePath";

/**
 * Tells the person, once and at once, that the Dline core cannot start (missing, not
 * executable, exits before its handshake), with Open Settings on the `dline.corePath` setting,
 * and keeps a status bar item until the core runs again. The restarts themselves go on by the
 * supervisor's policy.
 */
export class CoreProblemReporter implements vscode.Disposable {
  private readonly episode = new FailureEpisode();
  private readonly item = vscode.window.createStatusBarItem("dline.coreProblem", vscode.StatusBarAlignment.Left, 100);

  constructor(
    private readonly showLog: () => void,
    private readonly log: Log,
  ) {
    this.item.name = "Dline core";
    this.item.command = "dline.openCoreSettings";
    this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
  }

  /** True while the core cannot start (since the last failure, until the next start). */
  get failing(): boolean {
    return this.episode.failing;
  }

  failed(err: Error): void {
    const first = this.episode.fail(err);
    const message = visibleLine(err.message);
    this.item.text = "$(error) Dline core";
    this.item.tooltip = `The Dline core cannot start: ${message}\nClick to open the dline.corePath setting.`;
    this.item.show();
    if (!first) return;
    this.log.error(`told the person the core cannot start: ${message}`);
    void vscode.window
      .showErrorMessage(`Dline: the core cannot start: ${message}`, "Open Settings", "Show Log")
      .then((choice) => {
        if (choice === "Open Settings") void openCoreSettings();
        if (choice === "Show Log") this.showLog();
      });
  }

  recovered(): void {
    if (this.episode.recover()) void vscode.window.setStatusBarMessage("Dline core running again", 3_000);
    this.item.hide();
  }

  dispose(): void {
    this.item.dispose();
  }
}

/**
 * Opens the settings editor on `dline.corePath`. The setting is machine-scoped: in a remote
 * window (code-server, SSH, containers) it is edited in the Remote tab, so that tab is opened.
 */
export async function openCoreSettings(): Promise<void> {
  if (vscode.env.remoteName)
    await vscode.commands.executeCommand("workbench.action.openRemoteSettings", { query: CORE_PATH_SETTING });
  else await vscode.commands.executeCommand("workbench.action.openSettings", CORE_PATH_SETTING);
}
