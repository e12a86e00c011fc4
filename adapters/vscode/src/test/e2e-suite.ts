/**
 * The end-to-end suite, run inside a real VS Code extension host (code-server, the suite loaded
 * through the workbench's extensionTestsPath) with Dline installed from its VSIX. It drives the
 * extension the way a person does (the chat webview, commands, quick picks, the diff editor's
 * title bar) against the sidecar the VSIX carries and the scripted model server that
 * test/vscode/e2e.test.ts started, checks the files on disk and what the core stored, and saves
 * screenshots of each view in the light and the dark theme.
 *
 * Environment (set by the harness): DLINE_E2E_OUT (output folder), DLINE_E2E_MODEL_URL,
 * DLINE_E2E_API_KEY, DLINE_E2E_USER_DATA, DLINE_E2E_INSTALLED, and the isolated DLINE_DIR /
 * DLINE_HOME_DIR / DLINE_DOCS_DIR / HOME.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { CheckpointKind } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { SettingsScope, ToggleScope, ToggleState } from "../../../../core/src/gen/dline/v1/settings_pb.js";
import { nth } from "../../../../test/helpers/items.js";
import { clineHomeData, writeLegacyTask } from "../../../../test/import/fixtures.js";
import type { ShownDiff } from "../checkpoints/diff-presenter.js";
import { defineChatFlowTests } from "./chat-flows-suite.js";
import { E2eContext, PROFILE_ID } from "./e2e-context.js";
import { defineFirstRunTests } from "./first-run-suite.js";
import {
  activateDline,
  modelRequests,
  notificationTexts,
  processExists,
  required,
  waitForGeneration,
  waitForTab,
} from "./helpers.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";
import { UiBridge } from "./ui-bridge.js";

export function defineE2eSuite(suite: TestSuite, outDir: string): void {
  const e2e = new E2eContext(outDir);
  const ui = e2e.ui;
  const workspace = e2e.workspace;
  const file = (name: string) => path.join(workspace, name);

  defineFirstRunTests(suite, e2e);

  suite.test("history lists the task; search and favourite work", async () => {
    const listed = await waitFor("the task in history", async () =>
      (await e2e.api.history.list()).find((t) => t.id === e2e.taskId),
    );
    assertEqual(listed.title, "Greet the world", "history title");
    await vscode.commands.executeCommand("dline.history.search", "zebra-no-such-task");
    assertEqual((await e2e.api.history.list()).length, 0, "tasks matching a search that matches nothing");
    await vscode.commands.executeCommand("dline.history.search", "greet");
    assertEqual(
      (await e2e.api.history.list()).map((t) => t.id),
      [e2e.taskId],
      "tasks matching 'greet'",
    );
    await vscode.commands.executeCommand("dline.history.clearSearch");
    await vscode.commands.executeCommand("dline.history.toggleFavorite", e2e.taskId);
    await waitFor(
      "the favourite flag",
      async () => (await e2e.api.history.list()).find((t) => t.id === e2e.taskId)?.favorite === true,
    );
  });

  suite.test('Compare opens the native diff "Changes since snapshot" with the checkpoint on the left', async () => {
    const clients = await e2e.api.clients();
    const checkpoints = (await clients.checkpoints.listCheckpoints({ taskId: e2e.taskId })).checkpoints;
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE);
    assert(baseline, `no baseline checkpoint among ${checkpoints.map((c) => CheckpointKind[c.kind]).join(", ")}`);
    e2e.baselineId = baseline.id;
    // From the chat: the Compare button of the first turn's marker (shown on hover).
    const firstTurn = checkpoints.find((c) => c.kind === CheckpointKind.TURN);
    assert(firstTurn, "no turn checkpoint");
    await ui.request({
      action: "click",
      selector: `.checkpoint[data-checkpoint-id="${firstTurn.id}"] button[data-action="compare"]`,
      frame: "webview",
    });
    await waitForTab("Changes since snapshot");
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    const shown = (await vscode.commands.executeCommand<ShownDiff[]>("dline.compare", e2e.baselineId)) ?? [];
    assertEqual(shown.map((d) => d.path).sort(), ["hello.txt", "notes.md"], "compared paths");
    const hello = shown.find((d) => d.path === "hello.txt")!;
    assertEqual(hello.original.scheme, "dline-checkpoint", "left side scheme");
    assertEqual(
      (await vscode.workspace.openTextDocument(hello.original)).getText(),
      "hello\n",
      "left side (checkpoint) of hello.txt",
    );
    assertEqual(hello.modified.scheme, "file", "right side is the workspace file");
    assertEqual(
      (await vscode.workspace.openTextDocument(hello.modified)).getText(),
      "hello, world\n",
      "right side of hello.txt",
    );
    const notes = shown.find((d) => d.path === "notes.md")!;
    assertEqual((await vscode.workspace.openTextDocument(notes.original)).getText(), "", "left side of an added file");
    // The multi-file diff editor's tab reads "<title> (N files)"; per-file diffs "<path> (<title>)".
    const tab = await waitForTab("Changes since snapshot");
    const diffs = (tab.input as { textDiffs?: vscode.TabInputTextDiff[] }).textDiffs;
    if (diffs)
      assertEqual(
        diffs.map((d) => d.original.scheme),
        ["dline-checkpoint", "dline-checkpoint"],
        "left sides of the multi-file diff",
      );
    await ui.request({ action: "screenshot", name: "compare" });
  });

  suite.test('View Changes opens "New changes"', async () => {
    const shown = (await vscode.commands.executeCommand<ShownDiff[]>("dline.viewChanges")) ?? [];
    assert(
      shown.some((d) => d.path === "hello.txt"),
      `View Changes shows hello.txt (got ${shown.map((d) => d.path).join(", ")})`,
    );
    await waitForTab("New changes");
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  });

  suite.test(
    "Restore through the menu: More options → Restore Files Only reverts the files, keeps the chat",
    async () => {
      const itemsBefore = e2e.api.chat.state().items.length;
      // The Restore button of the baseline's marker (after the first message) opens the menu.
      await ui.request({
        action: "click",
        selector: `.checkpoint[data-checkpoint-id="${e2e.baselineId}"] button[data-action="restore"]`,
        frame: "webview",
      });
      const rows = ".quick-input-widget .monaco-list-row";
      const first = await waitFor("the restore menu", async () => {
        const texts = await ui.request({ action: "texts", selector: rows, frame: "main" });
        return texts.some((t) => t.includes("More options")) && texts;
      });
      assert(
        first.some(
          (t) => t.includes("Restore Files & Task") && t.includes("Revert files and clear messages after this point"),
        ),
        `menu: ${JSON.stringify(first)}`,
      );
      await ui.request({ action: "click", selector: rows, text: "More options", frame: "main" });
      const more = await waitFor("the More options menu", async () => {
        const texts = await ui.request({ action: "texts", selector: rows, frame: "main" });
        return texts.some((t) => t.includes("Restore Files Only")) && texts;
      });
      assert(
        more.some((t) => t.includes("Revert files to this checkpoint")),
        `more options: ${JSON.stringify(more)}`,
      );
      assert(
        more.some((t) => t.includes("Restore Task Only") && t.includes("Clear messages after this point")),
        `more options: ${JSON.stringify(more)}`,
      );
      await ui.request({ action: "click", selector: rows, text: "Restore Files Only", frame: "main" });
      // A file restore asks first in a modal dialog, which VS Code refuses while extension tests
      // run (said as an error): nothing is restored without the answer. The confirmed restore is
      // the command with its mode (test/vscode's approvals-restore suite checks the rest).
      await waitFor("the confirmation asked", async () =>
        (await notificationTexts(ui)).some((t) => t.includes("Contents: Restore the files to this checkpoint?")),
      );
      assert(fs.existsSync(file("notes.md")), "notes.md is still there without a confirmation");
      await vscode.commands.executeCommand("notifications.clearAll");
      await vscode.commands.executeCommand("notifications.hideList");
      assert(
        await vscode.commands.executeCommand<boolean>("dline.restore", e2e.baselineId, "files"),
        "Restore Files Only did nothing",
      );
      await waitFor("hello.txt restored", () => fs.readFileSync(file("hello.txt"), "utf8") === "hello\n");
      // The restore writes hello.txt and deletes notes.md one after the other: wait for both.
      await waitFor("notes.md (created after the checkpoint) deleted", () => !fs.existsSync(file("notes.md")), 5_000);
      assertEqual(e2e.api.chat.state().items.length, itemsBefore, "chat items after a files-only restore");
      await waitFor(
        "the marker to read restored",
        () => e2e.api.chat.state().checkpoints.find((c) => c.id === e2e.baselineId)?.restored === true,
      );
      await waitFor("the chat to show Checkpoint (restored)", async () =>
        (
          await ui.request({
            action: "texts",
            selector: `.checkpoint[data-checkpoint-id="${e2e.baselineId}"] .checkpoint-label`,
            frame: "webview",
          })
        ).includes("Checkpoint (restored)"),
      );
      // Restore Files Only is now not available: More options still lists it, saying why.
      await ui.request({
        action: "click",
        selector: `.checkpoint[data-checkpoint-id="${e2e.baselineId}"] button[data-action="restore"]`,
        frame: "webview",
      });
      await waitFor("the restore menu", async () =>
        (await ui.request({ action: "texts", selector: rows, frame: "main" })).some((t) => t.includes("More options")),
      );
      await ui.request({ action: "click", selector: rows, text: "More options", frame: "main" });
      const after = await waitFor("the More options menu", async () => {
        const texts = await ui.request({ action: "texts", selector: rows, frame: "main" });
        return texts.some((t) => t.includes("Restore Task Only")) && texts;
      });
      assert(
        after.some((t) => t.includes("Restore Files Only") && t.includes("(files already restored)")),
        `Restore Files Only is not listed as already restored: ${JSON.stringify(after)}`,
      );
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
    },
  );

  suite.test(
    "Restore Task Only to the first message: the chat says the conversation was restored, not only Interrupted, also once reopened",
    async () => {
      const taskId = e2e.api.chat.state().taskId ?? "";
      // The baseline follows the first message: the task then stands part-way.
      await vscode.commands.executeCommand<boolean>("dline.restore", e2e.baselineId, "task");
      await waitFor("the task to stand at its first message", () => e2e.api.chat.state().status === "interrupted");
      const said = "The task was interrupted: the conversation was restored to an earlier point.";
      // Before: "The task was interrupted." with no word of the restore the person had just made.
      await e2e.chat.waitFor("the footer to say why", ".task-ended", said);
      const title = await e2e.chat.evaluate<string>(`document.querySelector(".status-pill")?.title ?? ""`);
      assertEqual(title, "the conversation was restored to an earlier point", "the status pill's tooltip");
      await e2e.chat.screenshots("task-only-restored");
      // Opened again from history (or after a restart): the core still says why (GetTask).
      await vscode.commands.executeCommand("dline.newTask");
      await e2e.chat.waitFor("the start screen", '[data-screen="start"]', "What should Dline do?");
      await vscode.commands.executeCommand("dline.openTask", taskId);
      await e2e.chat.waitFor("the reopened footer to say why", ".task-ended", said);
      assertEqual(e2e.api.chat.state().statusReason, "the conversation was restored to an earlier point", "reopened");
    },
  );

  suite.test("editing the first message with Restore Chat continues the task with the new text", async () => {
    const first = e2e.api.chat.state().items.find((i) => i.type === "message" && i.role === "user");
    assert(first && first.type === "message", "the first user message");
    // In the chat: click the message, change the text, press Restore Chat.
    await ui.request({ action: "click", selector: `.message.user[data-message-id="${first.id}"]`, frame: "webview" });
    await ui.request({
      action: "fill",
      selector: ".edit-box textarea",
      value: "Greet the world politely",
      frame: "webview",
    });
    const buttons = await ui.request({ action: "texts", selector: ".edit-box button", frame: "webview" });
    assertEqual(buttons, ["Restore Chat", "Restore All", "Cancel"], "edit buttons");
    await ui.request({ action: "click", selector: ".edit-box button", text: "Restore Chat", frame: "webview" });
    await waitFor("the edited text in the chat", () =>
      e2e.api.chat
        .state()
        .items.some((i) => i.type === "message" && i.role === "user" && i.text === "Greet the world politely"),
    );
    // The model's next turn (the script's "Greeted politely.") answers the edited text.
    await waitFor(
      "the continued task to complete",
      () =>
        e2e.api.chat.state().status === "completed" &&
        e2e.api.chat.state().items.some((i) => i.type === "message" && i.text.includes("Greeted politely")),
      45_000,
    );
    assert(
      !e2e.api.chat
        .state()
        .items.some((i) => i.type === "message" && i.text.includes("Greeting updated and notes added")),
      "the rewound completion is gone",
    );
  });

  defineChatFlowTests(suite, e2e);

  suite.test("Delete All Except Favorites keeps the favourite; deleting it removes it from history", async () => {
    const kept = (await vscode.commands.executeCommand<string[]>("dline.history.deleteAll", "exceptFavorites")) ?? [];
    assert(!kept.includes(e2e.taskId), "the favourite task was deleted by Delete All Except Favorites");
    assert(
      (await e2e.api.history.list()).some((t) => t.id === e2e.taskId),
      "the favourite is still listed",
    );
    await vscode.commands.executeCommand("dline.history.delete", e2e.taskId, "confirmed");
    await waitFor(
      "the task gone from history",
      async () => !(await e2e.api.history.list()).some((t) => t.id === e2e.taskId),
    );
    assertEqual(e2e.api.chat.state().taskId, undefined, "the chat of a deleted task is closed");
  });

  suite.test("Set API Key takes the key in a password box and stores it in the core, not in VS Code", async () => {
    const key = "sk-typed-in-the-box-42";
    const setting = vscode.commands.executeCommand("dline.setApiKey", PROFILE_ID);
    await ui.request({
      action: "fill",
      selector: ".quick-input-widget .quick-input-box input",
      value: key,
      press: "Enter",
      frame: "main",
    });
    await setting;
    const profile = (await (await e2e.api.clients()).settings.listProfiles({})).profiles.find(
      (p) => p.id === PROFILE_ID,
    );
    assert(profile?.secretsSet.includes("api_key"), "the profile's api_key is set");
    const userSettings = path.join(required("DLINE_E2E_USER_DATA"), "User", "settings.json");
    assert(!fs.readFileSync(userSettings, "utf8").includes(key), "the key must not reach VS Code's settings");
    // The scripted model checks the key: put the right one back.
    await (
      await e2e.api.clients()
    ).settings.setSecret({ profileId: PROFILE_ID, name: "api_key", value: required("DLINE_E2E_API_KEY") });
  });

  suite.test('Delete All History → "Delete Everything" deletes every task and the checkpoints folder', async () => {
    const second = (await vscode.commands.executeCommand<string>("dline.newTask", "Say hi", PROFILE_ID)) ?? "";
    assert(second, "no second task");
    await waitFor(
      "the second task to complete",
      () => e2e.api.chat.state().taskId === second && e2e.api.chat.state().status === "completed",
      45_000,
    );
    const init = await (await e2e.api.clients()).system.initialize({ clientName: "e2e", workspaceRoots: [workspace] });
    const checkpointsDir = path.join(init.documentsRoot, "checkpoints");
    assert(fs.existsSync(checkpointsDir), `${checkpointsDir} exists before the deletion`);
    // The command asks with a modal dialog, but VS Code refuses modal dialogs while extension
    // tests run ("refused to show dialog in tests"): that path is checked to delete nothing,
    // then the choice is passed as the command's argument, as a keybinding would.
    assertEqual(
      await vscode.commands.executeCommand<string[]>("dline.history.deleteAll"),
      undefined,
      "a refused dialog deletes nothing",
    );
    assert(
      (await e2e.api.history.list()).some((t) => t.id === second),
      "the task is still there after a dismissed dialog",
    );
    const deleting = vscode.commands.executeCommand<string[]>("dline.history.deleteAll", "everything");
    const deleted = (await deleting) ?? [];
    assert(deleted.includes(second), `deleted ${JSON.stringify(deleted)}`);
    assertEqual((await e2e.api.history.list()).length, 0, "tasks left in history");
    await waitFor("the checkpoints folder removed", () => !fs.existsSync(checkpointsDir));
  });

  suite.test("Restart Core stops the core gracefully (stdin closed) and starts a new one", async () => {
    const pid = e2e.api.corePid();
    assert(pid, "no core pid");
    const newPid = await vscode.commands.executeCommand<number>("dline.restartCore");
    assert(newPid && newPid !== pid, `restarted pid ${newPid} vs ${pid}`);
    await waitFor("the old core to exit", () => !processExists(pid));
  });

  suite.test("Cancel in the chat stops the running task; Resume in the chat finishes it", async () => {
    const before = await modelRequests();
    const id = (await vscode.commands.executeCommand<string>("dline.newTask", "Think slowly", PROFILE_ID)) ?? "";
    assert(id, "no task");
    await waitFor("the model to be streaming", async () => (await modelRequests()) > before);
    await waitFor("the streamed text", () =>
      e2e.api.chat
        .state()
        .items.some((i) => i.type === "message" && i.role === "assistant" && i.text.startsWith("Thin")),
    );
    fs.writeFileSync(path.join(outDir, "chat-state-before-cancel.json"), JSON.stringify(e2e.api.chat.state(), null, 2));
    await ui.request({ action: "screenshot", name: "before-cancel" });
    await ui.request({ action: "click", selector: "#cancel", frame: "webview" });
    await waitFor("the task to be cancelled", () => e2e.api.chat.state().status === "cancelled");
    await ui.request({ action: "click", selector: "#resume", frame: "webview" });
    await waitFor(
      "the resumed task to complete",
      () =>
        e2e.api.chat.state().status === "completed" &&
        e2e.api.chat.state().items.some((i) => i.type === "message" && i.text.includes("Finished after cancel")),
      45_000,
    );
  });

  suite.test(
    "a command running when the core is killed: the core restarts, the chat reopens the task interrupted with the call Interrupted, Resume finishes it",
    async () => {
      const clients = await e2e.api.clients();
      await clients.settings.updateSettings({
        scope: SettingsScope.GLOBAL,
        patch: {
          autoApprovalSettings: {
            enabled: true,
            readFiles: false,
            editFiles: true,
            executeSafeCommands: true,
            executeAllCommands: true,
            useMcp: false,
            maxRequests: 20,
          },
        },
      });
      const id = (await vscode.commands.executeCommand<string>("dline.newTask", "Run the long job", PROFILE_ID)) ?? "";
      assert(id, "no task");
      // Started (tool_started binds the call to its row): the core has the row on disk by then.
      await waitFor(
        "the command running",
        () =>
          e2e.api.chat
            .state()
            .items.some(
              (i) =>
                i.type === "message" &&
                i.toolCall?.tool === "execute_command" &&
                i.toolCall.status === "running" &&
                Boolean(i.toolCallId),
            ),
        45_000,
      );
      const pid = e2e.api.corePid();
      const generation = e2e.api.coreGeneration();
      assert(pid, "no core pid");
      process.kill(pid, "SIGKILL");
      await waitForGeneration(e2e.api, generation, 30_000);
      await waitFor(
        "the chat to show the task interrupted",
        () => e2e.api.chat.state().taskId === id && e2e.api.chat.state().status === "interrupted",
      ).catch((err) => {
        fs.writeFileSync(
          path.join(outDir, "chat-state-after-crash.json"),
          JSON.stringify(e2e.api.chat.state(), null, 2),
        );
        throw err;
      });
      const rows = await e2e.chat
        .waitFor(
          "the command row interrupted",
          '.tool-row[data-tool="execute_command"][data-status="interrupted"]',
          "Interrupted",
        )
        .catch(async (err) => {
          fs.writeFileSync(
            path.join(outDir, "chat-state-after-crash.json"),
            JSON.stringify(e2e.api.chat.state(), null, 2),
          );
          fs.writeFileSync(
            path.join(outDir, "task-after-crash.json"),
            JSON.stringify(
              await (await e2e.api.clients()).tasks.getTask({ taskId: id }),
              (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v),
              2,
            ),
          );
          throw err;
        });
      assert(
        rows.some((r) => r.includes("sleep 30")),
        `the interrupted row: ${JSON.stringify(rows)}`,
      );
      await e2e.chat.waitFor(
        "the footer to say why",
        ".task-ended",
        "The task was interrupted: the sidecar running the task stopped.",
      );
      await e2e.chat.screenshots("interrupted");
      await ui.request({ action: "click", selector: "#resume", frame: "webview" });
      await waitFor(
        "the resumed task to complete",
        () =>
          e2e.api.chat.state().status === "completed" &&
          e2e.api.chat.state().items.some((i) => i.type === "message" && i.text.includes("Finished after resume")),
        45_000,
      );
    },
    150_000,
  );

  suite.test("restarts the core after it is killed", async () => {
    const pid = e2e.api.corePid();
    const generation = e2e.api.coreGeneration();
    assert(pid, "no core pid");
    process.kill(pid, "SIGKILL");
    const next = await waitForGeneration(e2e.api, generation, 30_000);
    assert(next > generation, "generation did not increase");
    const newPid = e2e.api.corePid();
    assert(newPid && newPid !== pid, `new pid ${newPid} vs killed ${pid}`);
    const health = await (await e2e.api.clients()).system.health({});
    assertEqual(health.pid, newPid, "health answers from the new core");
  });

  suite.test("Disable Checkpoints: the chat header says checkpoints are disabled", async () => {
    await vscode.commands.executeCommand("dline.disableCheckpoints");
    await waitFor("the header in the chat", async () =>
      (await ui.request({ action: "texts", selector: ".checkpoint-header", frame: "webview" })).some((t) =>
        t.includes("Checkpoints are disabled."),
      ),
    );
  });

  suite.test(
    "Import from Cline: pick (a skipped item cannot be chosen), dry run, import; the task is listed",
    async () => {
      // A legacy Cline task folder in the isolated HOME, and a malformed one (skipped).
      const data = clineHomeData(required("HOME"));
      writeLegacyTask(data, "1717000000001", { task: "Port the parser from Cline" });
      writeLegacyTask(data, "1717000000002", { rawUi: '[{"ts": 1, "type": "say", "te' });
      const rows = ".quick-input-widget .monaco-list-row";
      const importing = vscode.commands.executeCommand<{
        results: { outcome: string; taskId: string; sourceKey: string }[];
      }>("dline.importCline");
      await waitFor("the import pick", async () => {
        const texts = await ui.request({ action: "texts", selector: rows, frame: "main" });
        return (
          texts.some((t) => t.includes("Port the parser from Cline")) &&
          texts.some((t) => t.includes("Skipped:")) &&
          texts
        );
      });
      // Check the importable task, and try the skipped one (it is unchecked again), then accept.
      const checkedCount = async () =>
        (await ui.request({ action: "texts", selector: ".quick-input-widget .quick-input-count", frame: "main" }))
          .join(" ")
          .trim();
      await ui.request({ action: "click", selector: rows, text: "Port the parser from Cline", frame: "main" });
      await waitFor("one item checked", async () => /^1\b/.test(await checkedCount()));
      await ui.request({ action: "click", selector: rows, text: "Skipped:", frame: "main" });
      await new Promise((resolve) => setTimeout(resolve, 500));
      await waitFor("the skipped item unchecked again", async () => /^1\b/.test(await checkedCount()), 5_000);
      await ui.request({
        action: "fill",
        selector: ".quick-input-widget .quick-input-box input",
        value: "",
        press: "Enter",
        frame: "main",
      });
      const dryRun = await waitFor("the dry-run confirmation", async () => {
        const texts = await ui.request({ action: "texts", selector: rows, frame: "main" });
        return texts.some((t) => t.includes("Import 1 task")) && texts;
      });
      assert(
        dryRun.some((t) => t.includes("Port the parser from Cline") && t.includes("would be imported")),
        `dry run: ${JSON.stringify(dryRun)}`,
      );
      const clients = await e2e.api.clients();
      assert(
        !(await clients.history.listTasks({ query: "", pageSize: 200, pageToken: "" })).tasks.some((t) =>
          t.title.includes("Port the parser"),
        ),
        "the dry run wrote nothing",
      );
      await ui.request({ action: "click", selector: rows, text: "Import 1 task", frame: "main" });
      const response = await importing;
      assert(response, "the import returned nothing");
      assertEqual(
        response.results.map((r) => [r.sourceKey, r.outcome]),
        [["legacy:1717000000001", "imported"]],
        "import results",
      );
      const tasks = (await clients.history.listTasks({ query: "", pageSize: 200, pageToken: "" })).tasks;
      const imported = tasks.find((t) => t.id === nth(response.results, 0, "import result").taskId);
      assert(
        imported && imported.title.includes("Port the parser from Cline"),
        `ListTasks: ${JSON.stringify(tasks.map((t) => [t.id, t.title]))}`,
      );
      await waitFor("the imported task in the history view", async () =>
        (await e2e.api.history.list()).some((t) => t.id === imported.id),
      );
    },
    30_000,
  );

  suite.test(
    "Capabilities view: a workspace rule is listed; toggling it off in the workspace disables it",
    async () => {
      fs.mkdirSync(file(".agents/rules"), { recursive: true });
      fs.writeFileSync(file(".agents/rules/e2e-style.md"), "Answer in haiku.\n");
      await vscode.commands.executeCommand("dline.capabilities.focus");
      await vscode.commands.executeCommand("dline.capabilities.refresh");
      const treeRows = ".pane-body .monaco-list-row";
      await waitFor("the rule in the Capabilities view", async () =>
        (await ui.request({ action: "texts", selector: treeRows, frame: "main" })).some(
          (t) => t.includes("e2e-style") && t.includes("enabled"),
        ),
      );
      const rule = (await e2e.api.capabilities.list()).find(
        (c) => c.kind === "rules" && c.resource.includes("e2e-style"),
      );
      assert(rule && rule.enabled, `the rule is listed and enabled: ${JSON.stringify(rule?.name)}`);
      // What the view's context menu passes: the tree node.
      const toggling = vscode.commands.executeCommand("dline.capabilities.toggle", {
        type: "capability",
        capability: rule,
      });
      const rows = ".quick-input-widget .monaco-list-row";
      const choices = await waitFor("the toggle pick", async () => {
        const texts = await ui.request({ action: "texts", selector: rows, frame: "main" });
        return texts.some((t) => t.includes("Disabled")) && texts;
      });
      const labels = ["Enabled", "Disabled", "Inherit"];
      assert(
        choices.length === 3 && labels.every((l, i) => choices[i]?.startsWith(l)),
        `toggle choices: ${JSON.stringify(choices)}`,
      );
      assert(
        choices[2]?.includes("current"),
        `Inherit is marked as the current workspace state: ${JSON.stringify(choices)}`,
      );
      await ui.request({ action: "click", selector: rows, text: "Disabled", frame: "main" });
      await toggling;
      const clients = await e2e.api.clients();
      const after = (await clients.settings.listCapabilities({ workspaceRoot: workspace })).capabilities.find(
        (c) => c.kind === "rules" && c.resource === rule.resource,
      );
      assert(after, "the rule after the toggle");
      assertEqual(
        [after.enabled, after.toggle?.workspace, after.toggle?.decidedBy],
        [false, ToggleState.DISABLED, ToggleScope.WORKSPACE],
        "enabled, workspace toggle, decided by",
      );
      await waitFor("the view to show the rule disabled", async () =>
        (await ui.request({ action: "texts", selector: treeRows, frame: "main" })).some(
          (t) => t.includes("e2e-style") && t.includes("disabled"),
        ),
      );
    },
    30_000,
  );

  suite.test(
    "Capabilities view: a workspace hook is shown untrusted; Trust This Workspace (confirmed) and Stop Trusting change it",
    async () => {
      fs.mkdirSync(file(".agents/hooks"), { recursive: true });
      fs.writeFileSync(file(".agents/hooks/UserPromptSubmit.sh"), "#!/bin/sh\ncat >/dev/null\n", { mode: 0o755 });
      await vscode.commands.executeCommand("dline.capabilities.refresh");
      const treeRows = ".pane-body .monaco-list-row";
      const rowsShow = (what: string, check: (texts: string[]) => boolean) =>
        waitFor(what, async () => check(await ui.request({ action: "texts", selector: treeRows, frame: "main" })));
      const hookRow = (texts: string[]) => texts.find((t) => t.includes("UserPromptSubmit")) ?? "";
      await rowsShow(
        "the hook untrusted and the trust row",
        (texts) => hookRow(texts).includes("untrusted") && texts.some((t) => t.includes("Workspace not trusted")),
      );
      const clients = await e2e.api.clients();
      // Without a confirmation nothing is trusted (VS Code refuses modal dialogs while tests run).
      assertEqual(
        await vscode.commands.executeCommand("dline.capabilities.trust"),
        undefined,
        "a refused confirmation",
      );
      assertEqual(
        (await clients.settings.listCapabilities({ workspaceRoot: workspace })).workspaceTrusted,
        false,
        "trusted after a refused confirmation",
      );
      assertEqual(
        await vscode.commands.executeCommand("dline.capabilities.trust", "confirmed"),
        true,
        "trusted after confirming",
      );
      const trusted = await clients.settings.listCapabilities({ workspaceRoot: workspace });
      const hook = trusted.capabilities.find((c) => c.kind === "hooks" && c.origin === "workspace");
      assertEqual(
        [trusted.workspaceTrusted, hook?.untrusted, hook?.enabled],
        [true, false, true],
        "workspace trusted, hook untrusted, hook enabled",
      );
      await rowsShow(
        "the view to show the workspace trusted",
        (texts) => texts.some((t) => t.includes("Workspace trusted")) && !hookRow(texts).includes("untrusted"),
      );
      assertEqual(
        await vscode.commands.executeCommand("dline.capabilities.untrust"),
        false,
        "trusted after Stop Trusting",
      );
      assertEqual(
        (await clients.settings.listCapabilities({ workspaceRoot: workspace })).workspaceTrusted,
        false,
        "the core's trust after Stop Trusting",
      );
      await rowsShow(
        "the hook untrusted again",
        (texts) => hookRow(texts).includes("untrusted") && texts.some((t) => t.includes("Workspace not trusted")),
      );
    },
    30_000,
  );
}

/** Opened on the home folder itself: checkpoints are unavailable, in the words of docs/checkpoints.md. */
export function defineLimitsSuite(suite: TestSuite, outDir: string): void {
  const ui = new UiBridge(outDir);
  suite.test("the home folder as workspace: the chat header says checkpoints cannot be used there", async () => {
    const api = await activateDline();
    await api.clients();
    const header = await waitFor("the checkpoint header", () => api.chat.state().checkpointHeader);
    assertEqual(header.message, "Cannot use checkpoints in home directory", "header message");
    assert(!header.canDisable, "nothing to disable in the home folder");
    const shown = await waitFor("the header in the chat", async () => {
      const texts = await ui.request({ action: "texts", selector: ".checkpoint-header", frame: "webview" });
      return texts.length > 0 && texts;
    });
    assert(
      shown.some((t) => t.includes("Cannot use checkpoints in home directory")),
      `header: ${JSON.stringify(shown)}`,
    );
  });
}
