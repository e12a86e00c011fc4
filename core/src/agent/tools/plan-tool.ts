/**
 * update_plan: the model's checklist of the task (steps with a status and a priority). The
 * runtime shows it as a "plan" message in the chat (every client sees the latest plan); it
 * changes nothing in the workspace and needs no approval.
 */
import { optionalString } from "./input.js";
import { ToolError, type PlanStep, type ToolDefinition } from "./types.js";

const PLAN_STATUSES: readonly PlanStep["status"][] = ["pending", "in_progress", "completed"];
const PLAN_PRIORITIES: readonly PlanStep["priority"][] = ["high", "medium", "low"];

const MAX_STEPS = 50;
const MAX_STEP_CHARS = 500;

/** The checklist as text, for clients that show a plan message as plain text. */
export function planText(steps: readonly PlanStep[]): string {
  const box = { pending: "[ ]", in_progress: "[-]", completed: "[x]" } as const;
  return steps.map((s) => `- ${box[s.status]} ${s.step}`).join("\n");
}

function parseSteps(raw: unknown): PlanStep[] {
  let value = raw;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      throw new ToolError('update_plan: the parameter "plan" must be an array of steps.');
    }
  }
  if (!Array.isArray(value))
    throw new ToolError('update_plan: the parameter "plan" is required and must be an array of steps.');
  if (value.length > MAX_STEPS) throw new ToolError(`update_plan: a plan has at most ${MAX_STEPS} steps.`);
  return value.map((item, i) => {
    const entry = (item && typeof item === "object" ? item : {}) as Record<string, unknown>;
    const step = typeof entry.step === "string" ? entry.step.trim() : "";
    if (!step) throw new ToolError(`update_plan: step ${i + 1} needs a non-empty "step" text.`);
    const status = entry.status ?? "pending";
    if (!(PLAN_STATUSES as readonly unknown[]).includes(status)) {
      throw new ToolError(
        `update_plan: step ${i + 1} has status ${JSON.stringify(status)}; use ${PLAN_STATUSES.join(", ")}.`,
      );
    }
    const priority = entry.priority ?? "medium";
    if (!(PLAN_PRIORITIES as readonly unknown[]).includes(priority)) {
      throw new ToolError(
        `update_plan: step ${i + 1} has priority ${JSON.stringify(priority)}; use ${PLAN_PRIORITIES.join(", ")}.`,
      );
    }
    return {
      step: step.slice(0, MAX_STEP_CHARS),
      status: status as PlanStep["status"],
      priority: priority as PlanStep["priority"],
    };
  });
}

export const updatePlanTool: ToolDefinition = {
  name: "update_plan",
  description:
    "Keep a checklist of the task's steps that the person can follow. Call it with the whole plan when you have worked out the steps of " +
    "a task with several of them, and again whenever a step starts or is done. At most one step is in_progress at a time.",
  inputSchema: {
    type: "object",
    properties: {
      plan: {
        type: "array",
        description: "Every step of the plan, in order.",
        items: {
          type: "object",
          properties: {
            step: { type: "string", description: "What the step does, in a short sentence." },
            status: { type: "string", enum: [...PLAN_STATUSES] },
            priority: { type: "string", enum: [...PLAN_PRIORITIES], description: "Default medium." },
          },
          required: ["step", "status"],
        },
      },
      explanation: { type: "string", description: "Optional: why the plan changed." },
    },
    required: ["plan"],
  },
  readOnly: true,
  approvalCategory: () => undefined,
  async execute(input) {
    const steps = parseSteps(input.plan);
    const explanation = optionalString(input, "explanation", "update_plan");
    return {
      content: "The plan was updated and shown to the person.",
      isError: false,
      interaction: { kind: "plan", steps, explanation },
    };
  },
};
