/** Builds the system prompt: who the agent is, how to use tools, the workspace facts, the enabled rules. */
import * as os from "node:os";
import { textToolPrompt } from "./text-tool-calls.js";
import type { ToolDefinition } from "./tools/types.js";

export interface WorkspaceFacts {
  os: string;
  shell: string;
  cwd: string;
  /** ISO date (YYYY-MM-DD) of today, passed in so that the prompt is reproducible. */
  date: string;
}

export interface EnabledRule {
  /** Where the rule came from (e.g. ".clinerules/style.md"), shown as its heading. */
  name: string;
  text: string;
}

export function collectWorkspaceFacts(cwd: string, now: Date): WorkspaceFacts {
  return {
    os: `${os.type()} ${os.release()} (${process.platform}/${process.arch})`,
    shell: process.env.SHELL ?? "/bin/sh",
    cwd,
    date: now.toISOString().slice(0, 10),
  };
}

/** `textTools`: the model calls tools in its text (Cline's XML format) instead of native tool calling. */
export function buildSystemPrompt(
  facts: WorkspaceFacts,
  tools: readonly ToolDefinition[],
  rules: readonly EnabledRule[],
  options: { textTools?: boolean } = {},
): string {
  const sections = [
    "You are Dline, a software engineering agent working in the person's workspace. You accomplish the task step by step with the tools below, " +
      "one or more tool calls per turn, and you read each tool's result before deciding the next step.",
    options.textTools
      ? textToolPrompt(tools)
      : [
          "# Tool use",
          "Call tools through native tool calling; paths are relative to the workspace root and must stay inside it.",
          "Read a file before editing it. Prefer replace_in_file for small edits and write_to_file for new files or whole rewrites.",
          "Some tool calls need the person's approval; if one is denied, adapt to their feedback.",
          "When you need information only the person has, use ask_followup_question. When the task is done, use attempt_completion with a short summary.",
          "",
          ...tools.map((t) => `## ${t.name}\n${t.description}`),
        ].join("\n"),
    [
      "# Workspace",
      `Operating system: ${facts.os}`,
      `Default shell: ${facts.shell}`,
      `Workspace root (current working directory): ${facts.cwd}`,
      `Today's date: ${facts.date}`,
    ].join("\n"),
  ];
  if (rules.length > 0) {
    sections.push(
      [
        "# Rules",
        "The person set these rules for this workspace; follow them.",
        ...rules.map((r) => `## ${r.name}\n${r.text.trim()}`),
      ].join("\n\n"),
    );
  }
  return `${sections.join("\n\n")}\n`;
}
