/**
 * The chat's flows after the first task, through the installed VSIX: Reject with feedback (the
 * exact command shown with its control characters visible, the feedback sent once and cleared,
 * the call Denied, the task going on), auto-approval from the chat with "Changed 1 file" opening
 * the applied change and tool rows opening their files, Plan/Act, the history inside the chat
 * (reopened tasks with their tool output, delete after a confirmation, empty states), and a
 * failed task retried with another model.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { SettingsScope } from "../../../../core/src/gen/dline/v1/settings_pb.js";
import type { ChatMessageItem } from "../chat/chat-state.js";
import { BACKUP_PROFILE_ID, type E2eContext } from "./e2e-context.js";
import { nth } from "../../../../test/helpers/items.js";
import { addOpenAiProfile, allTabs } from "./helpers.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";

const FEEDBACK = "please leave the build folder alone";

export function defineChatFlowTests(suite: TestSuite, t: E2eContext): void {
  let tidyTaskId = "";
  let footerTaskId = "";
  const rowsOf = (tool: string) =>
    t.chat.evaluate<{ status: string; text: string }[]>(
      `[...document.querySelectorAll('.tool-row[data-tool="${tool}"]')].map((r) => ({ status: r.dataset.status, text: r.textContent }))`,
    );

  suite.test(
    "Reject with feedback: the exact command with its control characters visible; the feedback goes once and leaves the box; the call reads Denied and the task goes on",
    async () => {
      await vscode.commands.executeCommand("dline.newTask");
      await t.chat.waitFor("the start screen", '[data-screen="start"]', "What should Dline do?");
      await t.chat.fill("#input", "Tidy up");
      await t.chat.click("#send");
      const ask = await waitFor(
        "the command approval",
        () => {
          const a = t.api.chat.state().pendingAsk;
          return a?.kind === "command" && a;
        },
        45_000,
      );
      tidyTaskId = t.api.chat.state().taskId ?? "";
      // The state has the ask before the webview has drawn it.
      await t.chat.waitFor("the command approval box", ".ask-command pre.command-line", "echo tidy");
      assertEqual(
        ask.command,
        { command: "echo tidy\x1b[2K > /dev/null", workingDirectory: t.workspace },
        "the ask's command line",
      );
      const shown = await t.chat.evaluate<{ line: string; controls: string[]; folder: string }>(`(() => {
      const box = document.querySelector(".ask-command");
      return { line: box.querySelector("pre.command-line").textContent, controls: [...box.querySelectorAll(".control-char")].map((c) => c.textContent), folder: box.querySelector(".tool-note").textContent };
    })()`);
      assertEqual(
        shown,
        { line: "$ echo tidy\\e[2K > /dev/null", controls: ["\\e"], folder: `in ${t.workspace}` },
        "the command as the chat shows it",
      );
      await t.chat.screenshots("command-approval");
      const before = (await t.modelRequests()).length;
      await t.chat.fill("#input", FEEDBACK);
      await t.chat.click('button[data-action="reject"]');
      await waitFor("the feedback box emptied", async () => (await t.chat.input()) === "");
      await waitFor(
        "the task to go on and complete",
        () =>
          t.api.chat.state().status === "completed" &&
          t.api.chat.state().items.some((i) => i.type === "message" && i.text.includes("Left the build folder alone")),
        45_000,
      );
      const rows = await rowsOf("execute_command");
      assertEqual(
        rows.map((r) => r.status),
        ["denied"],
        "the command row",
      );
      const row = nth(rows, 0, "command row");
      assert(row.text.includes("Denied with feedback") && row.text.includes(FEEDBACK), `the row: ${row.text}`);
      const state = t.api.chat.state();
      const feedbackRows = state.items.filter((i): i is ChatMessageItem => i.type === "message" && i.kind === "denied");
      assertEqual(
        feedbackRows.map((r) => r.text),
        [FEEDBACK],
        "feedback rows",
      );
      // The model heard the denial with the feedback once, in the request after it.
      const after = (await t.modelRequests()).slice(before);
      assert(after.length >= 1, "the model was asked again after the denial");
      assertEqual(
        JSON.stringify(nth(after, 0, "model request after the denial").body).split(FEEDBACK).length - 1,
        1,
        "the feedback in the request after the denial",
      );
      await t.chat.screenshots("denied");
    },
    120_000,
  );

  suite.test(
    "auto-approval from the chat: an edit runs without asking, its row says Changed 1 file and opens the applied change; the row's file link opens the file",
    async () => {
      await t.chat.click('[data-action="auto-approve-toggle"]');
      await t.chat.click('input[data-setting="editFiles"]');
      const clients = await t.api.clients();
      await waitFor("the core's auto-approval of edits", async () => {
        const s = (await clients.settings.getSettings({ scope: SettingsScope.GLOBAL })).settings as Record<string, any>;
        return s?.autoApprovalSettings?.editFiles === true && s.autoApprovalSettings.enabled === true;
      });
      await t.chat.waitFor("the summary", '[data-action="auto-approve-toggle"]', "Edit");
      await t.chat.screenshots("auto-approve");
      const requestsBefore = (await t.modelRequests()).length;
      await t.chat.fill("#input", "Add a footer");
      await t.chat.click("#send");
      await waitFor(
        "the footer task to complete",
        () =>
          t.api.chat.state().status === "completed" &&
          t.api.chat.state().items.some((i) => i.type === "message" && i.text.includes("footer.txt created")),
        45_000,
      );
      footerTaskId = t.api.chat.state().taskId ?? "";
      assert((await t.modelRequests()).length - requestsBefore === 2, "two model requests, no question in between");
      assertEqual(fs.readFileSync(path.join(t.workspace, "footer.txt"), "utf8"), "-- footer --\n", "footer.txt");
      const rows = await rowsOf("write_to_file");
      assert(
        rows.length === 1 && rows[0]?.status === "done" && rows[0].text.includes("Changed 1 file"),
        `the write row: ${JSON.stringify(rows)}`,
      );
      await t.chat.click('.tool-row[data-tool="write_to_file"] button[data-action="show-edits"]');
      const tab = await waitFor("the applied change's diff", () =>
        allTabs().find(
          (x) =>
            x.input instanceof vscode.TabInputTextDiff &&
            x.input.modified.scheme === "dline-proposed" &&
            x.label.startsWith("footer.txt"),
        ),
      );
      const diff = tab.input as vscode.TabInputTextDiff;
      assertEqual(
        [
          (await vscode.workspace.openTextDocument(diff.original)).getText(),
          (await vscode.workspace.openTextDocument(diff.modified)).getText(),
        ],
        ["", "-- footer --\n"],
        "the applied change",
      );
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
      await t.chat.click('.tool-row[data-tool="write_to_file"] a.file-link', "footer.txt");
      await waitFor(
        "footer.txt open in the editor",
        () => vscode.window.activeTextEditor?.document.uri.fsPath === path.join(t.workspace, "footer.txt"),
      );
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    },
    120_000,
  );

  suite.test("Plan/Act in the chat sets the mode for new tasks and the open one", async () => {
    const clients = await t.api.clients();
    const mode = async () => [
      (await clients.settings.resolveSetting({ key: "mode", taskId: tidyTaskId, workspaceRoot: t.workspace })).value
        ?.kind.value,
      (await clients.settings.resolveSetting({ key: "mode", workspaceRoot: t.workspace })).value?.kind.value,
    ];
    await t.chat.click('button[data-mode="plan"]');
    await waitFor(
      "plan mode in the core",
      async () => JSON.stringify(await mode()) === JSON.stringify(["plan", "plan"]),
    );
    await t.chat.waitFor("Plan pressed", 'button[data-mode="plan"][aria-pressed="true"]');
    await t.chat.click('button[data-mode="act"]');
    await waitFor("act mode in the core", async () => JSON.stringify(await mode()) === JSON.stringify(["act", "act"]));
  });

  suite.test(
    "history in the chat: empty search state, a reopened task shows its tool calls' status and output",
    async () => {
      await vscode.commands.executeCommand("dline.showHistory");
      // The list shown before (the start screen's) is replaced by the core's answer: wait for it.
      await waitFor("the history rows", async () => {
        const rows = await t.chat.texts("#history-screen .history-row");
        return rows.some((r) => r.includes("Greet the world")) && rows.some((r) => r.includes("Tidy up")) && rows;
      });
      await t.chat.screenshots("history");
      await t.chat.fill("#history-screen .history-search", "zebra-no-such-task");
      await t.chat.waitFor("the empty search state", '#history-screen [data-empty="search"]', "No task matches");
      await t.chat.fill("#history-screen .history-search", "");
      await t.chat.waitFor("the rows again", "#history-screen .history-row", "Greet the world");
      // The Tidy up task, continued with "Add a footer" (the first task was rewound by Restore Chat: its calls are gone).
      await vscode.commands.executeCommand("dline.newTask");
      await vscode.commands.executeCommand("dline.showHistory");
      // The history screen shows again and its list is drawn anew: the row is clicked once it is shown.
      const footerRow = `#history-screen .history-row[data-task-id="${footerTaskId}"]`;
      await t.chat.waitFor("the footer task's row shown", footerRow, "Tidy up");
      await t.chat.click(`${footerRow} .history-open`);
      await waitFor("the footer task open", () => t.api.chat.state().taskId === footerTaskId);
      const tools = await waitFor("its tool rows", async () => {
        const r = await t.chat.evaluate<{ tool: string; status: string; output: string }[]>(
          `[...document.querySelectorAll(".tool-row")].map((r) => ({ tool: r.dataset.tool, status: r.dataset.status, output: r.querySelector(".tool-output pre")?.textContent ?? "" }))`,
        );
        return r.length >= 2 && r;
      });
      assertEqual(
        tools.map((r) => `${r.tool} ${r.status}`),
        ["execute_command denied", "write_to_file done"],
        "the reopened task's tool rows",
      );
      const recorded =
        t.api.chat
          .state()
          .items.find((i): i is ChatMessageItem => i.type === "message" && i.toolCall?.tool === "write_to_file")
          ?.toolCall?.output ?? "";
      const writeRow = nth(tools, 1, "tool row");
      assert(
        recorded.length > 0 && writeRow.output.trim() === recorded.trim(),
        `the write_to_file output: shown ${JSON.stringify(writeRow.output)}, recorded ${JSON.stringify(recorded)}`,
      );
      const denied = await rowsOf("execute_command");
      assert(denied[0]?.text.includes(FEEDBACK), `the reopened denial keeps its feedback: ${denied[0]?.text}`);
    },
  );

  suite.test("deleting from the history asks first: Keep keeps the task, Delete deletes it", async () => {
    await vscode.commands.executeCommand("dline.showHistory");
    const row = `#history-screen .history-row[data-task-id="${tidyTaskId}"]`;
    await t.chat.waitFor("the Tidy up row", row);
    await t.chat.click(`${row} button[data-action="delete"]`);
    await t.chat.waitFor("the confirmation", `${row}.confirming`, "Delete this task and its checkpoints?");
    await t.chat.screenshots("history-confirm");
    await t.chat.click(`${row} button[data-action="cancel-delete"]`);
    await waitFor("the row back", async () => (await t.chat.texts(`${row}.confirming`)).length === 0);
    assert(
      (await t.api.history.list()).some((x) => x.id === tidyTaskId),
      "kept after Keep",
    );
    // The History tree's Delete asks with a dialog first (VS Code refuses dialogs in tests: nothing is deleted).
    const deleted = await vscode.commands.executeCommand<string[] | undefined>("dline.history.delete", tidyTaskId);
    assert(!deleted?.length, `deleted without a confirmation: ${JSON.stringify(deleted)}`);
    assert(
      (await t.api.history.list()).some((x) => x.id === tidyTaskId),
      "kept after a refused dialog",
    );
    await t.chat.click(`${row} button[data-action="delete"]`);
    await t.chat.click(`${row} button[data-action="confirm-delete"]`);
    await waitFor("the task gone", async () => !(await t.api.history.list()).some((x) => x.id === tidyTaskId));
    await waitFor("the row gone", async () => (await t.chat.texts(row)).length === 0);
    await t.chat.click('[data-action="close-history"]');
  });

  suite.test(
    "a failed task offers Retry; switching its model in the picker retries with that model",
    async () => {
      const clients = await t.api.clients();
      await addOpenAiProfile(
        clients,
        {
          id: BACKUP_PROFILE_ID,
          name: BACKUP_PROFILE_ID,
          baseUrl: t.modelUrl,
          model: "backup-model",
          contextWindow: 50_000n,
        },
        t.apiKey,
      );
      await vscode.commands.executeCommand("dline.newTask");
      await t.chat.fill("#input", "Fail first");
      await t.chat.click("#send");
      await waitFor("the task to fail", () => t.api.chat.state().status === "failed", 45_000);
      const failedId = t.api.chat.state().taskId ?? "";
      await t.chat.waitFor("Retry", 'button[data-action="retry"]');
      await t.chat.assertButtonsVisible("dark", ["Retry"]);
      await t.chat.screenshots("failed");
      const options = await t.chat.evaluate<string[]>(
        `[...document.querySelectorAll(".model-select option")].map((o) => o.value)`,
      );
      assert(options.includes(BACKUP_PROFILE_ID), `the picker's models: ${JSON.stringify(options)}`);
      await t.chat.evaluate(
        `(() => { const s = document.querySelector(".model-select"); s.value = ${JSON.stringify(BACKUP_PROFILE_ID)}; s.dispatchEvent(new Event("change")); return true; })()`,
      );
      await waitFor(
        "the task's model switched",
        async () => (await clients.tasks.getTask({ taskId: failedId })).profileId === BACKUP_PROFILE_ID,
      );
      await t.chat.click('button[data-action="retry"]');
      await waitFor(
        "the retried task to complete",
        () =>
          t.api.chat.state().status === "completed" &&
          t.api.chat.state().items.some((i) => i.type === "message" && i.text.includes("Done with the backup")),
        45_000,
      );
      const last = (await t.modelRequests()).at(-1);
      assertEqual(last?.body.model, "backup-model", "the model of the retried request");
    },
    120_000,
  );

  suite.test(
    "a file with unsaved changes in the editor: the core refuses the task's edit of it; the chat shows the call failed; the disk and the editor keep their text",
    async () => {
      const draft = path.join(t.workspace, "draft.txt");
      fs.writeFileSync(draft, "draft\n");
      const document = await vscode.workspace.openTextDocument(draft);
      const editor = await vscode.window.showTextDocument(document);
      await editor.edit((b) => b.insert(new vscode.Position(0, 0), "my words "));
      assert(document.isDirty, "draft.txt has unsaved changes");
      const requestsBefore = (await t.modelRequests()).length;
      await vscode.commands.executeCommand("dline.newTask");
      await t.chat.fill("#input", "Touch the draft");
      await t.chat.click("#send");
      await waitFor(
        "the draft task to complete",
        () =>
          t.api.chat.state().status === "completed" &&
          t.api.chat.state().items.some((i) => i.type === "message" && i.text.includes("draft.txt left alone")),
        45_000,
      );
      const row = await waitFor("the write row drawn failed", async () => {
        const r = await rowsOf("write_to_file");
        return r.length === 1 && r[0]?.status === "failed" && r[0];
      });
      assert(row.text.includes("unsaved changes"), `the write row: ${row.text}`);
      assertEqual(fs.readFileSync(draft, "utf8"), "draft\n", "draft.txt on disk");
      assertEqual(document.getText(), "my words draft\n", "draft.txt in the editor");
      const after = (await t.modelRequests()).slice(requestsBefore);
      assert(
        after.length === 2 && JSON.stringify(after[1]?.body).includes("has unsaved changes in the user's editor"),
        "the model read why the edit was refused",
      );
      await vscode.commands.executeCommand("workbench.action.files.revert");
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    },
    120_000,
  );
}
