/**
 * A restore that leaves a file as it was says so: a task rewrites a file over the checkpoints'
 * size limit (no version of it kept) and a small one; Restore Files Only to the baseline brings
 * the small one back and tells the person, in a warning, that the big one was kept as is and why.
 * Then approvals answered while their diffs are still opening: each diff closes at the answer.
 * Then an edit of a file too large to send whole: its diff opens side by side all the same,
 * rebuilt from the file and the core's unified diff, in the file's language.
 *
 * Environment: DLINE_E2E_MODEL_URL, DLINE_E2E_API_KEY (the scripted model of test/vscode/e2e.test.ts).
 */
import * as fs from "node:fs";
import * as vscode from "vscode";
import { CheckpointKind } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import type { ChatFileEdit } from "../chat/chat-state.js";
import { activateDline, addScriptedProfile, notificationTexts } from "./helpers.js";
import { LARGE_EDIT, LARGE_FILE } from "./large-edit-script.js";
import { assert, assertEqual, waitFor, type TestSuite } from "./runner.js";
import { UiBridge } from "./ui-bridge.js";

const PROFILE_ID = "scripted";
/** Files the second task writes, one approval each (the model script of test/vscode/e2e.test.ts). */
const PARTS = 3;
// With the smoke-test driver VS Code shows no toasts: notifications are read in the notifications center.

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

/**
 * The approval of big.bin (21 MiB, too large to read, rewritten with "now small\n"): the edit
 * carries its sizes and the text it writes, and its diff opens with a plain-text notice of the
 * file as it is beside that text.
 */
async function checkLeftOutProposal(edits: readonly ChatFileEdit[]): Promise<void> {
  const big = edits.find((e) => e.path === "big.bin");
  assertEqual(
    big && [big.truncated, big.diff, big.proposedText, big.originalSize, big.proposedSize, big.originalBinary],
    [true, "", "now small\n", 21 * 1024 * 1024, 10, false],
    "the edit of big.bin (texts left out, the text it writes sent)",
  );
  const docs = await waitFor(
    "the proposal's two sides open",
    () => {
      const open = vscode.workspace.textDocuments.filter(
        (d) =>
          d.uri.scheme === "dline-proposed" && d.uri.query.includes("side=proposal-") && d.uri.path.includes("big.bin"),
      );
      return open.length === 2 && open;
    },
    15_000,
  );
  const before = docs.find((d) => d.uri.query.includes("side=proposal-before"));
  const after = docs.find((d) => d.uri.query.includes("side=proposal-after"));
  assert(
    before?.getText().includes("big.bin as it is now (22,020,096 bytes) is too large to show here."),
    `the left side: ${before?.getText()}`,
  );
  assertEqual(before?.languageId, "plaintext", "the language of the notice");
  assertEqual(after?.getText(), "now small\n", "the right side: what the edit writes");
}

