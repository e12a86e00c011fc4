import * as fs from "node:fs/promises";
import * as path from "node:path";
import * as vscode from "vscode";
import type { CheckpointDocuments } from "../checkpoints/checkpoint-documents.js";
import { visibleLine } from "../text/visible-text.js";
import type { ChatFileEdit } from "./chat-state.js";
import { rebuildSides } from "./large-edit-sides.js";
import { leftOutSides } from "./left-out-edit.js";

export const PROPOSED_SCHEME = "dline-proposed";
/** True while an edit approval's diff is open: the diff editor's title bar shows Approve / Reject. */
export const PROPOSED_CONTEXT = "dline.proposedChangePending";

/** One file of a shown change, with what is on each side. */
export interface ShownEdit {
  path: string;
  original: vscode.Uri;
  modified: vscode.Uri;
}

/**
 * Shows file edits in VS Code's diff editor: the change an edit approval is about before the
 * person answers (closed once it is answered), and the change a finished edit made ("Changed N
 * files"). Both sides are the texts the core computed (for a file too large to send whole, rebuilt
 * from the file and the core's unified diff), served read-only under `dline-proposed:`.
 */
export class ProposedChanges implements vscode.Disposable {
  private shownAskId: string | undefined;
  /** The document set of the pending approval's diff: the one proposal allowed to stay open. */
  private shownSet: string | undefined;
  private readonly tabWatch: vscode.Disposable;

  constructor(private readonly documents: CheckpointDocuments) {
    // A diff's tab reaches the tab list long before the diff command returns (the editor first
    // fetches both sides from this extension host, seconds when it is busy), and an approval can
    // be answered in between. So a proposal is closed by its tab, not after its command: any
    // proposal tab not of the pending approval goes as soon as it shows up.
    this.tabWatch = vscode.window.tabGroups.onDidChangeTabs((e) => {
      if (e.opened.length > 0 || e.changed.length > 0) void this.closeStale();
    });
  }

  /** Opens the approval's diff (once per ask unless `again`). */
  async showProposal(askId: string, edits: ChatFileEdit[], workspaceRoot: string, again = false): Promise<ShownEdit[]> {
    if (edits.length === 0 || (!again && this.shownAskId === askId)) return [];
    this.shownAskId = askId;
    void vscode.commands.executeCommand("setContext", PROPOSED_CONTEXT, true);
    return this.open(edits, workspaceRoot, "proposed change", "Proposed changes (Dline)", true);
  }

  /** The approval was answered (or dropped): its diff goes, also while it is still opening. */
  async closeProposal(): Promise<void> {
    if (!this.shownAskId) return;
    this.shownAskId = undefined;
    const set = this.shownSet;
    this.shownSet = undefined;
    void vscode.commands.executeCommand("setContext", PROPOSED_CONTEXT, false);
    await this.closeStale();
    // Its documents go with it (the notices of a change too large to preview among them).
    if (set) this.documents.dropSet(set);
  }

