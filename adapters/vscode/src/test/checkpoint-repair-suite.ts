/**
 * A repaired checkpoint store is told, once. test/vscode/e2e.test.ts runs a first task with the
 * CLI, then damages the workspace's shadow index: the next task's checkpoints are ready with "The
 * checkpoint index was damaged and has been rebuilt; ... kept aside in …", which the person reads
 * in an information notification. The core repeats that sentence (the status of every later
 * task, Retry Checkpoints' answer): it is not shown again.
 *
 * Then another Dline window (a separate process the test file starts on request, over the same
 * roots and workspace) holds the workspace's checkpoint repository: Compare clicked in the chat
 * waits for it, and says so once, in a progress notification naming that window's process,
 * until the other window goes (killed) and the diff opens; a Compare with no other window says
 * nothing; Restore clicked while it holds them says so too, until its menu comes, and View
 * Changes, until its diff opens.
 *
 * Environment: DLINE_E2E_MODEL_URL, DLINE_E2E_API_KEY (the scripted model of test/vscode/e2e.test.ts).
 */
import * as fs from "node:fs";
import * as vscode from "vscode";
import { CheckpointKind } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import type { ShownDiff } from "../checkpoints/diff-presenter.js";
import { ChatUi } from "./chat-ui.js";
import { activateDline, addScriptedProfile, allTabs, NOTIFICATION, notificationTexts, waitForTab } from "./helpers.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";
import { UiBridge } from "./ui-bridge.js";

const PROFILE_ID = "scripted";
// With the smoke-test driver VS Code shows no toasts: notifications are read in the notifications center.
const INDEX_REBUILT =
  "Dline: The checkpoint index was damaged and has been rebuilt; no checkpoint was lost. The damaged files were kept aside in ";
