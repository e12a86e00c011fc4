/** read_file, list_files, search_files, write_to_file. */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { listWorkspaceFiles } from "./file-listing.js";
import { openRegularFile } from "./regular-file.js";
import { searchInWorker } from "./search-worker.js";
import { isProtectedPath } from "./tool-guard.js";
import { lineNumber, readWindow, readWindowStreamed } from "./read-window.js";
import { globToRegexSource } from "./ignore-matcher.js";
import { optionalBoolean, optionalString, requireNonEmptyString, requireString } from "./input.js";
import { commitEdit, fileChange, readForEdit } from "./file-edit.js";
import { resolveAllowedPath, resolveWorkspacePath } from "./workspace-path.js";
import { listedName } from "./listed-name.js";
import { ok, ToolError, type ToolDefinition } from "./types.js";

/** A larger file is read in parts from the disk (never whole, nor from the editor). */
const maxReadBytes = 2 * 1024 * 1024;
const maxListEntries = 1000;
const maxSearchResults = 300;
/** Larger files are searched in chunks, line by line (bounded memory)... */
const maxWholeSearchFileBytes = 1024 * 1024;
/** ...up to this size; larger ones are not searched, and the result names them. */
const maxSearchFileBytes = 256 * 1024 * 1024;
/** Files named in a note about files not searched, per reason. */
const maxNamedSkips = 5;
const maxSearchFiles = 20_000;
/** Lines longer than this (minified or generated code) are not searched: a regex's cost can grow with the cube of a line's length. */
const maxSearchLineChars = 8192;
/** A search that takes longer stops and answers what it found so far. */
const searchTimeBudgetMs = 10_000;

function looksBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

export const readFileTool: ToolDefinition = {
  name: "read_file",
  description:
    "Read the contents of a text file in the workspace. Use it to examine files you need to understand or edit. " +
    "A long file is returned in parts: the result then says which lines it shows of how many, and start_line/end_line read other parts.",
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", description: "Path of the file, relative to the workspace root." },
      start_line: { type: "integer", description: "First line to read (1-based). Default: 1." },
      end_line: {
        type: "integer",
        description: "Last line to read (inclusive). Default: as many lines as fit in one read.",
      },
    },
    required: ["path"],
  },
  readOnly: true,
  approvalCategory: () => "readFiles",
  async execute(input, ctx) {
    const target = await resolveAllowedPath(ctx, requireNonEmptyString(input, "path", "read_file"), "read_file");
    const window = {
      startLine: lineNumber(input, "start_line"),
      endLine: lineNumber(input, "end_line"),
      maxChars: ctx.maxResultChars,
      path: target.relative,
    };
    if ((await fs.stat(target.absolute).catch(() => undefined))?.isDirectory())
      throw new ToolError(`read_file: "${target.relative}" is a folder; use list_files.`);
    const { handle, size } = await openRegularFile(target.absolute, "read_file", target.relative);
    let bytes: Buffer;
    try {
      if (size > maxReadBytes) {
        // Too big to hold whole: read from the disk up to the window's end (the editor's view, a
        // whole text, is not asked for).
        const head = Buffer.alloc(Math.min(size, 8000));
        await handle.read(head, 0, head.length, 0);
        if (looksBinary(head)) throw new ToolError(`read_file: "${target.relative}" is a binary file.`);
        return ok(await readWindowStreamed(handle, size, { ...window, signal: ctx.signal }));
      }
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
    if (looksBinary(bytes)) throw new ToolError(`read_file: "${target.relative}" is a binary file.`);
    // The editor's view of the file (unsaved changes) when the host offers one.
    if (ctx.environment?.readTextFile)
      return ok(readWindow(await ctx.environment.readTextFile(target.absolute, ctx.signal), window));
    return ok(readWindow(bytes.toString("utf8"), window));
  },
};

