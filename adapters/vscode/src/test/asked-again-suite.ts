/**
 * An edit approval asked again because its file changed on disk while it waited says why on its
 * card (before, the same card came back after Approve with no word on why).
 *
 * Environment: DLINE_E2E_MODEL_URL, DLINE_E2E_API_KEY (the scripted model of test/vscode/e2e.test.ts).
 */
import * as fs from "node:fs";
import * as vscode from "vscode";
import { ChatUi } from "./chat-ui.js";
import { activateDline, addScriptedProfile } from "./helpers.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";
import { UiBridge } from "./ui-bridge.js";

const PROFILE_ID = "scripted";

export function defineAskedAgainSuite(suite: TestSuite, outDir: string): void {
  const ui = new UiBridge(outDir);
  const chat = new ChatUi(ui);

  suite.test("an approval asked again after its file changed on disk says why on its card", async () => {
    const api = await activateDline();
    await addScriptedProfile(api, PROFILE_ID);
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
    const taskId =
      (await vscode.commands.executeCommand<string>("dline.newTask", "Rewrite the notes", PROFILE_ID)) ?? "";
    assert(taskId, "dline.newTask returned no task id");
    const first = await waitFor("the edit's approval", () => api.chat.state().pendingAsk, 60_000);
    await chat.waitFor("the approval card", ".ask .ask-title");
    assertEqual((await chat.texts(".ask-again")).length, 0, "the first question says nothing of asking again");
    // Changed on disk while the question waits (another editor, a command): Approve writes nothing.
    fs.writeFileSync(`${root}/notes.md`, "# notes\nadded meanwhile\n");
    await vscode.commands.executeCommand("dline.approve", "");
    const again = await waitFor(
      "the approval asked again",
      () => {
        const ask = api.chat.state().pendingAsk;
        return ask && ask.askId !== first.askId && ask;
      },
      30_000,
    );
    assertEqual(fs.readFileSync(`${root}/notes.md`, "utf8"), "# notes\nadded meanwhile\n", "nothing written");
    const [why] = await chat.waitFor("the reason on the card", ".ask .ask-again");
    assert(
      why?.includes("notes.md changed on disk while this approval waited, so nothing was written"),
      `the card says why it asks again: ${why}`,
    );
    assertEqual(why, again.askedAgainBecause, "the core's sentence");
    await ui.request({ action: "screenshot", name: "approval-asked-again" });
    await vscode.commands.executeCommand("dline.approve", "");
    await waitFor("the task to complete", () => api.chat.state().status === "completed", 60_000);
  });
}
