// The agent building blocks the turn loop uses: model providers, tools, approvals, the system prompt.
export { AnthropicProvider } from "./providers/anthropic.js";
export { OpenAiCompatibleProvider } from "./providers/openai.js";
export { createModelProvider } from "./providers/create-provider.js";
export { ModelError, redactSecrets } from "./providers/errors.js";
export type { ModelErrorKind } from "./providers/errors.js";
export { computeCostUsd } from "./providers/cost.js";
export type {
  ContentBlock,
  ModelMessage,
  ModelPrices,
  ModelProvider,
  ModelRequest,
  ModelStreamEvent,
  ProviderConfig,
  RetryPolicy,
  StopReason,
  TokenUsage,
  ToolSpec,
} from "./providers/types.js";

export { builtinTools, findTool, runTool, toolSpecs } from "./tools/registry.js";
export { IgnoreMatcher, loadAgentIgnore } from "./tools/ignore-matcher.js";
export { ToolError } from "./tools/types.js";
export type { ApprovalCategory, CommandOutcome, ToolContext, ToolDefinition, ToolInteraction, ToolResult } from "./tools/types.js";

export { decideApproval, defaultAutoApprovalSettings, parseAutoApprovalSettings } from "./approval.js";
export type { ApprovalDecision, AutoApprovalSettings } from "./approval.js";

export { buildSystemPrompt, collectWorkspaceFacts } from "./system-prompt.js";
export type { EnabledRule, WorkspaceFacts } from "./system-prompt.js";
