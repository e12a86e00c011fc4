/**
 * The environment details a user message carries for the model (as Cline sends them): the
 * files the editor shows and has open, when the client reports them, and with the task's
 * first message the workspace's top-level files. Paths the workspace's ignore files block are
 * left out.
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import type { IgnoreMatcher } from "./tools/ignore-matcher.js";
import { listedName } from "./tools/listed-name.js";
import { compareNames } from "../text/name-order.js";

/** The editor's state as a client reports it (paths absolute or relative to the workspace). */
export interface EditorFiles {
  visibleFiles: readonly string[];
  openFiles: readonly string[];
  /** Files with unsaved changes (edits to them are refused); absent: not reported. */
  unsavedFiles?: readonly string[];
}

const MAX_LISTED = 200;

export async function environmentDetails(input: {
  workspaceRoot: string;
  editor?: EditorFiles;
  /** List the workspace's top-level files (the task's first message). */
  workspaceFiles: boolean;
  ignore: IgnoreMatcher;
}): Promise<string | undefined> {
  const sections: string[] = [];
  const shown = (paths: readonly string[] | undefined) =>
    (paths ?? [])
      .map((p) => workspaceRelative(input.workspaceRoot, p))
      .filter((p): p is string => p !== undefined && !input.ignore.ignores(p))
      .slice(0, MAX_LISTED);
  const visible = shown(input.editor?.visibleFiles);
  const open = shown(input.editor?.openFiles);
  if (visible.length > 0) sections.push(`# Visible files in the editor\n${visible.join("\n")}`);
  if (open.length > 0) sections.push(`# Files open in the editor\n${open.join("\n")}`);
  if (input.workspaceFiles) {
    const listing = await topLevelFiles(input.workspaceRoot, input.ignore);
    sections.push(`# Workspace files (${input.workspaceRoot}, top level)\n${listing || "(empty)"}`);
  }
  if (sections.length === 0) return undefined;
  return `<environment_details>\n${sections.join("\n\n")}\n</environment_details>`;
}

/** A path inside the workspace, relative and with "/" separators; undefined for one outside it. */
function workspaceRelative(root: string, file: string): string | undefined {
  if (!file || file.includes("\0")) return undefined;
  const absolute = path.resolve(root, file);
  const relative = path.relative(path.resolve(root), absolute);
  if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) return undefined;
  return relative.split(path.sep).join("/");
}

async function topLevelFiles(root: string, ignore: IgnoreMatcher): Promise<string> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await fs.readdir(root, { withFileTypes: true });
  } catch {
    return "";
  }
  const names = entries
    .filter((e) => e.name !== ".git" && !ignore.ignores(e.name, e.isDirectory()))
    .map((e) => listedName(e.isDirectory() ? `${e.name}/` : e.name))
    .sort(compareNames);
  const more = names.length > MAX_LISTED ? `\n(${names.length - MAX_LISTED} more not listed)` : "";
  return names.slice(0, MAX_LISTED).join("\n") + more;
}
