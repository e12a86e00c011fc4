/**
 * A repaired checkpoint store is told, once. test/vscode/e2e.test.ts runs a first task with the
 * CLI, then damages the workspace's shadow index: the next task's checkpoints are ready with "The
 * checkpoint index was damaged and has been rebuilt; ... kept aside in …", which the person reads
 * in an information notification. The core repeats that sentence (the status of every later
 * task, Retry Checkpoints' answer): it is not shown again.
 *
 * Environment: DLINE_E2E_MODEL_URL, DLINE_E2E_API_KEY (the scripted model of test/vscode/e2e.test.ts).
 */
import * as fs from "node:fs";
import * as vscode from "vscode";
import { activateDline, addScriptedProfile, notificationTexts } from "./helpers.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";
import { UiBridge } from "./ui-bridge.js";

const PROFILE_ID = "scripted";
// With the smoke-test driver VS Code shows no toasts: notifications are read in the notifications center.
const INDEX_REBUILT =
  "Dline: The checkpoint index was damaged and has been rebuilt; no checkpoint was lost. The damaged files were kept aside in ";

export function defineCheckpointRepairSuite(suite: TestSuite, outDir: string): void {
  const ui = new UiBridge(outDir);
  const repairNotices = async () => (await notificationTexts(ui)).filter((t) => t.includes(INDEX_REBUILT));

  suite.test(
    "a task after the checkpoint index was damaged tells once, in an information notification, where the damaged files were kept",
    async () => {
      const api = await activateDline();
      await addScriptedProfile(api, PROFILE_ID);
      const runTask = async (text: string) => {
        const taskId = (await vscode.commands.executeCommand<string>("dline.newTask", text, PROFILE_ID)) ?? "";
        assert(taskId, "dline.newTask returned no task id");
        await waitFor(`the task "${text}" to complete`, () => api.chat.state().status === "completed", 60_000);
        return taskId;
      };

      const taskId = await runTask("Second");
      const told = await waitFor(
        "the repair's notification",
        async () => {
          const found = await repairNotices();
          return found.length > 0 && found;
        },
        30_000,
      );
      await ui.request({ action: "screenshot", name: "checkpoint-repair-notice" });
      assertEqual(told.length, 1, `notifications of the repair: ${JSON.stringify(told)}`);
      const aside = /kept aside in (\/\S*\/\.git\/index\.corrupt-[^/\s]*?)\.(?:\s|$)/.exec(told[0] ?? "")?.[1];
      assert(aside && fs.statSync(aside).isDirectory(), `the folder it names is there: ${told[0]}`);

      // The core says it again: GetStatus for the next task, Retry Checkpoints' answer. Cleared
      // first: the notifications center would fold a repeat into the notification it still lists.
      await vscode.commands.executeCommand("notifications.clearAll");
      const clients = await api.clients();
      const status = await clients.checkpoints.getStatus({ taskId, workspaceRoot: "" });
      assert(told[0]?.includes(`Dline: ${status.message}`), `the status repeats the sentence: ${status.message}`);
      await runTask("Third");
      await vscode.commands.executeCommand("dline.retryCheckpoints");
      // Notifications arrive in order: once this one is listed, a repeat shown before it would be too.
      const marker = "checkpoint-repair suite: after Retry Checkpoints";
      void vscode.window.showInformationMessage(marker);
      await waitFor("the marker notification", async () =>
        (await notificationTexts(ui)).some((t) => t.includes(marker)),
      );
      assertEqual(await repairNotices(), [], "notifications of the repair after the core said it again");
      await vscode.commands.executeCommand("notifications.clearAll");
      await vscode.commands.executeCommand("notifications.hideList");
    },
    180_000,
  );
}
