/** new_subagent: the runtime runs a subagent task (stored under subagents/<id>/) and returns its result. */
import { optionalString, requireNonEmptyString } from "./input.js";
import type { ToolDefinition } from "./types.js";

export const newSubagentTool: ToolDefinition = {
  name: "new_subagent",
  description:
    "Hand a self-contained part of the work to a subagent: it gets only the prompt you write (include every path and fact it needs), " +
    "works with the same tools in the same workspace, and its final result comes back to you as this tool's result.",
  inputSchema: {
    type: "object",
    properties: {
      prompt: { type: "string", description: "The subagent's complete task description." },
      subagent: {
        type: "string",
        description: "Optional: the name of a defined subagent to use (its instructions, tools and model).",
      },
    },
    required: ["prompt"],
  },
  // The subagent may edit the workspace: the turn waits for the baseline and saves a checkpoint.
  readOnly: false,
  // The call itself needs no approval: each of the subagent's tool calls is approved on its own.
  approvalCategory: () => undefined,
  async execute(input) {
    const name = optionalString(input, "subagent", "new_subagent");
    return {
      content: "",
      isError: false,
      interaction: { kind: "subagent", prompt: requireNonEmptyString(input, "prompt", "new_subagent"), name },
    };
  },
};
