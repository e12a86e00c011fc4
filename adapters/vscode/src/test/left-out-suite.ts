/**
 * What the checkpoints leave out, and which checkpoint is which, in code-server (from an audit):
 * the "Restore which checkpoint?" quick pick says of each checkpoint when, what and how many
 * files, the id beside (it showed an id and "turn" five times); Compare lists a change the
 * checkpoints do not track (data.txt, over the size limit at the start, shrunk by a command) by a
 * name that says so, both sides saying why, not as an empty side that reads as a file created;
 * after a restore to the baseline that left it as it is, Compare says the change is not tracked, never "no
 * changes". View Changes and Compare list what a tool changed or made inside a nested repository
 * (which no snapshot holds) against what it was before. The restore's question asks first (VS Code refuses modal dialogs while extension
 * tests run: its words are checked by test/vscode/checkpoint-pick-left-out.unit.test.ts).
 *
 * Environment: DLINE_E2E_MODEL_URL, DLINE_E2E_API_KEY (the scripted model of test/vscode/e2e.test.ts).
 */
import * as fs from "node:fs";
import * as vscode from "vscode";
import { CheckpointKind } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import type { DlineApi } from "../api.js";
import type { ShownDiff } from "../checkpoints/diff-presenter.js";
import { NOT_TRACKED_LABEL } from "../checkpoints/not-tracked.js";
import { activateDline, addScriptedProfile, allTabs, notificationTexts, waitForTab } from "./helpers.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";
import { UiBridge } from "./ui-bridge.js";

const PROFILE_ID = "scripted";
const ROWS = ".quick-input-widget .monaco-list-row";

