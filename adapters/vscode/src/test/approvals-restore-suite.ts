/**
 * Approvals in a long chat and restores of the person's own edits, through the installed VSIX:
 * the step being approved shows above the approval panel, which is never squeezed; an edit too
 * large to preview opens as a plain-text notice that goes with the proposal; a reject's feedback
 * shows once; Restore Files Only asks first (naming the files it overwrites), closes a Compare
 * opened before it, and its notice's Undo brings the person's edits back.
 *
 * Environment: DLINE_E2E_MODEL_URL, DLINE_E2E_API_KEY (the scripted model of test/vscode/e2e.test.ts).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { CheckpointKind } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import type { DlineApi } from "../api.js";
import { ChatUi } from "./chat-ui.js";
import { activateDline, addScriptedProfile, allTabs, NOTIFICATION, notificationTexts } from "./helpers.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";
import { UiBridge } from "./ui-bridge.js";

const PROFILE_ID = "scripted";
/** The feedback typed with the reject (the model script of test/vscode/e2e.test.ts answers it). */
export const REJECT_FEEDBACK = "No commands please, just write the file.";
const MENU_ROWS = ".quick-input-widget .monaco-list-row";

/** Where the newest row and the approval panel are, in the chat's document. */
interface AskLayout {
  lastRow: string;
  lastTop: number;
  lastBottom: number;
  messagesTop: number;
  messagesBottom: number;
  overflowing: boolean;
  askScrollHeight: number;
  askClientHeight: number;
  askBottom: number;
  buttons: { label: string; top: number; bottom: number }[];
  viewport: number;
}

const ASK_LAYOUT = `(() => {
  const messages = document.getElementById("messages");
  const ask = document.getElementById("ask");
  const rows = [...messages.querySelectorAll(".message")];
  const last = rows[rows.length - 1];
  const m = messages.getBoundingClientRect();
  const l = last.getBoundingClientRect();
  const a = ask.getBoundingClientRect();
  return {
    lastRow: last.innerText.slice(0, 120),
    lastTop: l.top,
    lastBottom: l.bottom,
    messagesTop: m.top,
    messagesBottom: m.bottom,
    overflowing: messages.scrollHeight > messages.clientHeight + 40,
    askScrollHeight: ask.scrollHeight,
    askClientHeight: ask.clientHeight,
    askBottom: a.bottom,
    buttons: [...ask.querySelectorAll("button[data-action=approve], button[data-action=reject]")].map((b) => {
      const r = b.getBoundingClientRect();
      return { label: b.textContent, top: r.top, bottom: r.bottom };
    }),
    viewport: window.innerHeight,
  };
})()`;

/** What is wrong with the layout while an approval waits (empty: the step and the panel both show in full). */
function askLayoutProblems(l: AskLayout, rowText: string): string[] {
  const problems: string[] = [];
  if (!l.overflowing) problems.push("the chat is not long enough to scroll (the check would prove nothing)");
  if (!l.lastRow.includes(rowText)) problems.push(`the newest row is not the step asked about: ${l.lastRow}`);
  if (l.lastBottom > l.messagesBottom + 1 || l.lastTop < l.messagesTop)
    problems.push(
      `the newest row (${l.lastTop}..${l.lastBottom}) is not inside the conversation's view (${l.messagesTop}..${l.messagesBottom})`,
    );
  if (l.askScrollHeight > l.askClientHeight + 1)
    problems.push(`the approval panel is squeezed: ${l.askClientHeight} px shown of ${l.askScrollHeight} px`);
  if (l.buttons.length !== 2) problems.push(`approval buttons: ${JSON.stringify(l.buttons)}`);
  for (const b of l.buttons)
    if (b.bottom > l.askBottom + 1 || b.bottom > l.viewport)
      problems.push(`${b.label} is cut off (bottom ${b.bottom}, panel ${l.askBottom}, view ${l.viewport})`);
  return problems;
}