/** The core's sentence while a call waits for another window (workspace-guard.ts), as the notification says it. */
const WAITING = "Dline: Checkpoints are waiting for another Dline window using this workspace's checkpoints";
const COMPARE_TAB = "Changes since snapshot";
const VIEW_CHANGES_TAB = "New changes";
const MENU_ROWS = ".quick-input-widget .monaco-list-row";

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

  suite.test(
    "Compare clicked while another Dline window holds the checkpoints says once that it waits for that window, naming its process, until the diff opens; Restore too, until its menu comes; View Changes too, until its diff opens",
    async () => {
      const api = await activateDline();
      await addScriptedProfile(api, PROFILE_ID);
      const chat = new ChatUi(ui);
      const waitNotices = async () => (await notificationTexts(ui)).filter((t) => t.includes(WAITING));
      /** The notifications of a wait, once one is shown: an action (`what`) waits for the other window. */
      const noticeOfWait = (what: string) =>
        waitFor(
          `the notification that ${what} waits for the other window`,
          async () => {
            const found = await waitNotices();
            return found.length > 0 && found;
          },
          20_000,
        );
      // Notifications arrive in order: once this one is listed, one shown before it would be too.
      let markers = 0;
      const afterMarker = async () => {
        const marker = `checkpoint-repair suite: marker ${++markers}`;
        void vscode.window.showInformationMessage(marker);
        await waitFor(`the marker notification ${markers}`, async () =>
          (await notificationTexts(ui)).some((t) => t.includes(marker)),
        );
        return waitNotices();
      };

      // A task that edits notes.md (approved): its checkpoint after that has a Compare in the chat.
      const taskId =
        (await vscode.commands.executeCommand<string>("dline.newTask", "Edit the notes", PROFILE_ID)) ?? "";
      assert(taskId, "dline.newTask returned no task id");
      const answered = new Set<string>();
      await waitFor(
        "the task to complete",
        async () => {
          const ask = api.chat.state().pendingAsk;
          if (ask && !answered.has(ask.askId)) {
            answered.add(ask.askId);
            await vscode.commands.executeCommand("dline.approve", "");
          }
          return api.chat.state().status === "completed";
        },
        60_000,
      );
      const clients = await api.clients();
      const turn = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints.find(
        (c) => c.kind === CheckpointKind.TURN && c.hasFiles,
      );
      assert(turn, "no turn checkpoint with files");
      const compare = `.checkpoint[data-checkpoint-id="${turn.id}"] button[data-action="compare"]`;
      // The person's own change since: the Compare has a diff to open.
      const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
      fs.writeFileSync(`${root}/notes.md`, "# notes, edited\nby hand\n");
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
      await vscode.commands.executeCommand("notifications.clearAll");

      // Another window takes the workspace's checkpoint lock and keeps it; the person clicks Compare.
      const [pid] = await ui.request({ action: "outside", name: "holdCheckpoints" }, 60_000);
      assert(pid && Number(pid) > 0, `the other window's process: ${pid}`);
      await chat.click(compare);
      const shown = await noticeOfWait("Compare");
      assertEqual(
        shown.map((t) => t.split("\n")[0]),
        [`${WAITING} (process ${pid}).`],
        "the notifications of the wait",
      );
      // Seconds later, still one, and the diff still waits.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      assertEqual((await waitNotices()).length, 1, "notifications of the wait, 3 s later");
      assert(!allTabs().some((t) => t.label.startsWith(COMPARE_TAB)), "the Compare opened while the lock was held");
      // Screenshots with the notification expanded (the center shows it on one line, cut at its end).
      await vscode.commands.executeCommand("notifications.showList");
      await ui.request({ action: "click", selector: `${NOTIFICATION} .codicon-notifications-expand`, frame: "main" });
      for (const theme of ["light", "dark"] as const) {
        await chat.useTheme(theme);
        await vscode.commands.executeCommand("notifications.showList");
        await new Promise((resolve) => setTimeout(resolve, 500));
        await ui.request({ action: "screenshot", name: `checkpoints-held-elsewhere-${theme}` });
      }

      // The other window goes (killed: its lock is taken over at once): the diff opens, the notification goes.
      await ui.request({ action: "outside", name: "endHolder" }, 30_000);
      await waitForTab(COMPARE_TAB).catch(async (err: Error) => {
        await ui.request({ action: "screenshot", name: "checkpoints-held-elsewhere-no-diff" });
        throw new Error(`${err.message}; notifications: ${JSON.stringify(await notificationTexts(ui))}`);
      });
      await waitFor("the notification of the wait closed", async () => (await waitNotices()).length === 0, 10_000);
      assertEqual(await afterMarker(), [], "notifications of the wait after the Compare opened");
      await ui.request({ action: "screenshot", name: "checkpoints-held-elsewhere-diff-open" });

      // No other window: a Compare says nothing of one.
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
      await vscode.commands.executeCommand("notifications.clearAll");
      await chat.click(compare);
      await waitForTab(COMPARE_TAB);
      assertEqual(await afterMarker(), [], "notifications of a wait with no other window");
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
      await vscode.commands.executeCommand("notifications.clearAll");

      // Restore clicked while another window holds them: its menu waits for the checkpoints' list,
      // saying so once; the menu comes when the other window goes, and the notification goes.
      const [other] = await ui.request({ action: "outside", name: "holdCheckpoints" }, 60_000);
      await chat.click(`.checkpoint[data-checkpoint-id="${turn.id}"] button[data-action="restore"]`);
      const restoreShown = await noticeOfWait("Restore");
      assertEqual(
        restoreShown.map((t) => t.split("\n")[0]),
        [`${WAITING} (process ${other}).`],
        "the notifications of the Restore's wait",
      );
      await ui.request({ action: "outside", name: "endHolder" }, 30_000);
      await waitFor("the restore menu", async () =>
        (await ui.request({ action: "texts", selector: MENU_ROWS, frame: "main" })).some((t) =>
          t.includes("More options"),
        ),
      );
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
      await waitFor("the notification of the Restore's wait closed", async () => (await waitNotices()).length === 0);
      assertEqual(await afterMarker(), [], "notifications of the wait after the restore menu came");
      await vscode.commands.executeCommand("notifications.clearAll");

      // View Changes run while another window holds them: the same notice, until its diff opens.
      const [third] = await ui.request({ action: "outside", name: "holdCheckpoints" }, 60_000);
      const viewing = vscode.commands.executeCommand<ShownDiff[]>("dline.viewChanges");
      const viewShown = await noticeOfWait("View Changes");
      assertEqual(
        viewShown.map((t) => t.split("\n")[0]),
        [`${WAITING} (process ${third}).`],
        "the notifications of the View Changes' wait",
      );
      assert(
        !allTabs().some((t) => t.label.startsWith(VIEW_CHANGES_TAB)),
        "View Changes opened while the lock was held",
      );
      await vscode.commands.executeCommand("notifications.showList");
      await new Promise((resolve) => setTimeout(resolve, 500));
      await ui.request({ action: "screenshot", name: "view-changes-held-elsewhere" });
      await ui.request({ action: "outside", name: "endHolder" }, 30_000);
      const viewed = (await viewing) ?? [];
      assert(
        viewed.some((d) => d.path === "notes.md"),
        `View Changes shows notes.md (got ${viewed.map((d) => d.path).join(", ")})`,
      );
      await waitForTab(VIEW_CHANGES_TAB);
      await waitFor(
        "the notification of the View Changes' wait closed",
        async () => (await waitNotices()).length === 0,
      );
      assertEqual(await afterMarker(), [], "notifications of the wait after View Changes opened");
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
      await vscode.commands.executeCommand("notifications.clearAll");
      await vscode.commands.executeCommand("notifications.hideList");
    },
    180_000,
  );
}
