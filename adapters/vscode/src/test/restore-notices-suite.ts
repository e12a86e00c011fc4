/**
 * A restore that leaves a file as it was says so: a task rewrites a file over the checkpoints'
 * size limit (no version of it kept) and a small one; Restore Files Only to the baseline brings
 * the small one back and tells the person, in a warning, that the big one was kept as is and why.
 *
 * Environment: DLINE_E2E_MODEL_URL, DLINE_E2E_API_KEY (the scripted model of test/vscode/e2e.test.ts).
 */
import * as fs from "node:fs";
import * as vscode from "vscode";
import { CheckpointKind } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { activateDline, addOpenAiProfile, required } from "./helpers.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";
import { UiBridge } from "./ui-bridge.js";

const PROFILE_ID = "scripted";
// With the smoke-test driver VS Code shows no toasts: notifications are read in the notifications center.
const NOTIFICATION = ".notifications-center .notification-list-item";

function proposalTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter(
      (t) =>
        t.input instanceof vscode.TabInputTextDiff &&
        t.input.modified.scheme === "dline-proposed" &&
        t.input.modified.query.includes("side=proposal"),
    );
}

export function defineRestoreNoticesSuite(suite: TestSuite, outDir: string): void {
  const ui = new UiBridge(outDir);
  suite.test("Restore Files Only names the file it kept as it was (too large to snapshot)", async () => {
    const api = await activateDline();
    const clients = await api.clients();
    await addOpenAiProfile(
      clients,
      {
        id: PROFILE_ID,
        name: "Scripted",
        baseUrl: required("DLINE_E2E_MODEL_URL"),
        model: "scripted-model",
        contextWindow: 128_000n,
      },
      required("DLINE_E2E_API_KEY"),
    );
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
    const file = (name: string) => `${root}/${name}`;

    const taskId =
      (await vscode.commands.executeCommand<string>("dline.newTask", "Shrink the big file", PROFILE_ID)) ?? "";
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
      120_000,
    );
    assertEqual(fs.readFileSync(file("big.bin"), "utf8"), "now small\n", "the task rewrote big.bin");
    // Both approvals were answered: neither proposed change stays open.
    await waitFor("no proposed change left open", () => !proposalTabs().length, 10_000).catch(() => {
      throw new Error(
        `proposed changes left open: ${proposalTabs()
          .map((t) => t.label)
          .join(", ")}`,
      );
    });

    const baseline = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints.find(
      (c) => c.kind === CheckpointKind.BASELINE,
    );
    assert(baseline, "no baseline checkpoint");
    assert(
      await vscode.commands.executeCommand<boolean>("dline.restore", baseline.id, "files"),
      "Restore Files Only did nothing",
    );
    assertEqual(fs.readFileSync(file("notes.md"), "utf8"), "# notes\n", "notes.md restored");
    assertEqual(fs.readFileSync(file("big.bin"), "utf8"), "now small\n", "big.bin left as it is");

    await vscode.commands.executeCommand("notifications.showList");
    const texts = await waitFor("the restore's notices", async () => {
      const shown = await ui.request({ action: "texts", selector: NOTIFICATION, frame: "main" });
      return shown.some((t) => t.includes("kept as is")) && shown;
    });
    assert(
      texts.some((t) => t.includes("Dline: files restored to the checkpoint (1 file; 1 kept as it was).")),
      `notices: ${JSON.stringify(texts)}`,
    );
    assert(
      texts.some((t) => t.includes("Dline: kept as is: big.bin (too large to snapshot).")),
      `notices: ${JSON.stringify(texts)}`,
    );
    // Still none, seconds later: a diff whose tab arrived after its close was not left behind.
    assertEqual(
      proposalTabs().map((t) => t.label),
      [],
      "proposed changes open after the task and the restore",
    );
    await ui.request({ action: "screenshot", name: "restore-kept" });
  });
}