  /** Closes every proposal tab that is not the pending approval's, each on its own. */
  private async closeStale(): Promise<void> {
    const stale = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => isProposalTab(t, this.documents.scheme) && !proposalSets(t).every((set) => set === this.shownSet));
    // One close per tab: a tab replaced meanwhile makes a close of several fail as a whole.
    await Promise.all(stale.map((tab) => Promise.resolve(vscode.window.tabGroups.close(tab, true)).catch(() => false)));
  }

  /** What a finished edit changed ("Changed N files"). */
  showApplied(edits: ChatFileEdit[], workspaceRoot: string): Promise<ShownEdit[]> {
    return this.open(edits, workspaceRoot, "change by Dline", "Changes by Dline", false);
  }

  private async open(
    edits: ChatFileEdit[],
    workspaceRoot: string,
    label: string,
    title: string,
    proposal: boolean,
  ): Promise<ShownEdit[]> {
    const setId = this.documents.beginSet();
    if (proposal) {
      // "Show it again": the earlier diff of this approval is closed as stale, its documents go.
      if (this.shownSet) this.documents.dropSet(this.shownSet);
      this.shownSet = setId;
    }
    const side = proposal ? "proposal" : "applied";
    const shown: ShownEdit[] = [];
    for (const e of edits) {
      const absolute = path.join(workspaceRoot, ...e.path.split("/"));
      const sides = await this.sidesOf(e, absolute, proposal);
      // The core leaves out the texts of a binary file or one too large to preview: a notice
      // (or the change's unified diff) instead, in plain-text documents (never parsed as the
      // file's language). What the edit writes, when sent, is the file's own text.
      shown.push({
        path: e.path,
        original: this.documents.add(setId, `${side}-before`, absolute, sides.original, label, {
          plainText: !sides.whole,
        }),
        modified: this.documents.add(setId, `${side}-after`, absolute, sides.modified, label, {
          plainText: !sides.whole && !sides.modifiedIsText,
        }),
      });
    }
    const [one] = shown;
    if (one && shown.length === 1) {
      await vscode.commands.executeCommand(
        "vscode.diff",
        one.original,
        one.modified,
        `${visibleLine(one.path)} (${label})`,
        { preview: true, preserveFocus: proposal },
      );
    } else if ((await vscode.commands.getCommands(true)).includes("vscode.changes")) {
      await vscode.commands.executeCommand(
        "vscode.changes",
        title,
        shown.map((d) => [vscode.Uri.file(path.join(workspaceRoot, d.path)), d.original, d.modified]),
      );
    } else {
      for (const d of shown)
        await vscode.commands.executeCommand(
          "vscode.diff",
          d.original,
          d.modified,
          `${visibleLine(d.path)} (${label})`,
          { preview: false },
        );
    }
    return shown;
  }

  /**
   * What each side of a file's diff shows: the core's texts; for a file too large to send whole,
   * both texts rebuilt from the file and the core's unified diff, else that diff beside a notice;
   * for a binary file or one too large to read, a notice of it beside the text the edit writes
   * (when sent), else a notice with its sizes. `whole`: the sides are the file's texts;
   * `modifiedIsText`: the modified side is the file's text, the original a notice.
   */
  private async sidesOf(
    e: ChatFileEdit,
    absolute: string,
    proposal: boolean,
  ): Promise<{ original: string; modified: string; whole: boolean; modifiedIsText?: boolean }> {
    if (!e.truncated)
      return {
        original: e.status === "added" ? "" : e.originalText,
        modified: e.status === "deleted" ? "" : e.proposedText,
        whole: true,
      };
    if (!e.diff) return { ...leftOutSides(e, proposal), whole: false };
    // Before the approval the file is what the edit starts from; after it, what the edit left.
    const fileIsGone = proposal ? e.status === "added" : e.status === "deleted";
    const current = fileIsGone ? "" : await currentText(absolute);
    const sides = current === undefined ? undefined : rebuildSides(current, e.diff, proposal);
    if (sides) return { ...sides, whole: true };
    return { original: diffOnly(e, proposal), modified: e.diff, whole: false };
  }

  dispose(): void {
    this.tabWatch.dispose();
    void vscode.commands.executeCommand("setContext", PROPOSED_CONTEXT, false);
  }
}

/** The file's text as the editor has it (unsaved changes included), else as on disk; undefined when unreadable. */
async function currentText(absolute: string): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === absolute);
  if (open) return open.getText();
  try {
    return await fs.readFile(absolute, "utf8");
  } catch {
    return undefined;
  }
}

/** The side beside a unified diff that could not be laid over the file (it changed since). */
export function diffOnly(edit: ChatFileEdit, proposal: boolean): string {
  return [
    `${proposal ? "This change" : "The change"} to ${visibleLine(edit.path)} is too large to send whole:`,
    "the other side shows it as a unified diff (every changed line, with three lines around it).",
    proposal
      ? "Approve or Reject it in the chat; once approved, the file is written in full."
      : "The file has changed since, so the diff is not laid over it.",
    "",
  ].join("\n");
}

/** The document sets a proposal tab shows (one for a diff, one per file for a multi-file one). */
function proposalSets(tab: vscode.Tab): string[] {
  const input = tab.input;
  const diffs =
    input instanceof vscode.TabInputTextDiff
      ? [input]
      : ((input as { textDiffs?: vscode.TabInputTextDiff[] } | undefined)?.textDiffs ?? []);
  return diffs.map((d) => new URLSearchParams(d.modified.query).get("set") ?? "");
}

function isProposalTab(tab: vscode.Tab, scheme: string): boolean {
  const input = tab.input;
  if (input instanceof vscode.TabInputTextDiff)
    return input.modified.scheme === scheme && input.modified.query.includes("side=proposal");
  const multi = input as { textDiffs?: vscode.TabInputTextDiff[] } | undefined;
  return Boolean(
    multi?.textDiffs?.some((d) => d.modified.scheme === scheme && d.modified.query.includes("side=proposal")),
  );
}
