/**
 * The diff an edit will make, computed before it runs (while the task waits for the user's
 * permission), so the editor can show it in the permission prompt and in the finished tool call.
 */
import * as fs from "node:fs/promises";
import type { Diff } from "@agentclientprotocol/sdk";
import { resolveWorkspacePath } from "../agent/tools/workspace-path.js";
import { applySearchReplaceBlocks, parseSearchReplaceBlocks } from "../agent/tools/search-replace.js";

/** Undefined when the call is not an edit, or its outcome cannot be known in advance (it will fail). */
export async function editPreview(
  tool: string,
  input: unknown,
  workspaceRoot: string,
  /** The editor's view of a file (unsaved changes), when the client offers it: what the tool will edit. */
  readFromEditor?: (absolutePath: string) => Promise<string>,
): Promise<Diff | undefined> {
  if (tool !== "write_to_file" && tool !== "replace_in_file") return undefined;
  const args = input as { path?: unknown; content?: unknown; diff?: unknown } | undefined;
  if (typeof args?.path !== "string" || !args.path) return undefined;
  try {
    const target = await resolveWorkspacePath(workspaceRoot, args.path, tool);
    let oldText = await fs.readFile(target.absolute, "utf8").catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return null;
      throw err;
    });
    if (oldText !== null && tool === "replace_in_file" && readFromEditor) oldText = await readFromEditor(target.absolute);
    if (tool === "write_to_file") {
      return typeof args.content === "string" ? { path: target.absolute, oldText, newText: args.content } : undefined;
    }
    if (typeof args.diff !== "string") return undefined;
    const crlf = oldText?.includes("\r\n") ?? false;
    const updated = applySearchReplaceBlocks((oldText ?? "").replace(/\r\n/g, "\n"), parseSearchReplaceBlocks(args.diff), target.relative);
    return { path: target.absolute, oldText, newText: crlf ? updated.replace(/\n/g, "\r\n") : updated };
  } catch {
    return undefined;
  }
}
