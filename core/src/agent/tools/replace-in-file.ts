import * as fs from "node:fs/promises";
import * as path from "node:path";
import { requireNonEmptyString, requireString } from "./input.js";
import { applySearchReplaceBlocks, parseSearchReplaceBlocks } from "./search-replace.js";
import { resolveAllowedPath } from "./workspace-path.js";
import { writeFileAtomic } from "./file-tools.js";
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
    let original: string | undefined;
    try {
      original = await fs.readFile(target.absolute, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    // Edit what the editor shows (unsaved changes included) when the host offers it.
    if (original !== undefined && ctx.environment?.readTextFile) original = await ctx.environment.readTextFile(target.absolute, ctx.signal);
    if (original === undefined && !(blocks.length === 1 && blocks[0].search === "")) {
      throw new ToolError(`replace_in_file: "${target.relative}" does not exist; use write_to_file to create it.`, "not_found");
    }
    const crlf = original !== undefined && original.includes("\r\n");
    const normalised = (original ?? "").replace(/\r\n/g, "\n");
    const updated = applySearchReplaceBlocks(normalised, blocks, target.relative);
    await ctx.beforeEdit?.(target.relative);
    if (original === undefined) await fs.mkdir(path.dirname(target.absolute), { recursive: true });
    const text = crlf ? updated.replace(/\n/g, "\r\n") : updated;
    if (ctx.environment?.writeTextFile) await ctx.environment.writeTextFile(target.absolute, text, ctx.signal);
    else await writeFileAtomic(target.absolute, text);
    ctx.recordEditedPath(target.relative);
    return ok(`Applied ${blocks.length} block${blocks.length === 1 ? "" : "s"} to ${target.relative}.`);
  },
};
