import { requireNonEmptyString, requireString } from "./input.js";
import { applySearchReplaceBlocks, parseSearchReplaceBlocks } from "./search-replace.js";
import { resolveAllowedPath } from "./workspace-path.js";
import { commitEdit, fileChange, MAX_EDIT_READ_BYTES, readForEdit } from "./file-edit.js";
import { ok, ToolError, type ToolDefinition } from "./types.js";

export const replaceInFileTool: ToolDefinition = {
  name: "replace_in_file",
  description: [
    "Edit parts of an existing file with SEARCH/REPLACE blocks:",
    "------- SEARCH",
    "[exact lines to find]",
    "=======",
    "[lines to put instead]",
    "+++++++ REPLACE",
    "SEARCH text must match the file exactly (whole lines, with indentation); list blocks in file order; keep each block small; an empty REPLACE deletes.",
  ].join("\n"),
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", description: "Path of the file, relative to the workspace root." },
      diff: { type: "string", description: "One or more SEARCH/REPLACE blocks." },
    },
    required: ["path", "diff"],
  },
  readOnly: false,
  approvalCategory: () => "editFiles",
  async prepareEdit(input, ctx) {
    const target = await resolveAllowedPath(
      ctx,
      requireNonEmptyString(input, "path", "replace_in_file"),
      "replace_in_file",
    );
    const blocks = parseSearchReplaceBlocks(requireString(input, "diff", "replace_in_file"));
    // What the editor shows (unsaved changes included) when the host offers it.
    const current = await readForEdit(target.absolute, ctx, "replace_in_file", target.relative);
    if (current === undefined && !(blocks.length === 1 && blocks[0]!.search === "")) {
      throw new ToolError(
        `replace_in_file: "${target.relative}" does not exist; use write_to_file to create it.`,
        "not_found",
      );
    }
    if (current?.binary) throw new ToolError(`replace_in_file: "${target.relative}" is a binary file.`);
    if (current && current.text === undefined) {
      // write_to_file would mean sending the whole file again: a command edits it in place.
      throw new ToolError(
        `replace_in_file: "${target.relative}" is larger than the ${MAX_EDIT_READ_BYTES} bytes (16 MiB) the file tools edit, so it cannot be edited with replace_in_file or rewritten with write_to_file. ` +
          "read_file with start_line and end_line shows any part of it. To change a few lines, run a command with execute_command and requires_approval true " +
          `(for example sed -i '120s/old/new/' ${shellWord(target.relative)}), which the person approves; or ask the person to change it.`,
      );
    }
    const text = current?.text ?? "";
    const crlf = text.includes("\r\n");
    const updated = applySearchReplaceBlocks(text.replace(/\r\n/g, "\n"), blocks, target.relative);
    return {
      changes: [fileChange(target.relative, target.absolute, current, crlf ? updated.replace(/\n/g, "\r\n") : updated)],
    };
  },
  async execute(input, ctx) {
    const edit = ctx.preparedEdit ?? (await this.prepareEdit!(input, ctx));
    await commitEdit(edit, ctx);
    const blocks = parseSearchReplaceBlocks(requireString(input, "diff", "replace_in_file"));
    return ok(`Applied ${blocks.length} block${blocks.length === 1 ? "" : "s"} to ${edit.changes[0]!.path}.`);
  },
};

/** A path as one shell word (quoted when it has anything but safe characters). */
function shellWord(value: string): string {
  return /^[\w./-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}