export const listFilesTool: ToolDefinition = {
  name: "list_files",
  description:
    "List files and folders in a folder of the workspace. With recursive true, list every file below it (honouring .gitignore).",
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", description: "Folder to list, relative to the workspace root." },
      recursive: { type: "boolean", description: "List recursively (true) or only the top level (false)." },
    },
    required: ["path"],
  },
  readOnly: true,
  approvalCategory: () => "readFiles",
  async execute(input, ctx) {
    const dir = await resolveAllowedPath(ctx, requireString(input, "path", "list_files") || ".", "list_files", true);
    const recursive = optionalBoolean(input, "recursive", "list_files", false);
    const stat = await fs.stat(dir.absolute).catch(() => undefined);
    if (!stat?.isDirectory()) throw new ToolError(`list_files: "${dir.relative}" is not a folder.`, "not_found");
    let lines: string[];
    let truncated: boolean;
    if (recursive) {
      const listed = await listWorkspaceFiles(
        ctx.workspaceRoot,
        dir.relative,
        maxListEntries * 4,
        ctx.signal,
        ctx.guard,
      );
      lines = listed.files.filter((f) => !ctx.agentIgnore.ignores(f));
      truncated = listed.truncated || lines.length > maxListEntries;
      lines = lines.slice(0, maxListEntries).map((f) => (dir.relative === "." ? f : f.slice(dir.relative.length + 1)));
    } else {
      const entries = await fs.readdir(dir.absolute, { withFileTypes: true });
      lines = entries
        .filter((e) => e.name !== ".git" && !isProtectedPath(ctx.guard, path.join(dir.absolute, e.name)))
        .filter(
          (e) => !ctx.agentIgnore.ignores(dir.relative === "." ? e.name : `${dir.relative}/${e.name}`, e.isDirectory()),
        )
        .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
        .sort();
      truncated = lines.length > maxListEntries;
      lines = lines.slice(0, maxListEntries);
    }
    if (lines.length === 0) return ok("No files found.");
    lines = lines.map(listedName);
    return ok(lines.join("\n") + (truncated ? `\n\n(Only the first ${maxListEntries} entries are shown.)` : ""));
  },
};

export const searchFilesTool: ToolDefinition = {
  name: "search_files",
  description:
    "Search files under a folder with a regular expression (JavaScript syntax), honouring .gitignore. Returns each matching line with its file and line number.",
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", description: "Folder to search, relative to the workspace root." },
      regex: { type: "string", description: "Regular expression to look for." },
      file_pattern: { type: "string", description: 'Glob limiting the files searched, e.g. "*.ts" or "src/**/*.py".' },
    },
    required: ["path", "regex"],
  },
  readOnly: true,
  approvalCategory: () => "readFiles",
  async execute(input, ctx) {
    const dir = await resolveAllowedPath(
      ctx,
      requireString(input, "path", "search_files") || ".",
      "search_files",
      true,
    );
    const source = requireNonEmptyString(input, "regex", "search_files");
    let regex: RegExp;
    try {
      regex = new RegExp(source, "u");
    } catch {
      try {
        regex = new RegExp(source);
      } catch (err) {
        throw new ToolError(`search_files: invalid regular expression: ${(err as Error).message}`);
      }
    }
    const filePattern = optionalString(input, "file_pattern", "search_files");
    const patternRegex = filePattern
      ? new RegExp(`^${filePattern.includes("/") ? "" : "(?:.*/)?"}${globToRegexSource(filePattern)}$`)
      : undefined;
    const stat = await fs.stat(dir.absolute).catch(() => undefined);
    if (!stat) throw new ToolError(`search_files: "${dir.relative}" does not exist.`, "not_found");
    // A file path searches just that file.
    const listed = stat.isFile()
      ? { files: [dir.relative], truncated: false }
      : await listWorkspaceFiles(ctx.workspaceRoot, dir.relative, maxSearchFiles, ctx.signal, ctx.guard);
    const files: string[] = [];
    for (const file of listed.files) {
      if (ctx.agentIgnore.ignores(file)) continue;
      if (patternRegex && !patternRegex.test(file)) continue;
      // A symlink may point outside the workspace (or into the core's storage): search it only if its target is allowed.
      if ((await fs.lstat(path.join(ctx.workspaceRoot, file)).catch(() => undefined))?.isSymbolicLink()) {
        const allowed = await resolveWorkspacePath(ctx.workspaceRoot, file, "search_files", ctx.guard).then(
          () => true,
          () => false,
        );
        if (!allowed) continue;
      }
      files.push(file);
    }
    const found = await searchInWorker(
      {
        root: await fs.realpath(ctx.workspaceRoot),
        files,
        source: regex.source,
        flags: regex.flags,
        maxResults: maxSearchResults,
        maxWholeFileBytes: maxWholeSearchFileBytes,
        maxFileBytes: maxSearchFileBytes,
        maxLineChars: maxSearchLineChars,
        shownLineChars: 300,
      },
      searchTimeBudgetMs,
      ctx.signal,
    );
    const results = found.results;
    const truncated = results.length >= maxSearchResults;
    const notes: string[] = [];
    if (found.stoppedAt) {
      notes.push(
        `(The search stopped after ${searchTimeBudgetMs / 1000} s${found.stoppedAt.file ? `, in ${found.stoppedAt.file}` : ""}: the results are partial. ` +
          "A simpler regular expression, a narrower path or a file_pattern finishes sooner.)",
      );
    }
    if (found.longLinesSkipped > 0)
      notes.push(
        `(${found.longLinesSkipped} line${found.longLinesSkipped === 1 ? "" : "s"} longer than ${maxSearchLineChars} characters, minified or generated code, were not searched.)`,
      );
    if (listed.truncated)
      notes.push(
        `(Only the first ${maxSearchFiles} files under ${dir.relative} were searched: a narrower path or a file_pattern searches the rest.)`,
      );
    const skips = [
      skipNote(found.skipped.tooLarge, `larger than ${maxSearchFileBytes / 1024 / 1024} MiB`),
      skipNote(found.skipped.binary, "binary"),
      skipNote(found.skipped.special, "not regular (pipes, sockets, devices)"),
      skipNote(found.skipped.unreadable, "could not be read"),
    ].filter((n) => n !== undefined);
    if (skips.length) notes.push(`(Not searched: ${skips.join("; ")}.)`);
    const note = notes.length ? `\n\n${notes.join("\n")}` : "";
    if (results.length === 0) return ok(`Found 0 results.${note}`);
    const header = `Found ${results.length}${truncated || listed.truncated || found.stoppedAt ? "+" : ""} result${results.length === 1 ? "" : "s"}.`;
    return ok(`${header}\n\n${results.join("\n")}${note}`);
  },
};