export function defineApprovalsRestoreSuite(suite: TestSuite, outDir: string): void {
  const ui = new UiBridge(outDir);
  const chat = new ChatUi(ui);
  let api: DlineApi | undefined;
  let taskId = "";
  const root = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  const pending = (kind: string) =>
    waitFor(
      `the ${kind} approval`,
      () => {
        const ask = api?.chat.state().pendingAsk;
        return ask?.kind === kind && ask;
      },
      60_000,
    );
  const assertAskLayout = async (rowText: string, shot: string) => {
    let last: AskLayout | undefined;
    await waitFor(
      "the step asked about above a full approval panel",
      async () => {
        last = await chat.evaluate<AskLayout>(ASK_LAYOUT);
        return askLayoutProblems(last, rowText).length === 0;
      },
      10_000,
    ).catch(() => {
      throw new Error(`${askLayoutProblems(last!, rowText).join("; ")} (${JSON.stringify(last)})`);
    });
    fs.writeFileSync(path.join(outDir, `${shot}.json`), JSON.stringify(last, null, 2));
    await ui.request({ action: "screenshot", name: shot });
  };

  suite.test(
    "an approval in a long chat: the step asked about shows above the whole panel; an edit too large to preview opens as a plain-text notice that goes with the proposal",
    async () => {
      api = await activateDline();
      await addScriptedProfile(api, PROFILE_ID);
      await chat.waitFor("the start screen", '[data-screen="start"]', "What should Dline do?");
      await chat.fill("#input", "Write the long file");
      await chat.click("#send");
      const ask = await pending("tool");
      taskId = api.chat.state().taskId ?? "";
      assertEqual(
        ask.edits.map((e) => [e.path, e.truncated]),
        [["generated/long.js", true]],
        "the edit asked about (too large to preview)",
      );
      await chat.waitFor("the approval panel", ".ask-tool", "generated/long.js");
      // Each check is noted and the approval answered whatever it found, so the next test starts where it should.
      const problems: string[] = [];
      const check = (work: Promise<unknown>) => work.catch((err: Error) => problems.push(err.message));
      // Its sizes say what it changes (a new file, and how large), in the panel as in the diff.
      const size = ask.edits[0]?.proposedSize ?? 0;
      const sizes = `new file; ${size.toLocaleString("en")} bytes after`;
      if (!(size > 256 * 1024 && ask.edits[0]?.originalSize === 0))
        problems.push(`the sizes of the edit: ${JSON.stringify(ask.edits[0])?.slice(0, 300)}`);
      await check(chat.waitFor("the sizes in the approval panel", ".ask-tool .left-out", `(${sizes})`, 10_000));
      await check(assertAskLayout("long.js", "approval-long-chat"));

      // The diff shows a notice in plain-text documents: no language service reads it as JavaScript.
      const docs = await waitFor("the proposal's two sides open", () => {
        const open = vscode.workspace.textDocuments.filter(
          (d) => d.uri.scheme === "dline-proposed" && d.uri.query.includes("side=proposal"),
        );
        return open.length === 2 && open;
      });
      for (const doc of docs)
        await check(
          (async () => {
            assertEqual(doc.languageId, "plaintext", `the language of ${doc.uri.toString()}`);
            assert(doc.getText().includes(`too large to preview here (${sizes})`), `the notice: ${doc.getText()}`);
          })(),
        );
      await ui.request({ action: "screenshot", name: "approval-too-large-diff" });

      await chat.click('button[data-action="approve"]');
      // Answered: its diff closes and its documents no longer hold the notice.
      await waitFor(
        "the proposal's diff closed",
        () => !allTabs().some((t) => t.label.startsWith("long.js") && t.label.includes("proposed change")),
        10_000,
      );
      for (const doc of docs)
        await check(
          waitFor(`the documents of the answered proposal dropped (${doc.uri.toString()})`, async () =>
            (await vscode.workspace.openTextDocument(doc.uri)).getText().includes("no longer available"),
          ),
        );
      await waitFor("long.js written", () => fs.existsSync(path.join(root(), "generated", "long.js")), 30_000);
      assertEqual(problems, [], "what the approval showed");
    },
    180_000,
  );

  suite.test(
    "a command rejected with feedback: the command row shows above the panel, and the feedback shows once, on the denied row",
    async () => {
      assert(api, "the first test activated Dline");
      await pending("command");
      await chat.waitFor("the command approval panel", ".ask-command pre.command-line", "echo cleanup");
      const layout = await assertAskLayout("echo cleanup", "approval-command-long-chat").catch((err: Error) => err);
      await chat.fill("#input", REJECT_FEEDBACK);
      await chat.click('button[data-action="reject"]');
      await waitFor("the task to complete", () => api?.chat.state().status === "completed", 60_000);
      await chat.waitFor("the completion", ".message.completion", "Wrote it without commands");
      const shown = await chat.evaluate<{ times: number; cards: number; onRow: string[] }>(`(() => {
        const text = document.getElementById("messages").innerText;
        return {
          times: text.split(${JSON.stringify(REJECT_FEEDBACK)}).length - 1,
          cards: document.querySelectorAll("#messages .message.feedback").length,
          onRow: [...document.querySelectorAll("#messages .tool-row .tool-feedback")].map((n) => n.textContent),
        };
      })()`);
      assertEqual(
        shown,
        { times: 1, cards: 0, onRow: [`Denied with feedback ${REJECT_FEEDBACK}`] },
        "the feedback in the chat",
      );
      if (layout instanceof Error) throw layout;
      await ui.request({ action: "screenshot", name: "denied-feedback-once" });
    },
    120_000,
  );

  suite.test(
    "Restore Files Only asks first, naming the files it overwrites; it closes a Compare opened before; Undo on its notice brings the person's edits back",
    async () => {
      assert(api, "the first test activated Dline");
      const clients = await api.clients();
      const long = path.join(root(), "generated", "long.js");
      // The person's own edit of the file the task wrote, after the task.
      const edited = `${fs.readFileSync(long, "utf8")}// my own line\n`;
      fs.writeFileSync(long, edited);
      const baseline = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints.find(
        (c) => c.kind === CheckpointKind.BASELINE,
      );
      assert(baseline, "no baseline checkpoint");
      const compared = await api.chat.compare(baseline.id);
      assertEqual(
        compared.map((d) => d.path),
        ["generated/long.js"],
        "Compare's files",
      );
      await waitFor("the Compare diff open", () => allTabs().some((t) => t.label.startsWith("Changes since snapshot")));
      // Kept open (a Compare opens as a preview, which the next editor replaces), then a second
      // Compare, with the task's last checkpoint: its tab reads apart from the first's.
      await vscode.commands.executeCommand("workbench.action.keepEditor");
      const listed = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints;
      const last = listed.filter((c) => c.hasFiles).at(-1)!;
      assert(last.id !== baseline.id, "the task saved a checkpoint after its baseline");
      const second = await api.chat.compare(last.id);
      const compareTabs = await waitFor("two Compare tabs", () => {
        const labels = allTabs()
          .map((t) => t.label)
          .filter((l) => l.startsWith("Changes since snapshot"));
        return labels.length === 2 && labels;
      }).catch((err: Error) => {
        const shown = JSON.stringify({ tabs: allTabs().map((t) => t.label), second: second.map((d) => d.path) });
        throw new Error(`${err.message}: ${shown}`);
      });
      assert(
        compareTabs[0] !== compareTabs[1] &&
          compareTabs.some((l) => l.startsWith("Changes since snapshot (task start, ")),
        `the Compare tabs: ${JSON.stringify(compareTabs)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await ui.request({ action: "screenshot", name: "two-compares" });

      // The chat's Restore → More options → Restore Files Only asks with a modal dialog first.
      // VS Code refuses modal dialogs while extension tests run ("refused to show dialog in
      // tests. Contents: <its message>", said as an error): that the dialog was asked, and that
      // nothing was restored without its answer, is checked here; the confirmed restore is then
      // the command with its mode, as a keybinding passes it.
      await chat.click(`.checkpoint[data-checkpoint-id="${baseline.id}"] button[data-action="restore"]`);
      await waitFor("the restore menu", async () =>
        (await ui.request({ action: "texts", selector: MENU_ROWS, frame: "main" })).some((t) =>
          t.includes("More options"),
        ),
      );
      await ui.request({ action: "click", selector: MENU_ROWS, text: "More options", frame: "main" });
      await waitFor("the More options menu", async () =>
        (await ui.request({ action: "texts", selector: MENU_ROWS, frame: "main" })).some((t) =>
          t.includes("Restore Files Only"),
        ),
      );
      await ui.request({ action: "click", selector: MENU_ROWS, text: "Restore Files Only", frame: "main" });
      await waitFor("the confirmation asked", async () =>
        (await notificationTexts(ui)).some((t) => t.includes("Contents: Restore the files to this checkpoint?")),
      );
      await ui.request({ action: "screenshot", name: "restore-confirm-refused" });
      assert(
        fs.existsSync(long) && fs.readFileSync(long, "utf8") === edited,
        "long.js is still there, with the person's line, without a confirmation",
      );
      await vscode.commands.executeCommand("notifications.clearAll");
      await vscode.commands.executeCommand("notifications.hideList");

      // Confirmed: the files go back to the checkpoint, and the Compare of before goes.
      assert(
        await vscode.commands.executeCommand<boolean>("dline.restore", baseline.id, "files"),
        "Restore Files Only did nothing",
      );
      await waitFor("long.js (created since the checkpoint) deleted", () => !fs.existsSync(long), 5_000);
      await waitFor(
        "the stale Compare closed",
        () => !allTabs().some((t) => t.label.startsWith("Changes since snapshot")),
        10_000,
      ).catch(() => {
        throw new Error(`tabs after the restore: ${JSON.stringify(allTabs().map((t) => t.label))}`);
      });

      // Undo on the notice: the person's line and the task's file come back.
      await waitFor("the restore's notice with Undo", async () =>
        (await notificationTexts(ui)).some(
          (t) => t.includes("files restored to the checkpoint (1 file)") && t.includes("Undo"),
        ),
      );
      await ui.request({ action: "screenshot", name: "restore-undo-notice" });
      await ui.request({ action: "click", selector: `${NOTIFICATION} .monaco-button`, text: "Undo", frame: "main" });
      await waitFor(
        "long.js back, with the person's line",
        () => fs.existsSync(long) && fs.readFileSync(long, "utf8") === edited,
      );
      await waitFor("the notice of the undo", async () =>
        (await notificationTexts(ui)).some((t) => t.includes("restore undone")),
      );
      await ui.request({ action: "screenshot", name: "restore-undone" });
    },
    180_000,
  );

  suite.test(
    "Restore All on the first message: it asks first; the chat says the task goes on from what is sent, and Undo on its notice brings the person's files back",
    async () => {
      assert(api, "the first test activated Dline");
      const first = api.chat.state().items.find((i) => i.type === "message" && i.role === "user");
      assert(first && first.type === "message", "the first user message");
      const edited = "Write the long file again, shorter";
      // The task's file, with the line the person added (the test before): Restore All removes it.
      const long = path.join(root(), "generated", "long.js");
      const before = fs.readFileSync(long, "utf8");
      // The notices of the restores before (theirs have Undo too) go first.
      await vscode.commands.executeCommand("notifications.clearAll");
      await vscode.commands.executeCommand("notifications.hideList");
      await chat.click(`.message.user[data-message-id="${first.id}"]`);
      await chat.fill(".edit-box textarea", edited);
      await chat.click(".edit-box button", "Restore All");
      // Restore All overwrites the person's edits: it asks first, as the checkpoint menu's Restore
      // does (before, it restored at once). VS Code refuses modal dialogs while extension tests
      // run: that it asked, and that nothing changed unasked, is checked here (test/vscode's
      // e2e.test.ts answers the question as a person does); the confirmed Restore All is then the
      // command with its mode, as a key binding passes it.
      await waitFor("Restore All's question asked", async () =>
        (await notificationTexts(ui)).some((t) =>
          t.includes("Contents: Restore the files and the conversation to before this message?"),
        ),
      ).catch(async () => {
        throw new Error(`Restore All did not ask; notices: ${JSON.stringify(await notificationTexts(ui))}`);
      });
      await ui.request({ action: "screenshot", name: "restore-all-question-refused" });
      assertEqual(fs.readFileSync(long, "utf8"), before, "long.js without an answer");
      assert(
        api.chat.state().items.some((i) => i.type === "message" && i.id === first.id),
        "the first message is still there without an answer",
      );
      // The edit box stays, with the edited text, for the person to try again or cancel.
      assertEqual(
        await chat.evaluate<string>(`document.querySelector(".edit-box textarea")?.value ?? "(no edit box)"`),
        edited,
        "the edit box after the question",
      );
      await vscode.commands.executeCommand("notifications.clearAll");
      await vscode.commands.executeCommand("notifications.hideList");
      assert(
        await vscode.commands.executeCommand<boolean>("dline.editMessage", first.id, edited, "all"),
        "Restore All did nothing",
      );
      await waitFor("the conversation rewound to before its first message", () => api!.chat.state().items.length === 0);
      // Not "Loading the task…" for good (the task is loaded; it has no messages now).
      const shown = await chat.waitFor("the empty chat's line", "#messages .empty", "continues the task");
      assert(!shown.some((t) => t.includes("Loading")), `the empty chat reads ${JSON.stringify(shown)}`);
      // Nothing to resume there: no Resume beside that line (it would call the model without the edited text).
      assertEqual(
        await chat.texts("#resume, .task-ended"),
        [],
        "Resume offered for a task rewound to before its first message",
      );
      // Its first message gone, the task is no longer named by it, in the chat nor in the History.
      const taskId = api.chat.state().taskId;
      assertEqual(api.chat.state().title, "", "the chat's title once the first message is gone");
      const listed = (await (await api.clients()).history.listTasks({})).tasks.find((t) => t.id === taskId);
      assertEqual(listed?.title, "", "the History's title once the first message is gone");
      // Restore All did not send the edit (the chat's Restore All leaves it in the input: e2e.test.ts).
      const { messages } = await (await api.clients()).tasks.getTask({ taskId });
      assert(!messages.some((m) => m.text === edited), "the edited text was not sent");
      await ui.request({ action: "screenshot", name: "restore-all-first-message" });
      // Restore All overwrote the person's edits: its notice's Undo brings them back.
      await waitFor("long.js removed by Restore All", () => !fs.existsSync(long), 5_000);
      await waitFor("Restore All's notice with Undo", async () =>
        (await notificationTexts(ui)).some(
          (t) => t.includes("files restored to the checkpoint (1 file)") && t.includes("Undo"),
        ),
      );
      await ui.request({ action: "click", selector: `${NOTIFICATION} .monaco-button`, text: "Undo", frame: "main" });
      await waitFor(
        "long.js back as the person left it",
        () => fs.existsSync(long) && fs.readFileSync(long, "utf8") === before,
      );
    },
    120_000,
  );
}
