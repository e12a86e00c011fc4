// The runtime's public surface: the task runtime and its wiring, the capabilities port, tool-call
// records. Other folders import only this file.
export { SKILLS_RULE_NAME } from "./capabilities-port.js";
export type {
  CapabilitiesPort,
  CapabilityContext,
  HookEvent,
  HookOutcome,
  HookRun,
  SubagentDefinition,
} from "./capabilities-port.js";
export { CheckpointStatusRelay, lazyTaskRuntime } from "./create-runtime.js";
export { ModelResolver, SET_UP_A_MODEL } from "./model-resolver.js";
export { TaskRuntime } from "./task-runtime.js";
export { assertWorkspaceFolder } from "./task-workspace.js";
export { toolCallOf } from "./tool-call-record.js";
export type { CommandLineRecord, FileEditRecord, ToolCallRecord, ToolCallStatusName } from "./tool-call-record.js";
export type { TaskMode } from "./turn-deps.js";
export { MODEL_STOP_REASONS } from "./turn-loop.js";
export type { AskKindName, RuntimeAsk, RuntimeEvent, RuntimeEventBody } from "./runtime-events.js";
