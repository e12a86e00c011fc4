import type { EnabledRule, ToolDefinition, ToolGuard } from "../agent/index.js";

/** The events a hook can run on; a hook receives a JSON payload on stdin. */
export type HookEvent =
  "TaskStart" | "TaskResume" | "TaskCancel" | "TaskComplete" | "PreToolUse" | "PostToolUse" | "UserPromptSubmit";

export interface HookRun {
  /** Which hook ran (its path or name). */
  hook: string;
  exitCode: number | null;
  output: string;
  timedOut: boolean;
}

export interface HookOutcome {
  /** Set when a PreToolUse hook blocked the tool: the reason the model reads. */
  blocked?: string;
  runs: HookRun[];
}

/** A subagent definition: what a named subagent may use. */
export interface SubagentDefinition {
  name: string;
  instructions: string;
  /** Tool names it may use; undefined = every tool. */
  tools?: string[];
  /** The model profile it runs on; undefined = the parent's. */
  profileId?: string;
}

export interface CapabilityContext {
  taskId: string;
  workspaceRoot: string;
  signal?: AbortSignal;
  /** runHooks: awaited before hooks run, only when some are configured for the event. */
  beforeHooks?: () => Promise<void>;
  /** runHooks: what keeps secrets out of a hook's environment and output (the task's tool guard). */
  secrets?: () => Promise<Pick<ToolGuard, "withoutSecrets" | "redact">>;
}

/**
 * What capabilities (rules, workflows, skills, subagent definitions, hooks, MCP tools) add to a
 * task. Read at every turn, so that a change on disk applies to the next turn. The runtime works
 * without any (`noCapabilities`).
 */
export interface CapabilitiesPort {
  /** The enabled rules (system prompt) and the extra tools (load_workflow, load_skill, MCP tools). */
  forTurn(ctx: CapabilityContext): Promise<{ rules: EnabledRule[]; tools: ToolDefinition[] }>;
  /** Expands `/workflow-name` in a user's message into the text the model reads. */
  expandUserText(text: string, ctx: CapabilityContext): Promise<string>;
  subagent(name: string, ctx: CapabilityContext): Promise<SubagentDefinition | undefined>;
  runHooks(event: HookEvent, payload: Record<string, unknown>, ctx: CapabilityContext): Promise<HookOutcome>;
}

export const noCapabilities: CapabilitiesPort = {
  forTurn: async () => ({ rules: [], tools: [] }),
  expandUserText: async (text) => text,
  subagent: async () => undefined,
  runHooks: async () => ({ runs: [] }),
};

/**
 * Whether a subagent definition's allow-list lets it use a tool. `attempt_completion` is always
 * allowed (a subagent must be able to finish); an entry ending in `*` allows a prefix
 * (`mcp__docs__*` allows every tool of the MCP server "docs"). No list = every tool.
 */
export function toolAllowed(name: string, allowed: readonly string[] | undefined): boolean {
  if (!allowed || name === "attempt_completion") return true;
  return allowed.some((entry) => (entry.endsWith("*") ? name.startsWith(entry.slice(0, -1)) : entry === name));
}

/**
 * The capabilities a subagent with an allow-list sees: the tools capabilities add (load_skill,
 * load_workflow, MCP tools) are filtered like the built-in ones, so a call to any other tool is
 * refused as unknown and never runs. Without load_skill, the skills list is not offered either.
 */
export function restrictCapabilityTools(
  port: CapabilitiesPort,
  allowed: readonly string[] | undefined,
): CapabilitiesPort {
  if (!allowed) return port;
  return {
    forTurn: async (ctx) => {
      const { rules, tools } = await port.forTurn(ctx);
      const kept = tools.filter((t) => toolAllowed(t.name, allowed));
      const hasSkills = kept.some((t) => t.name === "load_skill");
      return { rules: hasSkills ? rules : rules.filter((r) => r.name !== SKILLS_RULE_NAME), tools: kept };
    },
    expandUserText: (text, ctx) => port.expandUserText(text, ctx),
    subagent: (name, ctx) => port.subagent(name, ctx),
    runHooks: (event, payload, ctx) => port.runHooks(event, payload, ctx),
  };
}

/** The rule listing the skills (capabilities/capabilities.ts adds it with load_skill). */
export const SKILLS_RULE_NAME = "Skills";

/** Runs the hooks of an event and records each run as an activity (never as the user's words). */
export async function runAndRecordHooks(
  capabilities: CapabilitiesPort,
  recordActivity: (kind: string, data: Record<string, unknown>) => void,
  event: HookEvent,
  payload: Record<string, unknown>,
  ctx: CapabilityContext,
): Promise<HookOutcome> {
  const outcome = await capabilities.runHooks(event, { event, taskId: ctx.taskId, ...payload }, ctx);
  for (const run of outcome.runs) recordActivity("hook", { event, ...run, blocked: outcome.blocked });
  return outcome;
}