/** "2 files larger than 256 MiB: a.log, b.log" (the first few named). */
function skipNote(files: string[], why: string): string | undefined {
  if (files.length === 0) return undefined;
  const named = files.slice(0, maxNamedSkips).join(", ");
  const more = files.length > maxNamedSkips ? ` and ${files.length - maxNamedSkips} more` : "";
  return `${files.length} file${files.length === 1 ? "" : "s"} ${why}: ${named}${more}`;
}

export const writeToFileTool: ToolDefinition = {
  name: "write_to_file",
  description:
    "Write a file in the workspace: creates it (and its folders) or replaces its whole content. Give the COMPLETE content; for small changes prefer replace_in_file.",
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", description: "Path of the file, relative to the workspace root." },
      content: { type: "string", description: "The complete new content of the file." },
    },
    required: ["path", "content"],
  },
  readOnly: false,
  approvalCategory: () => "editFiles",
  async prepareEdit(input, ctx) {
    const target = await resolveAllowedPath(
      ctx,
      requireNonEmptyString(input, "path", "write_to_file"),
      "write_to_file",
    );
    const content = requireString(input, "content", "write_to_file");
    const existing = await fs.stat(target.absolute).catch(() => undefined);
    if (existing?.isDirectory()) throw new ToolError(`write_to_file: "${target.relative}" is a folder.`);
    return {
      changes: [
        fileChange(
          target.relative,
          target.absolute,
          await readForEdit(target.absolute, ctx, "write_to_file", target.relative),
          content,
        ),
      ],
    };
  },
  async execute(input, ctx) {
    const edit = ctx.preparedEdit ?? (await this.prepareEdit!(input, ctx));
    await commitEdit(edit, ctx);
    const change = edit.changes[0]!;
    return ok(
      `${change.status === "added" ? "Created" : "Replaced"} ${change.path} (${Buffer.byteLength(change.after ?? "")} bytes).`,
    );
  },
};
