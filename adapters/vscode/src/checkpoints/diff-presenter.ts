import * as path from "node:path";
import * as vscode from "vscode";
import { FileStatus, type FileChange } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { visibleLine } from "../text/visible-text.js";
import type { CheckpointDocuments } from "./checkpoint-documents.js";
import { notTrackedName, notTrackedSides, onlyNotTrackedNotice } from "./not-tracked.js";
import { permissionChange, permissionsName, permissionsNotice } from "./permission-changes.js";

export const COMPARE_TITLE = "Changes since snapshot";
export const VIEW_CHANGES_TITLE = "New changes";

/** One file of a shown diff: what is on each side. */
export interface ShownDiff {
  path: string;
  status: "added" | "modified" | "deleted" | "unknown";
  original: vscode.Uri;
  modified: vscode.Uri;
  /** A change the checkpoints do not track: listed by name, with nothing to compare (see not-tracked.ts). */
  notTracked: boolean;
  /** Its permissions changed: "600 → 644" (see permission-changes.ts). */
  permissions?: string;
}

/**
 * Opens a set of file changes in VS Code's native multi-file diff editor (`vscode.changes`),
 * or, where that command does not exist, one `vscode.diff` editor per file.
 *
 * The left side is always the checkpoint, served by the `dline-checkpoint:` provider. The
 * right side is the workspace file itself when it exists and `rightIsWorkspace` is set
 * (Compare: the checkpoint against the current workspace), else the change's `after` content.
 * A change the checkpoints do not track is listed as "<path> (not tracked by checkpoints: not
 * compared or restored)", both sides saying why, never as an empty side against the file.
 */
export class DiffPresenter {
  constructor(private readonly documents: CheckpointDocuments) {}

  async show(options: {
    /** What the diff is ("Changes since snapshot"): its notices start with it. */
    title: string;
    /** Which checkpoint (diff-titles.ts), added to the tab's title. */
    detail?: string;
    workspaceRoot: string;
    files: FileChange[];
    rightIsWorkspace: boolean;
  }): Promise<ShownDiff[]> {
    const { title, workspaceRoot, files } = options;
    if (files.length === 0) {
      void vscode.window.showInformationMessage(`${title}: no changes.`);
      return [];
    }
    const setId = this.documents.beginSet();
    const shown: ShownDiff[] = files.map((file) => {
      const absolute = path.join(workspaceRoot, file.path);
      const status = statusName(file.status);
      if (file.notTracked) {
        // Not an empty side against the file (it read as emptied or created): its name says what
        // it is, and both sides say why nothing is compared.
        const sides = notTrackedSides(file.path, status);
        const named = path.join(workspaceRoot, notTrackedName(file.path));
        const original = this.documents.add(setId, "before", named, sides.before, title);
        const modified = this.documents.add(setId, "after", named, sides.after, title);
        return { path: file.path, status, original, modified, notTracked: true };
      }
      const permissions = permissionChange(file);
      // Its permissions alone changed: two equal sides, named by the change (as one name: not a rename).
      const permissionsOnly = permissions !== undefined && file.before === file.after;
      const original = this.documents.add(
        setId,
        "before",
        permissionsOnly ? path.join(workspaceRoot, permissionsName(file.path, permissions)) : absolute,
        sideText(file, "before"),
        title,
      );
      const modified =
        options.rightIsWorkspace &&
        file.status !== FileStatus.DELETED &&
        !file.binary &&
        !file.tooLarge &&
        !permissionsOnly
          ? vscode.Uri.file(absolute)
          : this.documents.add(
              setId,
              "after",
              permissionsOnly ? path.join(workspaceRoot, permissionsName(file.path, permissions)) : absolute,
              sideText(file, "after"),
              title,
            );
      return {
        path: file.path,
        status,
        original,
        modified,
        notTracked: false,
        ...(permissions ? { permissions } : {}),
      };
    });
    // Only changes the checkpoints do not track: said in words too, never as "no changes".
    if (shown.every((d) => d.notTracked))
      void vscode.window.showInformationMessage(
        onlyNotTrackedNotice(
          title,
          shown.map((d) => visibleLine(d.path)),
        ),
      );
    // The diff editor shows text only: a file's permissions are told beside it.
    const permissions = permissionsNotice(
      title,
      files.map((f) => ({ ...f, path: visibleLine(f.path) })),
    );
    if (permissions) void vscode.window.showInformationMessage(permissions);
    const commands = await vscode.commands.getCommands(true);
    if (commands.includes("vscode.changes")) {
      // The first URI is what the editor's "open file" opens: the file itself (a folder: its notice).
      const resources = shown.map((d) => [
        d.notTracked && d.path.endsWith("/") ? d.modified : vscode.Uri.file(path.join(workspaceRoot, d.path)),
        d.original,
        d.modified,
      ]);
      const tabTitle = options.detail ? `${title} (${options.detail})` : title;
      await vscode.commands.executeCommand("vscode.changes", tabTitle, resources);
    } else {
      for (const d of shown) {
        await vscode.commands.executeCommand(
          "vscode.diff",
          d.original,
          d.modified,
          `${d.notTracked ? notTrackedName(d.path) : d.path} (${title}${options.detail ? `, ${options.detail}` : ""}${d.permissions ? `, permissions ${d.permissions}` : ""})`,
          {
            preview: false,
          },
        );
      }
    }
    return shown;
  }

  /**
   * Closes every Compare and View Changes diff (a restore changed the files they show: left
   * open, "Changes since snapshot" would list a file the restore deleted as still added).
   */
  async closeAll(): Promise<void> {
    const scheme = this.documents.scheme;
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((tab) => {
        const input = tab.input;
        const diffs =
          input instanceof vscode.TabInputTextDiff
            ? [input]
            : ((input as { textDiffs?: vscode.TabInputTextDiff[] } | undefined)?.textDiffs ?? []);
        return diffs.some((d) => d.original.scheme === scheme || d.modified.scheme === scheme);
      });
    await Promise.all(tabs.map((tab) => Promise.resolve(vscode.window.tabGroups.close(tab, true)).catch(() => false)));
  }
}

function sideText(file: FileChange, side: "before" | "after"): string {
  if (file.binary) return "(binary file: not shown)";
  if (file.tooLarge) return "(file over the size limit: not shown)";
  if (side === "before") return file.status === FileStatus.ADDED ? "" : file.before;
  return file.status === FileStatus.DELETED ? "" : file.after;
}

function statusName(status: FileStatus): ShownDiff["status"] {
  switch (status) {
    case FileStatus.ADDED:
      return "added";
    case FileStatus.MODIFIED:
      return "modified";
    case FileStatus.DELETED:
      return "deleted";
    default:
      return "unknown";
  }
}
