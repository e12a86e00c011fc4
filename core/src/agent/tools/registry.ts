/** The tool set and the one entry point that runs a tool call safely. */
import { executeCommandTool } from "./execute-command.js";
import { listFilesTool, readFileTool, searchFilesTool, writeToFileTool } from "./file-tools.js";
import { askFollowupQuestionTool, attemptCompletionTool } from "./interaction-tools.js";
import { updatePlanTool } from "./plan-tool.js";
import { replaceInFileTool } from "./replace-in-file.js";
import { newSubagentTool } from "./subagent-tool.js";
import type { PreparedEdit } from "./file-edit.js";
import { ToolError, type ToolContext, type ToolDefinition, type ToolResult } from "./types.js";
import type { ToolSpec } from "../providers/types.js";

export const builtinTools: readonly ToolDefinition[] = [
  readFileTool,
  listFilesTool,
  searchFilesTool,
  writeToFileTool,
  replaceInFileTool,
  executeCommandTool,
  askFollowupQuestionTool,
  attemptCompletionTool,
  newSubagentTool,
  updatePlanTool,
];

export function findTool(name: string, tools: readonly ToolDefinition[] = builtinTools): ToolDefinition | undefined {
  return tools.find((t) => t.name === name);
}

/** The tools as the providers offer them to the model. */
export function toolSpecs(tools: readonly ToolDefinition[] = builtinTools): ToolSpec[] {
  return tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
}

/** How long a tool may go on after its call was cancelled before the call ends without it. */
const abortGraceMs = 1_500;

/** The file-system errors a tool call reports to the model (the call fails, not the task). */
const fsMessages: Record<string, string> = {
  ENOENT: "a file or folder does not exist",
  EISDIR: "the path is a folder",
  ENOTDIR: "a part of the path is not a folder",
  EACCES: "permission denied by the file system",
  EPERM: "permission denied by the file system",
  ELOOP: "too many levels of symbolic links",
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is exceeded",
  ENAMETOOLONG: "a file name in the path is too long",
  EROFS: "the file system is read-only",
  EEXIST: "the file already exists",
  ENOTEMPTY: "the folder is not empty",
  EBUSY: "the file is busy",
  ETXTBSY: "the file is a running program",
  EMFILE: "too many files are open",
  ENFILE: "too many files are open",
  EINVAL: "the file system refused the path",
  EXDEV: "the path crosses file systems",
  EIO: "the disk reported an input/output error",
  EFBIG: "the file is too large",
  ENXIO: "no such device",
  ENODEV: "no such device",
};

/**
 * Runs one tool call. Refusals and bad input (ToolError) and file-system failures come back as
 * an error result the model can read and correct (a failed call never fails the task); anything
 * else is a bug and is thrown. An abort while running is thrown as the signal's reason, except
 * for execute_command, which reports its own cancellation in its result; a tool that does not
 * end soon after the abort is left behind, so a Cancel always ends the call. Every result's
 * text has the stored secrets redacted.
 */
export async function runTool(
  tool: ToolDefinition,
  input: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolResult> {
  try {
    const result = await untilAbortedPlusGrace(tool.execute(input, ctx), ctx.signal);
    return { ...result, content: ctx.guard.redact(result.content) };
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const failure = callFailure(tool, err, ctx);
    if (failure !== undefined) return { content: failure, isError: true };
    throw err;
  }
}

/**
 * Computes an edit tool's exact change before anything is written (see file-edit.ts), with the
 * same failures as running it: a refusal or a file-system error is the call's failure (what
 * the model reads), never the task's.
 */
export async function prepareToolEdit(
  tool: ToolDefinition,
  input: Record<string, unknown>,
  ctx: ToolContext,
): Promise<{ edit: PreparedEdit; failure?: undefined } | { failure: string; edit?: undefined }> {
  try {
    return { edit: await untilAbortedPlusGrace(tool.prepareEdit!(input, ctx), ctx.signal) };
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const failure = callFailure(tool, err, ctx);
    if (failure !== undefined) return { failure };
    throw err;
  }
}

/** What the model reads for an error a tool threw; undefined for a bug (thrown on). */
function callFailure(tool: ToolDefinition, err: unknown, ctx: ToolContext): string | undefined {
  if (err instanceof ToolError) return ctx.guard.redact(err.message);
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code && fsMessages[code]) return `${tool.name}: ${fsMessages[code]} (${code}).`;
  // Any other system error of a file or process operation: the call failed, not the task.
  if (
    typeof code === "string" &&
    /^E[A-Z0-9]+$/.test(code) &&
    typeof (err as NodeJS.ErrnoException).syscall === "string"
  ) {
    return `${tool.name}: the operating system refused the operation (${code}).`;
  }
  return undefined;
}

/** The tool's own outcome, unless the signal aborted and the tool is still running `abortGraceMs` later. */
function untilAbortedPlusGrace<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      timer = setTimeout(() => reject(signal.reason), abortGraceMs);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    });
  });
}
