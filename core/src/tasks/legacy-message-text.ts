/**
 * The line a person reads for a Cline-shaped UI message whose text Cline stores as JSON (a
 * request's usage, a tool call, a question with options). Cline renders those itself; shown
 * raw they are noise (`{"request":"<task>…","tokensIn":…}`). The JSON stays in the message's
 * detail. Texts that are not such JSON are returned unchanged.
 */

import { withThousands } from "../text/numbers.js";

function parse(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

function usageLine(o: Record<string, unknown>): string {
  const parts = [`${withThousands(num(o.tokensIn))} tokens in`, `${withThousands(num(o.tokensOut))} out`];
  if (num(o.cacheWrites)) parts.push(`${withThousands(num(o.cacheWrites))} cache writes`);
  if (num(o.cacheReads)) parts.push(`${withThousands(num(o.cacheReads))} cache reads`);
  if (typeof o.cost === "number") parts.push(`$${num(o.cost).toFixed(4)}`);
  return parts.join(", ");
}

const TOOL_VERBS: Record<string, string> = {
  readFile: "read",
  listFilesTopLevel: "listed",
  listFilesRecursive: "listed (recursively)",
  listCodeDefinitionNames: "listed the definitions in",
  searchFiles: "searched",
  newFileCreated: "created",
  editedExistingFile: "edited",
  fileDeleted: "deleted",
  webFetch: "fetched",
  webSearch: "searched the web for",
  summarizeTask: "summarized the task",
  useSkill: "used the skill",
};

function toolLine(o: Record<string, unknown>): string {
  const tool = str(o.tool);
  const verb = TOOL_VERBS[tool] ?? tool;
  const target = str(o.path) || str(o.url) || str(o.query) || str(o.skillName);
  const pattern = str(o.regex) ? ` for /${str(o.regex)}/${str(o.filePattern) ? ` in ${str(o.filePattern)}` : ""}` : "";
  return `${verb}${target ? ` ${target}` : ""}${pattern}`.trim();
}

/** `kind` is the message's ask or say. */
export function legacyMessageText(kind: string, text: string): string {
  const o = parse(text);
  if (!o) return text;
  switch (kind) {
    case "api_req_started":
    case "api_req_finished": {
      const cancelled = str(o.cancelReason) ? ` (${str(o.cancelReason).replace(/_/g, " ")})` : "";
      return `API request: ${usageLine(o)}${cancelled}`;
    }
    case "deleted_api_reqs":
      return `Requests removed by a checkpoint restore: ${usageLine(o)}`;
    case "subagent_usage":
      return `Subagents: ${usageLine(o)}`;
    case "tool":
      return str(o.tool) ? toolLine(o) : text;
    case "followup":
      return str(o.question) || text;
    case "plan_mode_respond":
      return str(o.response) || text;
    case "use_mcp_server":
      return `MCP ${str(o.serverName)}: ${str(o.toolName) || str(o.uri)}`.trim();
    case "browser_action":
      return `browser: ${str(o.action)}${str(o.text) ? ` ${str(o.text)}` : ""}${str(o.coordinate) ? ` at ${str(o.coordinate)}` : ""}`;
    case "browser_action_result":
      return `browser${str(o.currentUrl) ? ` at ${str(o.currentUrl)}` : ""}${str(o.screenshot) ? " (screenshot not carried over)" : ""}`;
    case "hook_status":
      return `hook ${str(o.hookName)}${str(o.toolName) ? ` (${str(o.toolName)})` : ""}: ${str(o.status)}`;
    default:
      return text;
  }
}
