/** The tool set and the one entry point that runs a tool call safely. */
import { executeCommandTool } from "./execute-command.js";
import { listFilesTool, readFileTool, searchFilesTool, writeToFileTool } from "./file-tools.js";
import { askFollowupQuestionTool, attemptCompletionTool } from "./interaction-tools.js";
import { updatePlanTool } from "./plan-tool.js";
import { replaceInFileTool } from "./replace-in-file.js";
import { newSubagentTool } from "./subagent-tool.js";
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

/**
 * Runs one tool call. Refusals and bad input (ToolError) and ordinary file-system failures come
 * back as an error result the model can read and correct; anything else is a bug and is thrown.
 * An abort while running is thrown as the signal's reason, except for execute_command, which
 * reports its own cancellation in its result.
 */
export async function runTool(tool: ToolDefinition, input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  try {
    return await tool.execute(input, ctx);
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (err instanceof ToolError) return { content: err.message, isError: true };
    const code = (err as NodeJS.ErrnoException | null)?.code;
    const fsMessages: Record<string, string> = {
      ENOENT: "a file or folder does not exist",
      EISDIR: "the path is a folder",
      ENOTDIR: "a part of the path is not a folder",
      EACCES: "permission denied by the file system",
      EPERM: "permission denied by the file system",
      ELOOP: "too many levels of symbolic links",
      ENOSPC: "the disk is full",
    };
    if (code && fsMessages[code]) return { content: `${tool.name}: ${fsMessages[code]}.`, isError: true };
    throw err;
  }
}
