/** read_file, list_files, search_files, write_to_file. */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { listWorkspaceFiles } from "./file-listing.js";
import { globToRegexSource } from "./ignore-matcher.js";
import { optionalBoolean, optionalString, requireNonEmptyString, requireString } from "./input.js";
import { resolveAllowedPath, resolveWorkspacePath } from "./workspace-path.js";
import { ok, ToolError, type ToolDefinition } from "./types.js";

const maxReadBytes = 2 * 1024 * 1024;
const maxListEntries = 1000;
const maxSearchResults = 300;
const maxSearchFileBytes = 1024 * 1024;
const maxSearchFiles = 20_000;

function looksBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

export const readFileTool: ToolDefinition = {
  name: "read_file",
  description: "Read the contents of a text file in the workspace. Use it to examine files you need to understand or edit.",
  inputSchema: {
    type: "object",
    properties: { path: { type: "string", description: "Path of the file, relative to the workspace root." } },
    required: ["path"],
  },
  readOnly: true,
  approvalCategory: () => "readFiles",
  async execute(input, ctx) {
    const target = await resolveAllowedPath(ctx, requireNonEmptyString(input, "path", "read_file"), "read_file");
    const stat = await fs.stat(target.absolute).catch(() => undefined);
    if (!stat) throw new ToolError(`read_file: "${target.relative}" does not exist.`, "not_found");
    if (stat.isDirectory()) throw new ToolError(`read_file: "${target.relative}" is a folder; use list_files.`);
    if (stat.size > maxReadBytes) throw new ToolError(`read_file: "${target.relative}" is ${stat.size} bytes, more than the ${maxReadBytes} bytes read_file returns.`);
    const bytes = await fs.readFile(target.absolute);
    if (looksBinary(bytes)) throw new ToolError(`read_file: "${target.relative}" is a binary file.`);
    // The editor's view of the file (unsaved changes) when the host offers one.
    if (ctx.environment?.readTextFile) return ok(await ctx.environment.readTextFile(target.absolute, ctx.signal));
    return ok(bytes.toString("utf8"));
  },
};

export const listFilesTool: ToolDefinition = {
  name: "list_files",
  description: "List files and folders in a folder of the workspace. With recursive true, list every file below it (honouring .gitignore).",
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
    let truncated = false;
    if (recursive) {
      const listed = await listWorkspaceFiles(ctx.workspaceRoot, dir.relative, maxListEntries * 4, ctx.signal);
      lines = listed.files.filter((f) => !ctx.agentIgnore.ignores(f));
      truncated = listed.truncated || lines.length > maxListEntries;
      lines = lines.slice(0, maxListEntries).map((f) => (dir.relative === "." ? f : f.slice(dir.relative.length + 1)));
    } else {
      const entries = await fs.readdir(dir.absolute, { withFileTypes: true });
      lines = entries
        .filter((e) => e.name !== ".git")
        .filter((e) => !ctx.agentIgnore.ignores(dir.relative === "." ? e.name : `${dir.relative}/${e.name}`, e.isDirectory()))
        .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
        .sort();
      truncated = lines.length > maxListEntries;
      lines = lines.slice(0, maxListEntries);
    }
    if (lines.length === 0) return ok("No files found.");
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
    const dir = await resolveAllowedPath(ctx, requireString(input, "path", "search_files") || ".", "search_files", true);
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
    const patternRegex = filePattern ? new RegExp(`^${filePattern.includes("/") ? "" : "(?:.*/)?"}${globToRegexSource(filePattern)}$`) : undefined;
    const stat = await fs.stat(dir.absolute).catch(() => undefined);
    if (!stat) throw new ToolError(`search_files: "${dir.relative}" does not exist.`, "not_found");
    // A file path searches just that file.
    const listed = stat.isFile()
      ? { files: [dir.relative], truncated: false }
      : await listWorkspaceFiles(ctx.workspaceRoot, dir.relative, maxSearchFiles, ctx.signal);
    const results: string[] = [];
    let truncated = false;
    for (const file of listed.files) {
      if (results.length >= maxSearchResults) {
        truncated = true;
        break;
      }
      ctx.signal.throwIfAborted();
      if (ctx.agentIgnore.ignores(file)) continue;
      if (patternRegex && !patternRegex.test(file)) continue;
      const absolute = path.join(ctx.workspaceRoot, file);
      // A symlink may point outside the workspace: search it only if its target is inside.
      if ((await fs.lstat(absolute).catch(() => undefined))?.isSymbolicLink()) {
        const inside = await resolveWorkspacePath(ctx.workspaceRoot, file, "search_files").then(() => true, () => false);
        if (!inside) continue;
      }
      const fileStat = await fs.stat(absolute).catch(() => undefined);
      if (!fileStat?.isFile() || fileStat.size > maxSearchFileBytes) continue;
      const bytes = await fs.readFile(absolute);
      if (looksBinary(bytes)) continue;
      const lines = bytes.toString("utf8").split(/\r?\n/);
      for (let i = 0; i < lines.length && results.length < maxSearchResults; i++) {
        if (regex.test(lines[i])) results.push(`${file}:${i + 1}: ${lines[i].length > 300 ? `${lines[i].slice(0, 300)}…` : lines[i]}`);
      }
    }
    if (results.length === 0) return ok("Found 0 results.");
    const header = `Found ${results.length}${truncated || listed.truncated ? "+" : ""} result${results.length === 1 ? "" : "s"}.`;
    return ok(`${header}\n\n${results.join("\n")}`);
  },
};

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
  async execute(input, ctx) {
    const target = await resolveAllowedPath(ctx, requireNonEmptyString(input, "path", "write_to_file"), "write_to_file");
    const content = requireString(input, "content", "write_to_file");
    const existing = await fs.stat(target.absolute).catch(() => undefined);
    if (existing?.isDirectory()) throw new ToolError(`write_to_file: "${target.relative}" is a folder.`);
    await ctx.beforeEdit?.(target.relative);
    await fs.mkdir(path.dirname(target.absolute), { recursive: true });
    if (ctx.environment?.writeTextFile) await ctx.environment.writeTextFile(target.absolute, content, ctx.signal);
    else await writeFileAtomic(target.absolute, content);
    ctx.recordEditedPath(target.relative);
    return ok(`${existing ? "Replaced" : "Created"} ${target.relative} (${Buffer.byteLength(content)} bytes).`);
  },
};

/** Writes through a temp file and rename, keeping the file's mode, so a crash never leaves half a file. */
export async function writeFileAtomic(absolute: string, content: string): Promise<void> {
  const mode = await fs.stat(absolute).then((s) => s.mode & 0o7777, () => undefined);
  const temp = path.join(path.dirname(absolute), `.${path.basename(absolute)}.dline-${process.pid}-${Date.now()}.tmp`);
  try {
    await fs.writeFile(temp, content, mode !== undefined ? { mode } : undefined);
    await fs.rename(temp, absolute);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
}