export function defineLeftOutSuite(suite: TestSuite, outDir: string): void {
  const ui = new UiBridge(outDir);
  let api: DlineApi | undefined;
  let taskId = "";
  let baselineId = "";
  const root = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  const file = (name: string) => `${root()}/${name}`;

  suite.test(
    "the Restore which checkpoint? quick pick says when, what and how many files of each checkpoint, the id beside",
    async () => {
      api = await activateDline();
      await addScriptedProfile(api, PROFILE_ID);
      taskId =
        (await vscode.commands.executeCommand<string>("dline.newTask", "Note it and shrink the data", PROFILE_ID)) ??
        "";
      assert(taskId, "dline.newTask returned no task id");
      const answered = new Set<string>();
      await waitFor(
        "the task to complete",
        async () => {
          const ask = api!.chat.state().pendingAsk;
          if (ask && !answered.has(ask.askId)) {
            answered.add(ask.askId);
            await vscode.commands.executeCommand("dline.approve", "");
          }
          return api!.chat.state().status === "completed";
        },
        120_000,
      );
      assertEqual(fs.readFileSync(file("data.txt"), "utf8"), "small\n", "the task's command shrank data.txt");
      const clients = await api.clients();
      const checkpoints = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints;
      const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE);
      assert(baseline, "no baseline checkpoint");
      baselineId = baseline.id;
      await waitFor("the chat's checkpoints", () => api!.chat.state().checkpoints.length === checkpoints.length);

      // From the command palette: no checkpoint given, so it asks which.
      const picked = vscode.commands.executeCommand("dline.restore");
      const rows = await waitFor("the checkpoint pick", async () => {
        const texts = await ui.request({ action: "texts", selector: ROWS, frame: "main" });
        return texts.length >= checkpoints.length && texts;
      });
      await ui.request({ action: "screenshot", name: "checkpoint-pick" });
      const time = /\d{1,2}:\d{2}:\d{2}/;
      const row = (what: string) => rows.find((t) => t.includes(what));
      assert(
        time.test(row("Start of the task") ?? "") && row("Start of the task")?.includes(baseline.id.slice(0, 12)),
        `the baseline's row (its time, its id): ${JSON.stringify(rows)}`,
      );
      assert(
        rows.some((t) => /After turn 1: Write notes\.md/.test(t) && t.includes("1 file edited") && time.test(t)),
        `a row says which turn wrote notes.md, and that it edited one file: ${JSON.stringify(rows)}`,
      );
      assert(
        rows.some((t) => /After turn 2: Run command printf/.test(t)),
        `a row says which turn ran the command: ${JSON.stringify(rows)}`,
      );
      assert(row("Completion of the task"), `the completion's row: ${JSON.stringify(rows)}`);
      assertEqual(new Set(rows).size, rows.length, `rows that read alike: ${JSON.stringify(rows)}`);
      // Chosen, the restore menu and then its question follow (refused in tests: nothing restored).
      await ui.request({ action: "click", selector: ROWS, text: "Start of the task", frame: "main" });
      await waitFor("the restore menu", async () =>
        (await ui.request({ action: "texts", selector: ROWS, frame: "main" })).some((t) =>
          t.includes("Restore Files & Task"),
        ),
      );
      await ui.request({ action: "click", selector: ROWS, text: "Restore Files & Task", frame: "main" });
      await picked;
      await waitFor("the restore's question asked", async () =>
        (await notificationTexts(ui)).some((t) =>
          // Files & Task says it deletes the later messages too (it read as Files Only before).
          t.includes("Contents: Restore the files and delete the messages after this checkpoint?"),
        ),
      );
      assertEqual(fs.readFileSync(file("notes.md"), "utf8"), "# notes, edited\n", "nothing restored unasked");
      await vscode.commands.executeCommand("notifications.clearAll");
      await vscode.commands.executeCommand("notifications.hideList");
    },
    240_000,
  );

  suite.test(
    "View Changes lists what the task's tools changed or made inside a nested repository, and the permissions a command changed",
    async () => {
      assert(api && baselineId, "the first test ran the task");
      // vendor/lib is a repository of its own: no snapshot holds its files, so View Changes
      // listed neither of them (found with zlib as a submodule of express).
      const shown = (await vscode.commands.executeCommand<ShownDiff[]>("dline.viewChanges")) ?? [];
      assertEqual(
        shown.map((d) => [d.path, d.notTracked, d.permissions ?? ""]).sort(),
        [
          ["data.txt", true, ""],
          ["id.key", false, "600 → 644"],
          ["notes.md", false, ""],
          ["run.sh", false, "644 → 755"],
          ["vendor/lib/lib.c", false, ""],
          ["vendor/lib/made.c", false, ""],
        ],
        "View Changes' files",
      );
      // The diff editor shows text only (id.key's two sides are the same): a notice names them.
      await waitFor("the permissions' notice", async () =>
        (await notificationTexts(ui)).some(
          (t) =>
            t.startsWith("New changes: permissions changed: ") &&
            t.includes("id.key 600 → 644") &&
            t.includes("run.sh 644 → 755"),
        ),
      );
      const side = async (uri: vscode.Uri) => (await vscode.workspace.openTextDocument(uri)).getText();
      const lib = shown.find((d) => d.path === "vendor/lib/lib.c")!;
      assertEqual(await side(lib.original), "int lib = 1;\n", "lib.c before the task");
      assertEqual(await side(lib.modified), "int lib = 2;\n", "lib.c after the task");
      const made = shown.find((d) => d.path === "vendor/lib/made.c")!;
      assertEqual(await side(made.original), "", "made.c before the task: none");
      assertEqual(await side(made.modified), "int made;\n", "made.c after the task");
      // id.key's permissions alone changed: its right side is named by the change.
      const key = shown.find((d) => d.path === "id.key")!;
      assert(
        decodeURIComponent(key.modified.path).endsWith("id.key (permissions 600 → 644)"),
        `id.key's name in the diff: ${key.modified.toString()}`,
      );
      assertEqual(await side(key.modified), "private\n", "id.key's text, the same on both sides");
      await waitForTab("New changes");
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await ui.request({ action: "screenshot", name: "view-changes-nested" });
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    },
    120_000,
  );

  suite.test(
    "Compare lists a change the checkpoints do not track by a name that says so, not as an empty side, and a change of permissions; after a restore that left it, never 'no changes'",
    async () => {
      assert(api && baselineId, "the first test ran the task");
      const shown = (await vscode.commands.executeCommand<ShownDiff[]>("dline.compare", baselineId)) ?? [];
      assertEqual(
        shown.map((d) => [d.path, d.notTracked, d.permissions ?? ""]).sort(),
        [
          ["data.txt", true, ""],
          ["id.key", false, "600 → 644"],
          ["notes.md", false, ""],
          ["run.sh", false, "644 → 755"],
          ["vendor/lib/lib.c", false, ""],
          ["vendor/lib/made.c", false, ""],
        ],
        "Compare's files",
      );
      const data = shown.find((d) => d.path === "data.txt")!;
      assert(
        decodeURIComponent(data.modified.path).endsWith(`data.txt (${NOT_TRACKED_LABEL})`),
        `data.txt's name in the diff: ${data.modified.toString()}`,
      );
      const left = (await vscode.workspace.openTextDocument(data.original)).getText();
      const right = (await vscode.workspace.openTextDocument(data.modified)).getText();
      assert(left.includes("not tracked by checkpoints") && left !== "", `data.txt's left side: ${left}`);
      assert(right.includes("This file changed since the checkpoint."), `data.txt's right side: ${right}`);
      assertEqual(
        data.modified.scheme,
        "dline-checkpoint",
        "data.txt's right side is not the file beside an empty side",
      );
      const notes = shown.find((d) => d.path === "notes.md")!;
      assertEqual(notes.modified.scheme, "file", "notes.md is compared with the file itself");
      await waitForTab("Changes since snapshot");
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await ui.request({ action: "screenshot", name: "compare-not-tracked" });
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");

      // Restored to the baseline: notes.md comes back, data.txt stays (not tracked).
      assert(
        await vscode.commands.executeCommand<boolean>("dline.restore", baselineId, "files"),
        "Restore Files Only did nothing",
      );
      await waitFor("notes.md restored", () => fs.readFileSync(file("notes.md"), "utf8") === "# notes\n");
      assertEqual(fs.readFileSync(file("data.txt"), "utf8"), "small\n", "data.txt left as it is");
      assertEqual(fs.readFileSync(file("vendor/lib/lib.c"), "utf8"), "int lib = 1;\n", "lib.c put back");
      assert(!fs.existsSync(file("vendor/lib/made.c")), "made.c, which the task made, deleted");
      const bits = (name: string) => (fs.statSync(file(name)).mode & 0o777).toString(8);
      assertEqual([bits("id.key"), bits("run.sh")], ["600", "644"], "the key and the script's permissions put back");
      await vscode.commands.executeCommand("notifications.clearAll");
      const after = (await vscode.commands.executeCommand<ShownDiff[]>("dline.compare", baselineId)) ?? [];
      assertEqual(
        after.map((d) => [d.path, d.notTracked]),
        [["data.txt", true]],
        "Compare's files after the restore",
      );
      const texts = await waitFor("Compare's notice", async () => {
        const shownTexts = await notificationTexts(ui);
        return shownTexts.some((t) => t.includes("Changes since snapshot:")) && shownTexts;
      });
      assert(
        texts.some((t) =>
          t.includes(
            "Changes since snapshot: no tracked file changed; 1 change not tracked by checkpoints (not compared or restored): data.txt.",
          ),
        ),
        `notices: ${JSON.stringify(texts)}`,
      );
      assert(!texts.some((t) => t.includes("no changes")), `"no changes" said: ${JSON.stringify(texts)}`);
      assert(
        allTabs().some((t) => t.label.startsWith("Changes since snapshot")),
        "the diff lists data.txt",
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await ui.request({ action: "screenshot", name: "compare-only-not-tracked" });
    },
    120_000,
  );

  suite.test(
    "View Changes under each completion card of a task that completed twice shows that completion's own changes",
    async () => {
      assert(api, "the first test ran");
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
      await vscode.commands.executeCommand("notifications.clearAll");
      const id = (await vscode.commands.executeCommand<string>("dline.newTask", "Write a.txt", PROFILE_ID)) ?? "";
      assert(id, "dline.newTask returned no task id");
      const answered = new Set<string>();
      const completions = () =>
        api!.chat
          .state()
          .items.filter((i) => i.type === "message" && i.kind === "completion")
          .map((i) => i as { id: string });
      const completesTimes = (n: number) =>
        waitFor(
          `completion ${n} of the task`,
          async () => {
            const ask = api!.chat.state().pendingAsk;
            if (ask && ask.kind !== "completion" && !answered.has(ask.askId)) {
              answered.add(ask.askId);
              await vscode.commands.executeCommand("dline.approve", "");
            }
            return api!.chat.state().status === "completed" && completions().length === n;
          },
          120_000,
        );
      await completesTimes(1);
      assertEqual(fs.readFileSync(file("a.txt"), "utf8"), "one\n", "the first run wrote a.txt");
      // A follow-up message: the task goes on and completes again.
      await vscode.commands.executeCommand("dline.sendMessage", "Now change a.txt and add b.txt");
      await completesTimes(2);
      assertEqual(fs.readFileSync(file("b.txt"), "utf8"), "new\n", "the second run wrote b.txt");
      const [first, second] = completions();

      // The first card's button, clicked in the chat: that completion's changes (before: the
      // latest's, "New changes (2 files)" under both cards).
      await ui.request({
        action: "click",
        selector: `.message.completion[data-message-id="${first!.id}"] button[data-action="view-changes"]`,
        frame: "webview",
      });
      const tab = await waitForTab("New changes");
      const side = async (uri: vscode.Uri) => (await vscode.workspace.openTextDocument(uri)).getText();
      const diffs = (tab.input as { textDiffs?: vscode.TabInputTextDiff[] }).textDiffs;
      if (diffs) {
        const sides = await Promise.all(diffs.map(async (d) => [await side(d.original), await side(d.modified)]));
        assertEqual(sides, [["", "one\n"]], "the first completion's diff (a.txt added with one)");
      } else {
        // One diff tab per file: "a.txt (New changes)", no b.txt.
        const labels = allTabs()
          .map((t) => t.label)
          .filter((l) => l.endsWith("(New changes)"));
        assertEqual(labels, ["a.txt (New changes)"], "the first completion's diff tabs");
      }
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await ui.request({ action: "screenshot", name: "view-changes-first-completion" });
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");

      // Each completion by command: the first by its message, the second by its message and by default.
      const viewed = async (which?: { messageId?: string }) => {
        const shown = (await vscode.commands.executeCommand<ShownDiff[]>("dline.viewChanges", which)) ?? [];
        await vscode.commands.executeCommand("workbench.action.closeAllEditors");
        return Promise.all(shown.map(async (d) => [d.path, await side(d.original), await side(d.modified)]));
      };
      assertEqual(
        await viewed({ messageId: first!.id }),
        [["a.txt", "", "one\n"]],
        "View Changes of the first completion",
      );
      const latest = [
        ["a.txt", "one\n", "two\n"],
        ["b.txt", "", "new\n"],
      ];
      assertEqual(await viewed({ messageId: second!.id }), latest, "View Changes of the second completion");
      assertEqual(await viewed(), latest, "View Changes with no completion named: the latest");
    },
    300_000,
  );
}
