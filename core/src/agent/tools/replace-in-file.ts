import * as fs from "node:fs/promises";
import * as path from "node:path";
import { requireNonEmptyString, requireString } from "./input.js";
import { applySearchReplaceBlocks, parseSearchReplaceBlocks } from "./search-replace.js";
import { resolveAllowedPath } from "./workspace-path.js";
import { writeFileAtomic } from "./file-tools.js";
import { assertRegularOrAbsent, readRegularFile } from "./regular-file.js";

/** Files larger than this are not edited with SEARCH/REPLACE blocks. */
const maxEditBytes = 16 * 1024 * 1024;
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
  async execute(input, ctx) {
    const target = await resolveAllowedPath(ctx, requireNonEmptyString(input, "path", "replace_in_file"), "replace_in_file");
    const blocks = parseSearchReplaceBlocks(requireString(input, "diff", "replace_in_file"));
    // Regular files only, opened without blocking (a FIFO never hangs the call).
    const original = (await assertRegularOrAbsent(target.absolute, "replace_in_file", target.relative))
      ? (await readRegularFile(target.absolute, "replace_in_file", target.relative, maxEditBytes)).toString("utf8")
      : undefined;
    // Edit what the editor shows (unsaved changes included) when the host offers it.
    const shown = original !== undefined && ctx.environment?.readTextFile ? await ctx.environment.readTextFile(target.absolute, ctx.signal) : original;
    if (shown === undefined && !(blocks.length === 1 && blocks[0].search === "")) {
      throw new ToolError(`replace_in_file: "${target.relative}" does not exist; use write_to_file to create it.`, "not_found");
    }
    const crlf = shown !== undefined && shown.includes("\r\n");
    const normalised = (shown ?? "").replace(/\r\n/g, "\n");
    const updated = applySearchReplaceBlocks(normalised, blocks, target.relative);
    await ctx.beforeEdit?.(target.relative);
    if (shown === undefined) await fs.mkdir(path.dirname(target.absolute), { recursive: true });
    const text = crlf ? updated.replace(/\n/g, "\r\n") : updated;
    if (ctx.environment?.writeTextFile) await ctx.environment.writeTextFile(target.absolute, text, ctx.signal);
    else await writeFileAtomic(target.absolute, text);
    ctx.recordEditedPath(target.relative);
    return ok(`Applied ${blocks.length} block${blocks.length === 1 ? "" : "s"} to ${target.relative}.`);
  },
};
