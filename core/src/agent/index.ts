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
export type {
  ApprovalCategory,
  CommandOutcome,
  ToolContext,
  ToolDefinition,
  ToolInteraction,
  ToolResult,
} from "./tools/types.js";

export { decideApproval, defaultAutoApprovalSettings, parseAutoApprovalSettings } from "./approval.js";
export type { ApprovalDecision, AutoApprovalSettings } from "./approval.js";

export { buildSystemPrompt, collectWorkspaceFacts } from "./system-prompt.js";
export type { EnabledRule, WorkspaceFacts } from "./system-prompt.js";
export { withOverlay } from "./approval.js";
export type { ApprovalOverlay } from "./approval.js";
export { environmentDetails } from "./environment-details.js";
export type { EditorFiles } from "./environment-details.js";
export { anthropicMaxTokens } from "./providers/anthropic.js";
export { describeWait } from "./providers/http-errors.js";
export { knownMaxOutputTokens } from "./providers/price-table.js";
export { resolvePrices } from "./providers/pricing.js";
export type { ThinkingBlock } from "./providers/types.js";
export { TextToolStreamFilter, parseTextToolCalls, toTextToolBlocks } from "./text-tool-calls.js";
export { defaultCommandTimeoutMs } from "./tools/execute-command.js";
export { spawnLeashed } from "./tools/leashed-spawn.js";
export { StaleEditError, isCurrent } from "./tools/file-edit.js";
export type { PreparedEdit } from "./tools/file-edit.js";
export { optionalString, requireNonEmptyString } from "./tools/input.js";
export { planText } from "./tools/plan-tool.js";
export { editsProtectedPath } from "./tools/protected-edits.js";
export { reachesSecretPlaces } from "./tools/secret-places.js";
export { resolveAllowedPath } from "./tools/workspace-path.js";
export { isInsideFolder, realpathOrUndefined } from "./tools/real-paths.js";
export { prepareToolEdit } from "./tools/registry.js";
export { createToolGuard } from "./tools/tool-guard.js";
export type { ToolGuard } from "./tools/tool-guard.js";
export { ok } from "./tools/types.js";
export type { ToolEnvironment } from "./tools/types.js";
export { beingEditedMessage, fileBeingEdited } from "./tools/unsaved-in-editor.js";
