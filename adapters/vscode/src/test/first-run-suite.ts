/**
 * A new user's first minutes, through the installed VSIX: the welcome view (no model yet), a
 * prompt refused for want of a model that stays in the box, Configure Model in the chat, then
 * the first task: Markdown rendered as elements, the proposed edit open in the diff editor
 * with Approve / Reject on its title bar, buttons readable in every theme, the chat keeping
 * most of the view during an approval.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { SettingsScope } from "../../../../core/src/gen/dline/v1/settings_pb.js";
import { nth } from "../../../../test/helpers/items.js";
import { allTabs, activateDline, required } from "./helpers.js";
import { PROFILE_ID, type E2eContext } from "./e2e-context.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";

export function defineFirstRunTests(suite: TestSuite, t: E2eContext): void {
  const file = (name: string) => path.join(t.workspace, name);

  suite.test("activates on its view and starts the core the VSIX carries, in the workspace folder", async () => {
    t.api = await activateDline();
    const clients = await t.api.clients();
    const health = await clients.system.health({});
    assertEqual(health.status, "ok", "health status");
    const pid = t.api.corePid();
    assert(pid && pid === health.pid, `core pid ${pid} vs health pid ${health.pid}`);
    // Installed from the VSIX, the extension runs the sidecar inside it (no DLINE_CORE, no checkout).
    assertEqual(
      fs.readlinkSync(`/proc/${pid}/exe`),
      path.join(t.installed, "bin", "dline-core"),
      "the core's executable",
    );
    assert(!process.env.DLINE_CORE, "DLINE_CORE is not set for this suite");
    const init = await clients.system.initialize({ clientName: "e2e", workspaceRoots: [t.workspace] });
    assert(init.dataRoot.startsWith(required("DLINE_DIR")), `data root ${init.dataRoot} is not under DLINE_DIR`);
    assertEqual(
      fs.realpathSync(fs.readlinkSync(`/proc/${pid}/cwd`)),
      fs.realpathSync(t.workspace),
      "core working directory",
    );
  });

  suite.test("migrates the extension's ExtensionContext state once (ImportHostState marker)", async () => {
    const clients = await t.api.clients();
    const init = await clients.system.initialize({ clientName: "e2e", workspaceRoots: [t.workspace] });
    const globalState = path.join(init.dataRoot, "globalState.json");
    const state = await waitFor("globalState.json with the vscode migration marker", () => {
      if (!fs.existsSync(globalState)) return undefined;
      const json = JSON.parse(fs.readFileSync(globalState, "utf8")) as Record<string, unknown>;
      return json.__vscodeMigrationVersion !== undefined && json;
    });
    assertEqual(state.__vscodeMigrationVersion, 1, "__vscodeMigrationVersion");
    const again = await clients.settings.importHostState({
      host: "vscode",
      globalState: {},
      workspaces: [],
      secrets: {},
    });
    assert(again.alreadyMigrated, "a second import must report already_migrated");
  });

  suite.test(
    "first run: the chat fills its view and welcomes with Set Up a Model; its buttons read in Light, Dark Modern and High Contrast",
    async () => {
      await t.ui.request({ action: "widenSidebar", width: 520 });
      await t.chat.waitFor("the welcome view", '[data-screen="welcome"]', "Welcome to Dline");
      const layout = await t.chat.layout();
      // One view in its container: the chat's page is the whole side bar but its title row.
      assert(
        layout.viewport >= layout.sidebar - 60,
        `the chat is ${layout.viewport} px tall in a ${layout.sidebar} px side bar`,
      );
      for (const theme of ["light", "dark", "hc"] as const)
        await t.chat.assertButtonsVisible(theme, ["Set Up a Model", "Plan", "Act", "Send"]);
      await t.chat.screenshots("welcome");
    },
  );

  suite.test(
    "a prompt sent with no model set up stays in the box; Configure Model sets one up in the chat; the prompt is still there",
    async () => {
      await t.chat.fill("#input", "Greet the world");
      await t.chat.click("#send");
      const banner = await t.chat.waitFor(
        "the no-model banner",
        '.banner[data-reason="no_model"]',
        "No model is configured",
      );
      assert(
        banner.some((b) => b.includes("Configure Model")),
        `banner: ${JSON.stringify(banner)}`,
      );
      assertEqual(await t.chat.input(), "Greet the world", "the prompt after the refusal");
      assertEqual(
        t.api.chat.state().unsent && [t.api.chat.state().unsent?.text, t.api.chat.state().unsent?.reason],
        ["Greet the world", "ERROR_REASON_NO_MODEL"],
        "the refused words and their reason",
      );
      assertEqual(t.api.chat.state().taskId, undefined, "no task was created");
      assertEqual(
        (await (await t.api.clients()).history.listTasks({ query: "", pageSize: 10, pageToken: "" })).tasks.length,
        0,
        "tasks after the refusal",
      );
      await t.chat.screenshots("no-model");
      await t.chat.click('[data-action="configure-model"]');
      await t.chat.waitFor("the model form", "#model-screen .model-form");
      await t.chat.assertButtonsVisible("dark", ["Save", "Cancel", "Back"]);
      await t.chat.screenshots("model-form");
      await t.chat.evaluate(
        `(() => { const s = document.querySelector('#model-screen select[name="provider"]'); s.value = "openai"; s.dispatchEvent(new Event("change")); return true; })()`,
      );
      await t.chat.fill('#model-screen input[name="id"]', PROFILE_ID);
      await t.chat.fill('#model-screen input[name="baseUrl"]', t.modelUrl);
      await t.chat.fill('#model-screen input[name="model"]', "scripted-model");
      await t.chat.fill('#model-screen input[name="apiKey"]', t.apiKey);
      await t.chat.fill('#model-screen input[name="contextWindow"]', "100000");
      await t.chat.click('[data-action="save-model"]');
      await waitFor(
        "back in the chat",
        async () =>
          (await t.chat.evaluate<boolean>(`document.getElementById("chat-screen").hidden === false`)) === true,
      );
      assertEqual(await t.chat.input(), "Greet the world", "the prompt after setting up a model");
      const clients = await t.api.clients();
      const profile = (await clients.settings.listProfiles({})).profiles.find((p) => p.id === PROFILE_ID);
      assert(
        profile &&
          profile.baseUrl === t.modelUrl &&
          profile.model === "scripted-model" &&
          profile.secretsSet.includes("api_key"),
        `profile: ${JSON.stringify(profile?.id)}`,
      );
      const settings = (await clients.settings.getSettings({ scope: SettingsScope.GLOBAL })).settings as Record<
        string,
        unknown
      >;
      assertEqual(settings.defaultProfileId, PROFILE_ID, "the new model is the default");
      const userSettings = path.join(required("DLINE_E2E_USER_DATA"), "User", "settings.json");
      assert(!fs.readFileSync(userSettings, "utf8").includes(t.apiKey), "the key must not reach VS Code's settings");
      await waitFor("the banner gone", async () => (await t.chat.texts(".banner")).length === 0);
    },
  );

  suite.test("mirrors settings both ways (core files are the truth)", async () => {
    const clients = await t.api.clients();
    await waitFor(
      "dline.defaultProfile to mirror the core",
      () => vscode.workspace.getConfiguration("dline").get("defaultProfile") === PROFILE_ID,
    );
    await vscode.workspace
      .getConfiguration("dline")
      .update("autoApproval.maxRequests", 33, vscode.ConfigurationTarget.Global);
    await waitFor("the core's autoApprovalSettings.maxRequests to follow VS Code", async () => {
      const settings = (await clients.settings.getSettings({ scope: SettingsScope.GLOBAL })).settings as Record<
        string,
        any
      >;
      return settings?.autoApprovalSettings?.maxRequests === 33;
    });
  });

  suite.test(
    "the first task: Markdown as elements, the proposed edit in the diff editor with Approve / Reject on its title bar, the chat still most of the view",
    async () => {
      await t.chat.click("#send");
      const firstAsk = await waitFor("the first approval", () => t.api.chat.state().pendingAsk, 45_000);
      t.taskId = t.api.chat.state().taskId ?? "";
      assertEqual(
        [firstAsk.kind, firstAsk.tool, firstAsk.edits.map((e) => e.path)],
        ["tool", "replace_in_file", ["hello.txt"]],
        "first ask",
      );
      assertEqual(await t.chat.input(), "", "the prompt box once the task started");
      // The reply's Markdown is elements: bold, a list, a highlighted code block with Copy; its HTML is text.
      const markdown = await waitFor("the rendered reply", () =>
        t.chat.evaluate<{
          strong: number;
          li: number;
          keyword: number;
          copy: number;
          img: number;
          scripts: number;
          htmlAsText: boolean;
          stars: boolean;
        } | null>(`(() => {
        const m = [...document.querySelectorAll(".message.assistant .markdown")].find((n) => n.textContent.includes("update the greeting"));
        return m ? { strong: m.querySelectorAll("strong").length, li: m.querySelectorAll("li").length, keyword: m.querySelectorAll("pre.code-block code.hljs.language-js .hljs-keyword").length,
          copy: m.querySelectorAll("button.copy-code").length, img: document.querySelectorAll("#messages img").length, scripts: m.querySelectorAll("script").length,
          htmlAsText: m.textContent.includes("<img src=x onerror=alert(1)>"), stars: m.textContent.includes("**") } : null;
      })()`),
      );
      assertEqual(
        markdown,
        { strong: 1, li: 2, keyword: 1, copy: 1, img: 0, scripts: 0, htmlAsText: true, stars: false },
        "the reply's elements",
      );
      await t.chat.click("button.copy-code");
      await waitFor(
        "the code block in the clipboard",
        async () => (await vscode.env.clipboard.readText()) === 'const greeting = "hello, world";\n',
      );
      // The diff editor shows exactly the proposed text, before anything is written.
      const tab = await waitFor("the proposed change's diff editor", () =>
        allTabs().find(
          (x) => x.input instanceof vscode.TabInputTextDiff && x.input.modified.scheme === "dline-proposed",
        ),
      );
      const diff = tab.input as vscode.TabInputTextDiff;
      assertEqual(
        (await vscode.workspace.openTextDocument(diff.modified)).getText(),
        "hello, world\n",
        "the proposed text",
      );
      assertEqual((await vscode.workspace.openTextDocument(diff.original)).getText(), "hello\n", "the file as it is");
      assertEqual(fs.readFileSync(file("hello.txt"), "utf8"), "hello\n", "hello.txt before the approval");
      const titleActions = await waitFor("Approve and Reject on the diff editor's title bar", async () => {
        const labels = await t.ui.request({
          action: "evaluate",
          frame: "main",
          expression: `[...document.querySelectorAll(".editor-actions .action-label")].map((a) => a.getAttribute("aria-label") || "")`,
        });
        const list = JSON.parse(nth(labels, 0, "evaluated value")) as string[];
        return list.some((l) => l.startsWith("Approve")) && list.some((l) => l.startsWith("Reject")) && list;
      });
      assert(titleActions.length >= 2, "title actions");
      // The approval never hides the conversation.
      await t.chat.waitFor("the Approve button", 'button[data-action="approve"]');
      const layout = await t.chat.layout();
      assert(
        layout.messages >= 0.35 * layout.viewport,
        `the conversation is ${layout.messages} px of ${layout.viewport} px during an approval`,
      );
      assert(
        layout.viewport >= layout.sidebar - 60,
        `the chat is ${layout.viewport} px tall in a ${layout.sidebar} px side bar`,
      );
      fs.writeFileSync(path.join(t.outDir, "layout-approval.json"), JSON.stringify(layout));
      for (const theme of ["light", "dark", "hc"] as const) {
        const buttons = await t.chat.assertButtonsVisible(theme, ["Approve", "Reject", "Cancel", "Plan", "Act"]);
        fs.writeFileSync(path.join(t.outDir, `contrast-approval-${theme}.json`), JSON.stringify(buttons, null, 1));
      }
      await t.chat.screenshots("approval", ["light", "dark", "hc"]);
      // Approve from the diff editor's title bar.
      await t.ui.request({
        action: "click",
        selector: '.editor-actions .action-label[aria-label^="Approve"]',
        frame: "main",
      });
      await waitFor("hello.txt edited", () => fs.readFileSync(file("hello.txt"), "utf8") === "hello, world\n");
      // This approval's diff goes. The next approval's diff (notes.md) may open before this is
      // looked at (the model answers at once): it is another change, left to its own approval.
      const approvedDiff = diff.modified.toString();
      await waitFor(
        "the approved change's diff closed",
        () =>
          !allTabs().some(
            (x) => x.input instanceof vscode.TabInputTextDiff && x.input.modified.toString() === approvedDiff,
          ),
      );

      const secondAsk = await waitFor("the second approval", () => {
        const ask = t.api.chat.state().pendingAsk;
        return ask && ask.askId !== firstAsk.askId && ask;
      });
      assertEqual(
        [secondAsk.tool, secondAsk.edits.map((e) => `${e.path} ${e.status}`)],
        ["write_to_file", ["notes.md added"]],
        "second ask",
      );
      // Answered at once, while its diff may still be opening: the diff must not stay behind.
      await vscode.commands.executeCommand("dline.approve");
      await waitFor("the task to complete", () => t.api.chat.state().status === "completed", 45_000);
      await waitFor(
        "no proposed change left open",
        () =>
          !allTabs().some(
            (x) =>
              x.input instanceof vscode.TabInputTextDiff &&
              x.input.modified.scheme === "dline-proposed" &&
              x.input.modified.query.includes("side=proposal"),
          ),
      );
      assertEqual(fs.readFileSync(file("notes.md"), "utf8"), "# Notes\ncreated by dline\n", "notes.md");
      const state = t.api.chat.state();
      fs.writeFileSync(path.join(t.outDir, "chat-state-after-task.json"), JSON.stringify(state, null, 2));
      // The webview draws the state it is sent after a moment: wait for it, then check it.
      const toolRows = () =>
        t.chat.evaluate<string[]>(
          `[...document.querySelectorAll(".tool-row")].map((r) => r.dataset.tool + " " + r.dataset.status)`,
        );
      const expectedRows = ["replace_in_file done", "write_to_file done"];
      await waitFor(
        "the tool rows drawn done",
        async () => JSON.stringify(await toolRows()) === JSON.stringify(expectedRows),
      ).catch(() => undefined);
      assertEqual(await toolRows(), expectedRows, "tool rows in the chat");
      assert(
        state.items.some((i) => i.type === "message" && i.kind === "completion"),
        "the completion is shown",
      );
      await t.chat.waitFor("the context bar", ".context-bar", "/ 100k");
      await waitFor("checkpoints listed in the chat", () => t.api.chat.state().checkpoints.length >= 2);
      await t.chat.screenshots("completed");
    },
    150_000,
    { settle: () => finishFirstTask(t) },
  );
}

/**
 * What the later tests start from when the first task's test failed part way: the first task
 * completed with its two edits approved (the model's script stays in step), no editor open.
 */
async function finishFirstTask(t: E2eContext): Promise<void> {
  t.taskId ||= await waitFor("the first task", () => t.api.chat.state().taskId);
  let answered = "";
  await waitFor(
    "the first task completed",
    async () => {
      const { status, pendingAsk } = t.api.chat.state();
      if (status === "completed") return true;
      if (pendingAsk && pendingAsk.askId !== answered) {
        answered = pendingAsk.askId;
        await vscode.commands.executeCommand("dline.approve");
      }
      return false;
    },
    90_000,
  );
  await vscode.commands.executeCommand("workbench.action.closeAllEditors");
}
