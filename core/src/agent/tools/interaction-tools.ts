/** ask_followup_question and attempt_completion: the runtime turns their result into an ask. */
import { optionalStringList, requireNonEmptyString } from "./input.js";
import type { ToolDefinition } from "./types.js";

export const askFollowupQuestionTool: ToolDefinition = {
  name: "ask_followup_question",
  description:
    "Ask the person a question when you need information to go on. Offer 2-5 short answer options when that helps.",
  inputSchema: {
    type: "object",
    properties: {
      question: { type: "string", description: "The question to ask." },
      options: { type: "array", items: { type: "string" }, description: "Optional answers the person can pick." },
    },
    required: ["question"],
  },
  readOnly: true,
  approvalCategory: () => undefined,
  async execute(input) {
    const question = requireNonEmptyString(input, "question", "ask_followup_question");
    const options = optionalStringList(input, "options", "ask_followup_question");
    return { content: "", isError: false, interaction: { kind: "followup", question, options } };
  },
};

export const attemptCompletionTool: ToolDefinition = {
  name: "attempt_completion",
  description: "Present the result of the task once it is done. Only use it after the tools you used succeeded.",
  inputSchema: {
    type: "object",
    properties: { result: { type: "string", description: "The result of the task, for the person." } },
    required: ["result"],
  },
  readOnly: true,
  approvalCategory: () => undefined,
  async execute(input) {
    return {
      content: "",
      isError: false,
      interaction: { kind: "completion", result: requireNonEmptyString(input, "result", "attempt_completion") },
    };
  },
};
