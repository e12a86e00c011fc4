/**
 * What a person met reading and tidying in the chat, through the installed VSIX against the real
 * core:
 * - A file restore while the person has unsaved changes in one of the files it writes: the
 *   changes are saved first, so the editor shows the restored file (not its own older text, which
 *   a Save would have written over the restore) and Undo brings those changes back. Restore All
 *   of an edited message writes files too: it saves those changes first too. Undo of a restore
 *   that would overwrite what the person typed since (saved or not) asks first, naming the file.
 * - A long streamed answer: scrolled up, the chat stays where the person reads and offers
 *   "Latest", which takes them back down and follows again; a panel opening below the
 *   conversation keeps its end in sight; rows already shown are not put in the page again at
 *   each streamed word (the conversation is a live region: a screen reader hears what is new).
 * - A table wider than the sidebar scrolls sideways in its own box (its inline code stays on one
 *   line, not one character per line).
 * - Escape in the composer closes the auto-approve panel; each checkpoint's Compare and Restore
 *   buttons are named by the step they follow (not a list of identical "Compare", "Restore").
 * - An answer cut at the model's output limit says so at its marker, and how to go on.
 * - History: the search stays applied after the open task is deleted from it; the keyboard focus
 *   stays on the row's buttons (favourite, delete, Keep, Escape) instead of falling to the page.
 *
 * Environment: DLINE_E2E_MODEL_URL, DLINE_E2E_API_KEY (the scripted model of test/vscode/e2e.test.ts).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { CheckpointKind } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { SettingsScope } from "../../../../core/src/gen/dline/v1/settings_pb.js";
import type { DlineApi } from "../api.js";
import { ChatUi } from "./chat-ui.js";
import { activateDline, addScriptedProfile, NOTIFICATION, notificationTexts } from "./helpers.js";
import { CUT_TITLE, LONG_ANSWER_END, READING_NOTES, READING_NOTES_TEXT } from "./reading-history-script.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";
import { UiBridge } from "./ui-bridge.js";

const PROFILE_ID = "scripted";

export function defineReadingHistorySuite(suite: TestSuite, outDir: string): void {
  const ui = new UiBridge(outDir);
  const chat = new ChatUi(ui);
  let api: DlineApi | undefined;
  const root = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  const notes = () => path.join(root(), READING_NOTES);
  /** The focused element of the chat: its data-action and its row's title. */
  const focused = () =>
    chat.evaluate<string>(
      `(() => { const a = document.activeElement; if (!a || a === document.body) return "body"; const row = a.closest("[data-task-id]"); return (a.dataset.action || a.tagName.toLowerCase()) + (row ? " @ " + row.querySelector(".history-title").textContent : ""); })()`,
    );
  const press = (key: string) => ui.request({ action: "press", press: key });

  suite.test(
    "a file restore saves the unsaved changes of an open file first: the editor shows the restored file, Undo brings the changes back",
    async () => {
      api = await activateDline();
      await addScriptedProfile(api, PROFILE_ID);
      const clients = await api.clients();
      const taskId =
        (await vscode.commands.executeCommand<string>("dline.newTask", "Add a task line to the notes", PROFILE_ID)) ??
        "";
      assert(taskId, "dline.newTask returned no task id");
      await waitFor("the edit's approval", () => api?.chat.state().pendingAsk?.kind === "tool", 60_000);
      await vscode.commands.executeCommand("dline.approve", "");
      await waitFor("the task to complete", () => api?.chat.state().status === "completed", 60_000);
      assertEqual(fs.readFileSync(notes(), "utf8"), `${READING_NOTES_TEXT}task line\n`, "notes after the task");

      // The person types in the file and does not save.
      const doc = await vscode.workspace.openTextDocument(notes());
      const editor = await vscode.window.showTextDocument(doc);
      await editor.edit((e) => e.insert(doc.lineAt(doc.lineCount - 1).range.end, "my unsaved words\n"));
      assert(doc.isDirty, "the notes have unsaved changes");

      const baseline = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints.find(
        (c) => c.kind === CheckpointKind.BASELINE,
      );
      assert(baseline, "no baseline checkpoint");
      await vscode.commands.executeCommand("notifications.clearAll");
      assert(
        await vscode.commands.executeCommand<boolean>("dline.restore", baseline.id, "files"),
        "Restore Files Only did nothing",
      );
      await waitFor("the notes restored on disk", () => fs.readFileSync(notes(), "utf8") === READING_NOTES_TEXT);
      // The editor shows the restored file: no older text of its own that a Save would write back.
      await waitFor(
        "the editor to show the restored notes",
        () => !doc.isDirty && doc.getText() === READING_NOTES_TEXT,
        10_000,
      ).catch(() => {
        throw new Error(`the editor after the restore: dirty ${doc.isDirty}, text ${JSON.stringify(doc.getText())}`);
      });
      await ui.request({ action: "screenshot", name: "restore-unsaved-saved-first" });

      // Undo on the notice: the unsaved words come back too (they were saved before the restore).
      await waitFor("the restore's notice with Undo", async () =>
        (await notificationTexts(ui)).some((t) => t.includes("files restored to the checkpoint") && t.includes("Undo")),
      );
      await ui.request({ action: "click", selector: `${NOTIFICATION} .monaco-button`, text: "Undo", frame: "main" });
      await waitFor(
        "the unsaved words back after Undo",
        () => fs.readFileSync(notes(), "utf8") === `${READING_NOTES_TEXT}task line\nmy unsaved words\n`,
        20_000,
      );
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    },
    180_000,
  );

  suite.test(
    "Restore All saves the unsaved changes of the files it writes first, and Undo asks before overwriting what was typed since the restore: nothing typed is lost; each checkpoint button says which checkpoint",
    async () => {
      assert(api, "the first test activated Dline");
      // On disk: the task's line and the words the test before saved, then brought back by Undo.
      const undone = `${READING_NOTES_TEXT}task line\nmy unsaved words\n`;
      assertEqual(fs.readFileSync(notes(), "utf8"), undone, "the notes before Restore All");
      const doc = await vscode.workspace.openTextDocument(notes());
      // The document read what the Undo before wrote (typing into an older text would make its
      // save a conflict with the file on disk).
      await waitFor("the notes document to read the file", () => !doc.isDirty && doc.getText() === undone, 10_000);
      const type = async (words: string) => {
        const editor = await vscode.window.showTextDocument(doc);
        await editor.edit((e) => e.insert(doc.lineAt(doc.lineCount - 1).range.end, words));
        assert(doc.isDirty, `the notes have unsaved changes (${JSON.stringify(words)})`);
      };
      const shows = (what: string, text: string) =>
        waitFor(what, () => !doc.isDirty && doc.getText() === text, 10_000).catch(() => {
          throw new Error(`${what}: dirty ${doc.isDirty}, text ${JSON.stringify(doc.getText())}`);
        });
      // Each checkpoint's buttons say which checkpoint they are about (a screen reader lists them by name).
      const names = await waitFor("the checkpoint buttons", async () => {
        const found = await chat.evaluate<string[]>(
          `[...document.querySelectorAll(".checkpoint button")].map((b) => b.getAttribute("aria-label") || b.textContent)`,
        );
        return found.length >= 4 && found;
      });
      assertEqual(new Set(names).size, names.length, `distinct checkpoint button names: ${JSON.stringify(names)}`);
      assert(
        names.some((n) => /^Restore the checkpoint after Edit notes\.md, /.test(n)) &&
          names.some((n) => n.startsWith("Compare with the checkpoint at the start of the task")),
        `the checkpoint buttons' names say which step: ${JSON.stringify(names)}`,
      );
      await type("typed before Restore All\n");
      // A local setting the person changed since the task (ignored: checkpoints do not track it).
      // Restore All leaves it as it is, and says so, as a restore from the checkpoint menu does.
      const localEnv = path.join(root(), ".env");
      fs.writeFileSync(localEnv, "LOCAL_PORT=4000\n");
      await vscode.commands.executeCommand("notifications.clearAll");
      const first = api.chat.state().items.find((i) => i.type === "message" && i.role === "user");
      assert(first && first.type === "message", "the first user message");
      const editedText = "Add a task line to the notes, politely";
      await chat.click(`.message.user[data-message-id="${first.id}"]`);
      await chat.fill(".edit-box textarea", editedText);
      await chat.click(".edit-box button", "Restore All");
      // It asks first, naming the unsaved file it saves (VS Code refuses the modal in tests):
      // nothing is saved or restored unasked. Then Restore All as a key binding passes it.
      await waitFor("Restore All's question asked", async () =>
        (await notificationTexts(ui)).some((t) =>
          t.includes("Contents: Restore the files and the conversation to before this message?"),
        ),
      );
      assert(doc.isDirty, "the notes still unsaved without an answer");
      assertEqual(fs.readFileSync(notes(), "utf8"), undone, "the notes on disk without an answer");
      await vscode.commands.executeCommand("notifications.clearAll");
      assert(
        await vscode.commands.executeCommand<boolean>("dline.editMessage", first.id, editedText, "all"),
        "Restore All did nothing",
      );
      await waitFor(
        "the notes restored on disk by Restore All",
        () => fs.readFileSync(notes(), "utf8") === READING_NOTES_TEXT,
      ).catch(async () => {
        throw new Error(`the notes not restored; notices: ${JSON.stringify(await notificationTexts(ui))}`);
      });
      // Saved first: the editor shows the restored file, not its own text that a Save would write back.
      await shows("the editor after Restore All", READING_NOTES_TEXT);
      await waitFor("Restore All's warning naming the .env it left as it was", async () =>
        (await notificationTexts(ui)).some((t) => t.includes("kept as is: .env (not tracked by checkpoints)")),
      ).catch(async () => {
        throw new Error(`no warning naming .env; notices: ${JSON.stringify(await notificationTexts(ui))}`);
      });
      assertEqual(fs.readFileSync(localEnv, "utf8"), "LOCAL_PORT=4000\n", "the .env after Restore All");
      await ui.request({ action: "screenshot", name: "restore-all-kept-env" });
      await ui.request({ action: "screenshot", name: "restore-all-unsaved-saved-first" });

      // Typed again after Restore All, then Undo on its notice: Undo would overwrite those words,
      // so it asks first, naming the file (VS Code refuses modal dialogs in tests: no answer is
      // Keep My Changes), and nothing is written; the notice comes back with its Undo.
      const restoreAllNotice = () =>
        waitFor("Restore All's notice with Undo", async () =>
          (await notificationTexts(ui)).some(
            (t) => t.includes("files restored to the checkpoint") && t.includes("Undo"),
          ),
        );
      const QUESTION = "Contents: You changed a file since the restore";
      const asked = async () => (await notificationTexts(ui)).some((t) => t.includes(QUESTION));
      /** Undo on the notice asks first, and leaves the notes on disk as `onDisk`; its notice comes back. */
      const undoAsks = async (what: string, onDisk: string) => {
        await ui.request({ action: "click", selector: `${NOTIFICATION} .monaco-button`, text: "Undo", frame: "main" });
        await waitFor(`Undo to ask first (${what})`, asked).catch(async () => {
          throw new Error(`Undo did not ask (${what}); notices: ${JSON.stringify(await notificationTexts(ui))}`);
        });
        await restoreAllNotice();
        // The refused dialog's notice goes (only it: closing the restore's notice would end its Undo).
        await ui.evaluate(
          `(() => { for (const n of document.querySelectorAll(${JSON.stringify(NOTIFICATION)})) if (n.textContent.includes(${JSON.stringify(QUESTION)})) n.querySelector(".codicon-notifications-clear").click(); return true; })()`,
          "main",
        );
        await waitFor("the refused dialog's notice closed", async () => !(await asked()));
        assertEqual(fs.readFileSync(notes(), "utf8"), onDisk, `the notes on disk after Undo asked (${what})`);
      };
      await restoreAllNotice();
      const typedAfter = `${READING_NOTES_TEXT}typed after Restore All\n`;
      await type("typed after Restore All\n");
      await undoAsks("unsaved words", READING_NOTES_TEXT);
      assert(doc.isDirty && doc.getText() === typedAfter, `the typed words kept: ${JSON.stringify(doc.getText())}`);
      await ui.request({ action: "screenshot", name: "undo-asks-before-overwriting" });
      // Saved, the words are asked about too: the file is no longer what the restore left.
      assert(await doc.save(), "the notes saved");
      await undoAsks("saved words", typedAfter);
      // The person takes the words out again: the file is what the restore left, and Undo goes
      // ahead without asking, bringing back the words saved before Restore All.
      const editor = await vscode.window.showTextDocument(doc);
      await editor.edit((e) => e.replace(new vscode.Range(0, 0, doc.lineCount, 0), READING_NOTES_TEXT));
      assert(await doc.save(), "the notes saved without the words");
      await ui.request({ action: "click", selector: `${NOTIFICATION} .monaco-button`, text: "Undo", frame: "main" });
      const beforeRestoreAll = `${undone}typed before Restore All\n`;
      await waitFor(
        "the notes back on disk after Undo",
        () => fs.readFileSync(notes(), "utf8") === beforeRestoreAll,
        20_000,
      );
      await shows("the editor after Undo", beforeRestoreAll);
      assert(!(await asked()), "an Undo that overwrites nothing of the person's asked");
      await vscode.commands.executeCommand("workbench.action.files.revert");
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
      // The edited text Restore All left in the input is not sent.
      await chat.fill("#composer textarea", "");
    },
    180_000,
  );

  suite.test(
    "a long streamed answer: scrolled up it stays, Latest goes back down and follows, a number typed in the auto-approve panel meanwhile stays, a panel below keeps the end in sight (Escape in the composer closes it), shown rows stay in place, a wide table scrolls sideways",
    async () => {
      assert(api, "the first test activated Dline");
      await vscode.commands.executeCommand("dline.newTask", "Explain the parser at length", PROFILE_ID);
      await chat.waitFor("the answer to stream", ".message.assistant", "Section 1");
      // Rows already in the page while the answer streams: counted when the page takes them out.
      await chat.evaluate(`(() => {
        window.__removedRows = 0;
        const user = document.querySelector("#messages .message.user");
        new MutationObserver((records) => {
          for (const r of records) for (const n of r.removedNodes) if (n === user) window.__removedRows++;
        }).observe(document.getElementById("messages"), { childList: true });
        return true;
      })()`);
      const scroll = () =>
        chat.evaluate<{ top: number; gap: number; jump: boolean }>(
          `(() => { const c = document.getElementById("messages"); const j = document.querySelector(".jump-latest"); return { top: c.scrollTop, gap: c.scrollHeight - c.scrollTop - c.clientHeight, jump: Boolean(j && !j.hidden && j.getBoundingClientRect().height > 0) }; })()`,
        );
      // The person scrolls up to read, once there is more than the view holds (how much has come
      // by "Section 1" depends on the machine's speed).
      await waitFor(
        "the answer to outgrow the view",
        () =>
          chat.evaluate<boolean>(
            `(() => { const c = document.getElementById("messages"); return c.scrollHeight - c.clientHeight > 200; })()`,
          ),
        20_000,
      );
      await chat.evaluate(
        `(() => { const c = document.getElementById("messages"); c.scrollTop = 40; c.dispatchEvent(new Event("scroll")); return true; })()`,
      );
      await waitFor("Latest to show while scrolled up", async () => (await scroll()).jump, 10_000);
      const before = await scroll();
      await new Promise((r) => setTimeout(r, 1500));
      const after = await scroll();
      assertEqual(after.top, before.top, "the place of a person reading up while the answer streams");
      assert(api.chat.state().status === "running", "the answer still streams (the script streams slowly)");
      await ui.request({ action: "screenshot", name: "long-answer-latest" });
      await chat.click(".jump-latest");
      await waitFor("the chat at its end after Latest", async () => (await scroll()).gap < 4, 5_000);
      // Rows that grow without a render (a code block highlighted, a table laid out), then the
      // scroll event of the last scroll to the end, a frame late: the chat still follows the end.
      const grown = await chat.evaluate<{ gap: number }>(
        `(() => { const c = document.getElementById("messages"); const d = document.createElement("div"); d.className = "grown-meanwhile"; d.style.height = "900px"; c.appendChild(d); c.dispatchEvent(new Event("scroll")); return { gap: c.scrollHeight - c.scrollTop - c.clientHeight }; })()`,
      );
      assert(
        grown.gap < 4,
        `the chat kept the end in sight when its rows grew before a late scroll event: ${JSON.stringify(grown)}`,
      );
      assert(!(await scroll()).jump, "Latest stays hidden while the chat follows the end");
      // A number typed into the auto-approve panel while the answer streams (the chat is drawn
      // again at each word) keeps its value, its focus and its place: the same field, caret at its end.
      await chat.click(`button[data-action="auto-approve-toggle"]`);
      await chat.evaluate(`(() => { document.querySelector(".max-requests").__typedInto = true; return true; })()`);
      await chat.click(".max-requests");
      await press("Control+A");
      await press("3");
      await press("5");
      const streamed = () =>
        api!.chat.state().items.reduce((n, i) => n + (i.type === "message" ? i.text.length : 0), 0);
      const streamedBefore = streamed();
      await new Promise((r) => setTimeout(r, 1500));
      assert(streamed() > streamedBefore, "the answer streamed on while the number was typed");
      await press("7");
      const field = () =>
        chat.evaluate<{ value: string; focused: boolean; same: boolean }>(
          `(() => { const f = document.querySelector(".max-requests"); return { value: f.value, focused: document.activeElement === f, same: f.__typedInto === true }; })()`,
        );
      assertEqual(
        await field(),
        { value: "357", focused: true, same: true },
        "the max requests field typed into while the answer streams",
      );
      await ui.request({ action: "screenshot", name: "auto-approve-typed-while-streaming" });
      // Enter commits it: the core's setting follows, and the field shows it.
      await press("Enter");
      const clients = await api.clients();
      await waitFor("the core's maxRequests to be 357", async () => {
        const { settings } = await clients.settings.getSettings({ scope: SettingsScope.GLOBAL });
        return (settings?.autoApprovalSettings as { maxRequests?: number } | undefined)?.maxRequests === 357;
      });
      assertEqual((await field()).value, "357", "the field after the setting was saved");
      // A number typed and left with Escape is not the setting: opened again, the field shows the setting.
      await press("Control+A");
      await press("9");
      await press("Escape");
      await chat.click(`button[data-action="auto-approve-toggle"]`);
      assertEqual((await field()).value, "357", "the field opened again after a number was typed and Escape pressed");
      await chat.click(`button[data-action="auto-approve-toggle"]`);
      await waitFor(
        "the answer to end",
        () =>
          api?.chat.state().status === "completed" &&
          api.chat.state().items.some((i) => i.type === "message" && i.text.includes(LONG_ANSWER_END)),
        60_000,
      );
      await new Promise((r) => setTimeout(r, 300));
      const end = await scroll();
      assert(end.gap < 4 && !end.jump, `the chat followed the answer to its end: ${JSON.stringify(end)}`);
      assertEqual(
        await chat.evaluate<number>("window.__removedRows"),
        0,
        "times the user's row was taken out of the page while the answer streamed",
      );
      // A panel opens below the conversation (auto-approval's settings): its end stays in sight.
      await chat.click(`button[data-action="auto-approve-toggle"]`);
      await new Promise((r) => setTimeout(r, 500));
      const withPanel = await scroll();
      assert(withPanel.gap < 4, `the end of the chat with the panel open: ${JSON.stringify(withPanel)}`);
      await ui.request({ action: "screenshot", name: "long-answer-panel-open" });
      // Escape in the composer closes the panel; the focus stays in the composer.
      await chat.click("#input");
      await press("Escape");
      assertEqual(
        await chat.evaluate<string>(
          `document.querySelector('[data-action="auto-approve-toggle"]').getAttribute("aria-expanded") + " " + Boolean(document.querySelector(".auto-approval-panel")) + " " + document.activeElement.id`,
        ),
        "false false input",
        "the auto-approve panel after Escape in the composer (expanded, panel shown, focus)",
      );
      // The answer's wide table scrolls sideways in its own box: its inline code stays on one line.
      const table = await chat.evaluate<{ overflow: string; scrolls: boolean; codeLines: number[] }>(`(() => {
        const wrap = document.querySelector(".message.assistant .table-wrap");
        if (!wrap) return { overflow: "no wrapper", scrolls: false, codeLines: [] };
        wrap.scrollIntoView({ block: "center" });
        return {
          overflow: getComputedStyle(wrap).overflowX,
          scrolls: wrap.scrollWidth > wrap.clientWidth,
          codeLines: [...wrap.querySelectorAll("td code")].map((c) => c.getClientRects().length),
        };
      })()`);
      assertEqual(table.overflow, "auto", "the table box's overflow-x");
      assert(
        table.scrolls && table.codeLines.length === 4 && table.codeLines.every((n) => n === 1),
        `the wide table scrolls sideways, its code on one line: ${JSON.stringify(table)}`,
      );
      await ui.request({ action: "screenshot", name: "wide-table-scrolls" });
      const scrolled = await chat.evaluate<number>(
        `(() => { const w = document.querySelector(".message.assistant .table-wrap"); w.scrollLeft = w.scrollWidth; return w.scrollLeft; })()`,
      );
      assert(scrolled > 0, `the table box scrolled sideways: scrollLeft ${scrolled}`);
      await ui.request({ action: "screenshot", name: "wide-table-scrolled" });
    },
    120_000,
  );

  suite.test("an answer cut at the model's output limit says so at its marker, and how to go on", async () => {
    assert(api, "the first test activated Dline");
    await vscode.commands.executeCommand("dline.newTask", CUT_TITLE, PROFILE_ID);
    await waitFor("the task to end", () => api?.chat.state().status === "completed", 60_000);
    const marker = await chat.waitFor("the cut-off marker", ".message.assistant .cut-off", "answer cut off here");
    assertEqual(marker.length, 1, "markers");
    const text = marker.join("");
    assert(
      text.includes("output token limit") && text.includes("go on"),
      `the marker says why and how to go on: ${JSON.stringify(text)}`,
    );
    await ui.request({ action: "screenshot", name: "cut-off-output-limit" });
  });

  suite.test(
    "history: the search stays after the open task is deleted; the keyboard focus stays on the row's buttons",
    async () => {
      assert(api, "the first test activated Dline");
      const open = api.chat.state().taskId;
      assert(open, "the cut-off task is open");
      await vscode.commands.executeCommand("dline.showHistory");
      await chat.waitFor("the history", ".history-row");
      await chat.fill(".history-search", "Summarize");
      await waitFor("the search's one row", async () => (await chat.texts(".history-row")).length === 1, 10_000);
      await press("Tab"); // the row
      await press("Tab"); // its favourite
      assertEqual(await focused(), `favorite @ ${CUT_TITLE}`, "the focus on the favourite");
      await press("Enter");
      await chat.waitFor("the favourite on", `.history-row [data-action="favorite"][aria-pressed="true"]`);
      assertEqual(await focused(), `favorite @ ${CUT_TITLE}`, "the focus after the favourite's list came back");
      const label = await chat.evaluate<string>(
        `document.querySelector('.history-row [data-action="favorite"]').getAttribute("aria-label")`,
      );
      assertEqual(label, "Favourite", "the favourite's accessible name");
      await press("Tab");
      await press("Enter"); // Delete: asks
      assertEqual(await focused(), `cancel-delete @ ${CUT_TITLE}`, "the focus on Keep when the delete asks");
      await press("Escape");
      assertEqual(await focused(), `delete @ ${CUT_TITLE}`, "the focus back on Delete after Escape");
      await press("Enter");
      await press("Shift+Tab"); // from Keep to Delete
      assertEqual(await focused(), `confirm-delete @ ${CUT_TITLE}`, "the focus on the confirmation");
      await ui.request({ action: "screenshot", name: "history-delete-confirm" });
      await press("Enter");
      await waitFor("the open task deleted", () => api?.chat.state().taskId !== open, 20_000);
      // The chat went back to its start screen (which lists recent tasks): the history keeps its search.
      await chat.waitFor("the search's empty result", `.history-list [data-empty="search"]`, "Summarize", 10_000);
      await new Promise((r) => setTimeout(r, 1000));
      const rows = await chat.texts(".history-row");
      assertEqual(rows.length, 0, `rows under the search "Summarize" after the delete: ${JSON.stringify(rows)}`);
      assertEqual(
        (await ui.request({ action: "values", selector: ".history-search", frame: "webview" }))[0],
        "Summarize",
        "the search box",
      );
      assertEqual(await focused(), "input", "the focus after the last row went (the search box)");
      await ui.request({ action: "screenshot", name: "history-search-kept-after-delete" });
    },
    120_000,
  );
}