export function defineRestoreNoticesSuite(suite: TestSuite, outDir: string): void {
  const ui = new UiBridge(outDir);
  suite.test("Restore Files Only names the file it kept as it was (too large to snapshot)", async () => {
    const api = await activateDline();
    const clients = await api.clients();
    await addScriptedProfile(api, PROFILE_ID);
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
    const file = (name: string) => `${root}/${name}`;

    const taskId =
      (await vscode.commands.executeCommand<string>("dline.newTask", "Shrink the big file", PROFILE_ID)) ?? "";
    assert(taskId, "dline.newTask returned no task id");
    const answered = new Set<string>();
    // big.bin is too large to read: its approval says so with its sizes, and its diff shows the
    // text the edit writes beside a notice of the file as it is. Noted; the task goes on anyway.
    const problems: string[] = [];
    await waitFor(
      "the task to complete",
      async () => {
        const ask = api.chat.state().pendingAsk;
        if (ask && !answered.has(ask.askId)) {
          answered.add(ask.askId);
          if (ask.edits.some((e) => e.path === "big.bin"))
            await checkLeftOutProposal(ask.edits).catch((err: Error) => problems.push(err.message));
          await vscode.commands.executeCommand("dline.approve", "");
        }
        return api.chat.state().status === "completed";
      },
      120_000,
    );
    assertEqual(problems, [], "what the approval of big.bin showed");
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
    const texts = await waitFor("the restore's notices", async () => {
      const shown = await notificationTexts(ui);
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

  suite.test("an approval answered while its diff is still opening closes that diff", async () => {
    const api = await activateDline();
    await addScriptedProfile(api, PROFILE_ID); // each test sets up what it uses, whatever ran before it
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
    // A second provider of the proposals' scheme, asked before Dline's, holds each side of a
    // proposal until released and then passes: the diff stays in the middle of opening, as when
    // the extension host is busy. An answer given then must close the diff without waiting.
    const held = new Map<string, Array<() => void>>(); // by file name
    const holding = vscode.workspace.registerTextDocumentContentProvider("dline-proposed", {
      provideTextDocumentContent: (uri) => {
        if (!uri.query.includes("side=proposal")) return undefined;
        const name = uri.path.split("/").pop() ?? "";
        return new Promise<undefined>((resolve) =>
          held.set(name, [...(held.get(name) ?? []), () => resolve(undefined)]),
        );
      },
    });
    const release = (name?: string) => {
      for (const [file, passes] of held)
        if (name === undefined || file === name) {
          held.delete(file);
          for (const pass of passes) pass();
        }
    };
    try {
      const taskId =
        (await vscode.commands.executeCommand<string>("dline.newTask", "Write the parts", PROFILE_ID)) ?? "";
      assert(taskId, "dline.newTask returned no task id");
      const answered = new Set<string>();
      for (let part = 1; part <= PARTS; part++) {
        const ask = await waitFor(`approval ${part}`, () => {
          const pending = api.chat.state().pendingAsk;
          return pending && !answered.has(pending.askId) && pending;
        });
        // Its tab is open and VS Code waits for its sides.
        const name = `part-${part}.md`;
        const shown = () => proposalTabs().some((t) => t.label === `${name} (proposed change)`);
        await waitFor(`the diff of approval ${part} opening`, () => held.has(name) && shown());
        if (part === 1) await ui.request({ action: "screenshot", name: "approval-diff-opening" });
        answered.add(ask.askId);
        await vscode.commands.executeCommand("dline.approve", "");
        await waitFor(`the diff of approval ${part} closed while still opening`, () => !shown(), 10_000).catch(() => {
          throw new Error(
            `approval ${part} answered, its diff still open: ${proposalTabs()
              .map((t) => t.label)
              .join(", ")}`,
          );
        });
        if (part === 1) await ui.request({ action: "screenshot", name: "approval-diff-closed" });
        release(name);
      }
      await waitFor("the task to complete", () => api.chat.state().status === "completed", 60_000);
    } finally {
      release();
      holding.dispose();
    }
    for (let part = 1; part <= PARTS; part++)
      assertEqual(fs.readFileSync(`${root}/part-${part}.md`, "utf8"), `# part ${part}\n`, `part-${part}.md written`);
    // The diffs finished opening after they were closed: none of them comes back.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assertEqual(
      proposalTabs().map((t) => t.label),
      [],
      "proposed changes open after every approval was answered",
    );
  });

  suite.test("an edit of a file too large to send whole opens side by side, rebuilt from its diff", async () => {
    const api = await activateDline();
    await addScriptedProfile(api, PROFILE_ID);
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
    const before = fs.readFileSync(`${root}/${LARGE_FILE}`, "utf8");
    const taskId = (await vscode.commands.executeCommand<string>("dline.newTask", "Fix line 2000", PROFILE_ID)) ?? "";
    assert(taskId, "dline.newTask returned no task id");
    const ask = await waitFor("the edit's approval", () => api.chat.state().pendingAsk);
    const [edit] = ask.edits;
    assert(edit?.truncated && edit.diff.includes(`+${LARGE_EDIT.replace}`), `the edit asked about: ${edit?.path}`);
    const docs = await waitFor("the proposal's two sides", () => {
      const open = vscode.workspace.textDocuments.filter(
        (d) => d.uri.scheme === "dline-proposed" && d.uri.query.includes("side=proposal"),
      );
      return open.length === 2 && open;
    });
    const original = docs.find((d) => d.uri.query.includes("side=proposal-before"));
    const modified = docs.find((d) => d.uri.query.includes("side=proposal-after"));
    assertEqual(original?.getText(), before, "the original side: the file as it is");
    assertEqual(
      modified?.getText(),
      before.replace(LARGE_EDIT.search, LARGE_EDIT.replace),
      "the proposed side: the file as the edit leaves it",
    );
    for (const doc of docs) assertEqual(doc.languageId, "javascript", `the language of ${doc.uri.toString()}`);
    await ui.request({ action: "screenshot", name: "approval-large-file-diff" });
    await vscode.commands.executeCommand("dline.approve", "");
    await waitFor("the task to complete", () => api.chat.state().status === "completed", 60_000);
    assertEqual(
      fs.readFileSync(`${root}/${LARGE_FILE}`, "utf8"),
      before.replace(LARGE_EDIT.search, LARGE_EDIT.replace),
      `${LARGE_FILE} written`,
    );
  });

  suite.test("a restore of the task while its command runs stops the task first, and says so", async () => {
    const api = await activateDline();
    const clients = await api.clients();
    await addScriptedProfile(api, PROFILE_ID);
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
    const ticks = `${root}/ticks.txt`;
    const taskId = (await vscode.commands.executeCommand<string>("dline.newTask", "Tick", PROFILE_ID)) ?? "";
    assert(taskId, "dline.newTask returned no task id");
    // The command (it appends to ticks.txt for a minute) is approved; the restore comes while it runs.
    await waitFor("the command's approval", () => api.chat.state().pendingAsk);
    await vscode.commands.executeCommand("dline.approve", "");
    await waitFor("the command to write", () => fs.existsSync(ticks), 30_000);
    const baseline = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints.find(
      (c) => c.kind === CheckpointKind.BASELINE,
    );
    assert(baseline, "no baseline checkpoint");
    // Restore Files Only from the menu (the command with its mode, as a key binding passes it).
    assert(
      await vscode.commands.executeCommand<boolean>("dline.restore", baseline.id, "files"),
      "Restore Files Only did nothing",
    );
    // Before, the command went on writing over the restored files.
    assert(!fs.existsSync(ticks), "ticks.txt is back after the restore");
    await new Promise((r) => setTimeout(r, 300));
    assert(!fs.existsSync(ticks), "ticks.txt came back after the restore");
    const texts = await waitFor("the restore's notice", async () => {
      const shown = await notificationTexts(ui);
      return shown.some((t) => t.includes("stopped first")) && shown;
    });
    assert(
      texts.some((t) =>
        t.includes("Dline: the task was running and was stopped first; files restored to the checkpoint (1 file)."),
      ),
      `notices: ${JSON.stringify(texts)}`,
    );
    await waitFor("the task to stand interrupted", () => api.chat.state().status === "interrupted", 15_000);
    await ui.request({ action: "screenshot", name: "restore-running" });
  });
}
