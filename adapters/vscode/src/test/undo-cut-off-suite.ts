/**
 * Three things a person met in the chat, through the installed VSIX against the real core:
 * - Undo on a restore's notice that the core refuses (another task of the workspace waits for
 *   approval): the error says why and the notice comes back with its Undo, which works once the
 *   other task is over.
 * - After a file restore, More options still lists Restore Files Only, marked "(files already
 *   restored)"; choosing it says why nothing happens.
 * - An answer cut off by Cancel while it streams ends with a marker, in the live chat, when the
 *   task is opened again, and after it went on (Resume) and was opened again; and an answer cut
 *   by another client of the core (as the CLI or another window would), the task continued there
 *   with "go on", shows its marker when opened from History here, where it was never seen.
 *
 * Environment: DLINE_E2E_MODEL_URL, DLINE_E2E_API_KEY (the scripted model of test/vscode/e2e.test.ts).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { CheckpointKind } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { MessageRole, TaskStatus } from "../../../../core/src/gen/dline/v1/task_pb.js";
import type { DlineApi } from "../api.js";
import { ChatUi } from "./chat-ui.js";
import { activateDline, addScriptedProfile, NOTIFICATION, notificationTexts } from "./helpers.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";
import { UiBridge } from "./ui-bridge.js";

const PROFILE_ID = "scripted";
const MENU_ROWS = ".quick-input-widget .monaco-list-row";
export const UNDO_FILE = "undo.txt";
const CUT = ".message.assistant .cut-off";

export function defineUndoCutOffSuite(suite: TestSuite, outDir: string): void {
  const ui = new UiBridge(outDir);
  const chat = new ChatUi(ui);
  let api: DlineApi | undefined;
  let taskA = "";
  const root = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  const undoFile = () => path.join(root(), UNDO_FILE);
  const clickUndo = () =>
    ui.request({ action: "click", selector: `${NOTIFICATION} .monaco-button`, text: "Undo", frame: "main" });
  const undoNotices = async () =>
    (await notificationTexts(ui)).filter((t) => t.includes("files restored to the checkpoint") && t.includes("Undo"));

  suite.test(
    "after a file restore, More options lists Restore Files Only as already restored, and choosing it says why",
    async () => {
      api = await activateDline();
      await addScriptedProfile(api, PROFILE_ID);
      const clients = await api.clients();
      taskA = (await vscode.commands.executeCommand<string>("dline.newTask", "Write the undo file", PROFILE_ID)) ?? "";
      assert(taskA, "dline.newTask returned no task id");
      await waitFor("the write's approval", () => api?.chat.state().pendingAsk?.kind === "tool", 60_000);
      await vscode.commands.executeCommand("dline.approve", "");
      await waitFor("the task to complete", () => api?.chat.state().status === "completed", 60_000);
      // The person's own line after the task's.
      const mine = "written by the task\nmy own line\n";
      fs.writeFileSync(undoFile(), mine);
      const baseline = (await clients.checkpoints.listCheckpoints({ taskId: taskA })).checkpoints.find(
        (c) => c.kind === CheckpointKind.BASELINE,
      );
      assert(baseline, "no baseline checkpoint");
      await vscode.commands.executeCommand("notifications.clearAll");
      assert(
        await vscode.commands.executeCommand<boolean>("dline.restore", baseline.id, "files"),
        "Restore Files Only did nothing",
      );
      await waitFor(`${UNDO_FILE} (created after the checkpoint) deleted`, () => !fs.existsSync(undoFile()), 10_000);
      await waitFor("the restore's notice with Undo", async () => (await undoNotices()).length === 1);
      await chat.waitFor(
        "the marker to read restored",
        `.checkpoint[data-checkpoint-id="${baseline.id}"] .checkpoint-label`,
        "Checkpoint (restored)",
      );

      await chat.click(`.checkpoint[data-checkpoint-id="${baseline.id}"] button[data-action="restore"]`);
      await waitFor("the restore menu", async () =>
        (await ui.request({ action: "texts", selector: MENU_ROWS, frame: "main" })).some((t) =>
          t.includes("More options"),
        ),
      );
      await ui.request({ action: "click", selector: MENU_ROWS, text: "More options", frame: "main" });
      const more = await waitFor("the More options menu", async () => {
        const texts = await ui.request({ action: "texts", selector: MENU_ROWS, frame: "main" });
        return texts.some((t) => t.includes("Restore Task Only")) && texts;
      });
      assert(
        more.some((t) => t.includes("Restore Files Only") && t.includes("(files already restored)")),
        `More options: ${JSON.stringify(more)}`,
      );
      await ui.request({ action: "screenshot", name: "restore-menu-files-already-restored" });
      await ui.request({ action: "click", selector: MENU_ROWS, text: "Restore Files Only", frame: "main" });
      const texts = await waitFor("the reason it is not available", async () => {
        const shown = await notificationTexts(ui);
        return shown.some((t) => t.includes("Restore Files Only is not available")) && shown;
      });
      assert(
        texts.some((t) => t.includes("already restored to this checkpoint")),
        `notices: ${JSON.stringify(texts)}`,
      );
      await ui.request({ action: "screenshot", name: "restore-files-only-unavailable-explained" });
      assert(!fs.existsSync(undoFile()), `${UNDO_FILE} is still deleted: nothing was restored`);
    },
    180_000,
  );

  suite.test(
    "Undo refused while another task waits for approval: the error says why, the notice comes back with Undo, and Undo works once that task is over",
    async () => {
      assert(api && taskA, "the first test restored task A's files");
      // Another task of the workspace waits for approval: the core refuses a file restore meanwhile.
      const taskB =
        (await vscode.commands.executeCommand<string>("dline.newTask", "Write another file", PROFILE_ID)) ?? "";
      assert(taskB, "dline.newTask returned no task id");
      await waitFor("the other task's approval", () => api?.chat.state().pendingAsk?.kind === "tool", 60_000);

      await clickUndo();
      // The core's sentence says why; the restore's notice comes back with its Undo.
      const refused = await waitFor("the refusal", async () => {
        const shown = await notificationTexts(ui);
        return shown.some((t) => t.includes("is running in this workspace")) && shown;
      });
      await waitFor("the restore's notice back with its Undo", async () => (await undoNotices()).length === 1, 10_000);
      assert(
        refused.some(
          (t) =>
            t.includes("the restore could not be undone") &&
            t.includes("is running in this workspace") &&
            t.includes("Undo is still offered"),
        ),
        `notices: ${JSON.stringify(refused)}`,
      );
      await ui.request({ action: "screenshot", name: "undo-refused-notice-back" });
      assert(!fs.existsSync(undoFile()), `${UNDO_FILE} was not brought back by a refused Undo`);

      // The other task is over (rejected; it completes): Undo on the notice now brings the files back.
      await vscode.commands.executeCommand("dline.reject", "");
      await waitFor("the other task to complete", () => api?.chat.state().status === "completed", 60_000);
      await clickUndo();
      await waitFor("the notice of the undo", async () =>
        (await notificationTexts(ui)).some((t) => t.includes("restore undone")),
      );
      await waitFor(
        `${UNDO_FILE} back, with the person's line`,
        () => fs.existsSync(undoFile()) && fs.readFileSync(undoFile(), "utf8") === "written by the task\nmy own line\n",
      );
      assertEqual(await undoNotices(), [], "notices with Undo left after the undo");
      await ui.request({ action: "screenshot", name: "undo-after-refusal-done" });
      await vscode.commands.executeCommand("notifications.clearAll");
      await vscode.commands.executeCommand("notifications.hideList");
    },
    180_000,
  );

  suite.test(
    "an answer cut off by Cancel ends with a marker: live, opened again from history, and after Resume",
    async () => {
      assert(api && taskA, "the first test ran task A");
      // Whatever the test before left: its other task answered, so the model's turns stay in order.
      if (api.chat.state().pendingAsk) {
        await vscode.commands.executeCommand("dline.reject", "");
        await waitFor("the other task to complete", () => api?.chat.state().status === "completed", 60_000);
      }
      const taskC = (await vscode.commands.executeCommand<string>("dline.newTask", "Think slowly", PROFILE_ID)) ?? "";
      assert(taskC, "dline.newTask returned no task id");
      await chat.waitFor("the streamed text", ".message.assistant", "Thin");
      await chat.click("#cancel");
      await waitFor("the task to be cancelled", () => api?.chat.state().status === "cancelled");
      const live = await chat.waitFor("the cut-off marker", CUT, "answer cut off here");
      assertEqual(live.length, 1, "markers in the live chat");
      await ui.request({ action: "screenshot", name: "cut-off-live" });

      const reopen = async () => {
        await vscode.commands.executeCommand("dline.openTask", taskA);
        await waitFor("task A open", () => api?.chat.state().taskId === taskA);
        await chat.waitFor("task A's chat", ".message", "Write the undo file");
        await vscode.commands.executeCommand("dline.openTask", taskC);
        await waitFor("the cancelled task open again", () => api?.chat.state().taskId === taskC);
      };
      await reopen();
      const reopened = await chat.waitFor("the marker after reopening", CUT, "answer cut off here");
      assertEqual(reopened.length, 1, "markers in the reopened chat");
      const endsCut = await chat.evaluate<string>(
        `(() => { const m = document.querySelector(${JSON.stringify(CUT)}).closest(".message"); return m.innerText; })()`,
      );
      assert(/^Thin[\s\S]*— answer cut off here$/.test(endsCut.trim()), `the cut answer: ${JSON.stringify(endsCut)}`);
      await ui.request({ action: "screenshot", name: "cut-off-reopened" });

      // Resume: the task goes on; the cut answer keeps its marker, the new one has none, also opened again.
      await chat.click("#resume");
      await waitFor(
        "the resumed task to complete",
        () =>
          api?.chat.state().status === "completed" &&
          api.chat.state().items.some((i) => i.type === "message" && i.text.includes("Finished after cancel")),
        60_000,
      );
      assertEqual((await chat.texts(CUT)).length, 1, "markers after Resume");
      await reopen();
      await chat.waitFor("the completion after reopening", ".message.completion", "Finished after cancel");
      assertEqual((await chat.texts(CUT)).length, 1, "markers in the resumed task opened again");
      await ui.request({ action: "screenshot", name: "cut-off-after-resume-reopened" });
    },
    180_000,
  );

  suite.test(
    "an answer cut off in another client, the task continued there, is marked when opened from History in this window",
    async () => {
      assert(api, "the first test activated Dline");
      const clients = await api.clients();
      // Another client of the core (the CLI, another editor window): this chat never shows the task live.
      const { taskId } = await clients.tasks.newTask({
        workspaceRoot: root(),
        text: "Think slowly elsewhere",
        profileId: PROFILE_ID,
      });
      const streaming = new AbortController();
      try {
        for await (const res of clients.tasks.subscribe({ taskId, afterSeq: 0n }, { signal: streaming.signal })) {
          const ev = res.event?.event;
          // The person's own message is added first: wait for the model's words.
          const answered =
            ev?.case === "messageDelta" ||
            (ev?.case === "messageAdded" && ev.value.message?.role === MessageRole.ASSISTANT && ev.value.message.text);
          if (answered) break;
        }
      } finally {
        streaming.abort();
      }
      await clients.tasks.cancel({ taskId });
      const status = async () => (await clients.tasks.getTask({ taskId })).task?.status;
      await waitFor("the other client's task cancelled", async () => (await status()) === TaskStatus.CANCELLED);
      await clients.tasks.sendMessage({ taskId, text: "go on" });
      await waitFor("the task to complete after go on", async () => (await status()) === TaskStatus.COMPLETED, 60_000);
      const answers = (await clients.tasks.getTask({ taskId })).messages.filter(
        (m) => m.role === MessageRole.ASSISTANT && m.kind === "text",
      );
      assertEqual(
        answers.map((m) => [m.text.slice(0, 4), m.cutOff]),
        [
          ["Slow", true],
          ["Went", false],
        ],
        "the core's answers of the task",
      );
      assert(api.chat.state().taskId !== taskId, "the chat had the task open");

      // Opened from History: the cut answer ends with the marker, the answer after "go on" has none.
      await vscode.commands.executeCommand("dline.showHistory");
      const row = `#history-screen .history-row[data-task-id="${taskId}"]`;
      await chat.waitFor("the task's row in History", row, "Think slowly elsewhere");
      await chat.click(`${row} .history-open`);
      await waitFor("the task open", () => api?.chat.state().taskId === taskId);
      await chat.waitFor("the answer after go on", ".message.completion", "Went on elsewhere");
      const marked = await chat.waitFor("the marker of the answer cut elsewhere", CUT, "answer cut off here");
      assertEqual(marked.length, 1, "markers in the task opened from History");
      const cutText = await chat.evaluate<string>(
        `(() => { const m = document.querySelector(${JSON.stringify(CUT)}).closest(".message"); return m.innerText; })()`,
      );
      assert(/^Slow[\s\S]*— answer cut off here$/.test(cutText.trim()), `the cut answer: ${JSON.stringify(cutText)}`);
      await ui.request({ action: "screenshot", name: "cut-off-elsewhere-go-on-opened" });
    },
    180_000,
  );
}
