/**
 * Tool calls written in the answer's text, in Cline's XML format, for models without native
 * tool calling (or servers that refuse `tools`):
 *
 *   <read_file>
 *   <path>src/main.ts</path>
 *   </read_file>
 *
 * The prompt section that teaches the format, a parser for a finished answer, a filter that
 * keeps the XML out of the text people see while it streams, and the rendering of earlier tool
 * calls and results as text for the next request.
 */
import type { ContentBlock } from "./providers/types.js";
import type { ToolDefinition } from "./tools/types.js";

export interface TextToolCall {
  name: string;
  input: Record<string, unknown>;
  /** Set when the call is not whole (its closing tag or a parameter's is missing). */
  problem?: string;
}

interface SchemaProperty {
  type?: string;
  description?: string;
}

function properties(tool: ToolDefinition): [string, SchemaProperty][] {
  return Object.entries((tool.inputSchema.properties ?? {}) as Record<string, SchemaProperty>);
}

function required(tool: ToolDefinition): string[] {
  return Array.isArray(tool.inputSchema.required) ? (tool.inputSchema.required as string[]) : [];
}

/** The system prompt's tool section in this format: how to call, then each tool with its parameters. */
export function textToolPrompt(tools: readonly ToolDefinition[]): string {
  const sections = tools.map((tool) => {
    const params = properties(tool).map(
      ([name, p]) =>
        `- ${name}: (${required(tool).includes(name) ? "required" : "optional"}) ${p.description ?? ""}${p.type === "array" || p.type === "object" ? " (as JSON)" : ""}`,
    );
    const usage = [
      `<${tool.name}>`,
      ...properties(tool).map(([name]) => `<${name}>${name} value here</${name}>`),
      `</${tool.name}>`,
    ];
    return [
      `## ${tool.name}`,
      `Description: ${tool.description}`,
      params.length ? `Parameters:\n${params.join("\n")}` : "Parameters: none",
      `Usage:\n${usage.join("\n")}`,
    ].join("\n");
  });
  return [
    "# Tool use",
    "You call a tool by writing it in your answer as XML: the tool's name as the outer tag and each parameter as a tag inside it. For example:",
    "<read_file>\n<path>src/main.js</path>\n</read_file>",
    "Write the tags exactly like this, with no code fence around them; the results come back in the next message. " +
      "Paths are relative to the workspace root and must stay inside it. Read a file before editing it. " +
      "When you need information only the person has, use ask_followup_question. When the task is done, use attempt_completion with a short summary.",
    "",
    ...sections,
  ].join("\n");
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The tool calls in a finished answer, in order, and the text around them (what people read). */
export function parseTextToolCalls(
  text: string,
  tools: readonly ToolDefinition[],
): { text: string; calls: TextToolCall[] } {
  const byName = new Map(tools.map((t) => [t.name, t]));
  if (byName.size === 0) return { text, calls: [] };
  const opening = new RegExp(`<(${[...byName.keys()].map(escapeRegex).join("|")})>`, "g");
  const calls: TextToolCall[] = [];
  const visible: string[] = [];
  let position = 0;
  let match: RegExpExecArray | null;
  while ((match = opening.exec(text)) !== null) {
    const name = match[1]!;
    const tool = byName.get(name)!;
    const bodyStart = match.index + match[0].length;
    const closeAt = text.indexOf(`</${name}>`, bodyStart);
    const body = text.slice(bodyStart, closeAt === -1 ? text.length : closeAt);
    visible.push(text.slice(position, match.index));
    const call = parseParameters(tool, body);
    if (closeAt === -1 && !call.problem && !isWholeBody(tool, body))
      call.problem = `the closing </${name}> tag is missing`;
    calls.push(call);
    position = closeAt === -1 ? text.length : closeAt + name.length + 3;
    opening.lastIndex = position;
  }
  visible.push(text.slice(position));
  return {
    text: visible
      .join("")
      .replace(/\n{3,}/g, "\n\n")
      .trim(),
    calls,
  };
}

/** A body whose parameters all closed (a model may stop right before the tool's closing tag). */
function isWholeBody(tool: ToolDefinition, body: string): boolean {
  const trimmed = body.trimEnd();
  return properties(tool).some(([p]) => trimmed.endsWith(`</${p}>`));
}

function parseParameters(tool: ToolDefinition, body: string): TextToolCall {
  const input: Record<string, unknown> = {};
  let problem: string | undefined;
  for (const [name, prop] of properties(tool)) {
    const open = `<${name}>`;
    const start = body.indexOf(open);
    if (start === -1) continue;
    const valueStart = start + open.length;
    // The last closing tag: a file's content may itself contain the tag's text.
    const end =
      name === "content" || name === "diff" ? body.lastIndexOf(`</${name}>`) : body.indexOf(`</${name}>`, valueStart);
    if (end === -1 || end < valueStart) {
      problem = `the parameter <${name}> is not closed`;
      continue;
    }
    let value = body.slice(valueStart, end);
    // One newline after the opening tag and before the closing one belongs to the layout.
    value = value.replace(/^\r?\n/, "").replace(/\r?\n$/, "");
    if (prop.type === "array" || prop.type === "object") {
      try {
        input[name] = JSON.parse(value);
        continue;
      } catch {
        // tools accept a string where they can (e.g. a JSON list of options); pass it on
      }
    }
    input[name] = prop.type === "string" || prop.type === undefined ? value : value.trim();
  }
  return problem ? { name: tool.name, input, problem } : { name: tool.name, input };
}

/**
 * Keeps tool-call XML out of the streamed text: text is released as it comes until an opening
 * tag of a known tool starts; from there on nothing more is shown (the call and what follows
 * it are not for people to read). A `<` that may still become such a tag is held back.
 */
export class TextToolStreamFilter {
  private held = "";
  private inCall = false;
  private readonly names: string[];

  constructor(tools: readonly ToolDefinition[]) {
    this.names = tools.map((t) => `<${t.name}>`);
  }

  /** The part of `chunk` people may see now. */
  push(chunk: string): string {
    if (this.inCall) return "";
    const text = this.held + chunk;
    this.held = "";
    const starts = this.names.map((tag) => text.indexOf(tag)).filter((at) => at !== -1);
    if (starts.length > 0) {
      this.inCall = true;
      return text.slice(0, Math.min(...starts));
    }
    const lastOpen = text.lastIndexOf("<");
    if (lastOpen !== -1 && this.names.some((tag) => tag.startsWith(text.slice(lastOpen)))) {
      this.held = text.slice(lastOpen);
      return text.slice(0, lastOpen);
    }
    return text;
  }

  /** What was held back, at the end of the answer. */
  end(): string {
    const rest = this.inCall ? "" : this.held;
    this.held = "";
    return rest;
  }
}

/** A tool call as the model would have written it in this format. */
export function renderTextToolCall(name: string, input: unknown): string {
  const params = input && typeof input === "object" ? Object.entries(input as Record<string, unknown>) : [];
  const lines = params.map(
    ([key, value]) => `<${key}>${typeof value === "string" ? value : JSON.stringify(value)}</${key}>`,
  );
  return [`<${name}>`, ...lines, `</${name}>`].join("\n");
}

/**
 * Blocks of a conversation as text, for a request without native tools: tool calls as the XML
 * the model writes, results as text introduced by the call they answer (as Cline sends them).
 */
export function toTextToolBlocks(
  blocks: readonly ContentBlock[],
  callsById: ReadonlyMap<string, { name: string; input: unknown }>,
): ContentBlock[] {
  return blocks.map((b): ContentBlock => {
    if (b.type === "tool_use") return { type: "text", text: renderTextToolCall(b.name, b.input) };
    if (b.type === "tool_result") {
      const call = callsById.get(b.toolUseId);
      const target =
        call && call.input && typeof call.input === "object"
          ? ((call.input as Record<string, unknown>).path ?? (call.input as Record<string, unknown>).command)
          : undefined;
      const label = call ? `[${call.name}${typeof target === "string" ? ` for '${target}'` : ""}]` : "[tool]";
      return { type: "text", text: `${label} ${b.isError ? "Error" : "Result"}:\n${b.content}` };
    }
    return b;
  });
}
