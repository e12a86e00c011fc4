export { ClineImporter } from "./cline-importer.js";
export type { ClineImporterDeps, DiscoveredItem } from "./cline-importer.js";
export { resolveClineRoots, VSCODE_VARIANTS } from "./cline-roots.js";
export type { ClineRoots } from "./cline-roots.js";
export { listCandidates, parseCandidate, describeCandidate, discoveryContext } from "./cline-discovery.js";
export type { Candidate, CandidateList, DiscoveryContext } from "./cline-discovery.js";
export { visibleUserText, isRuntimePrompt } from "./session-text.js";
export { MalformedClineFile } from "./import-types.js";
export type {
  ClineItem,
  ClineItemKind,
  ImportItemResult,
  ImportOutcome,
  ParsedClineItem,
  SkipCode,
  UsageTotals,
} from "./import-types.js";
export {
  importedTaskId,
  importSource,
  legacySourceKey,
  sessionSourceKey,
  requestKey,
  sessionRequestKey,
} from "./source-keys.js";
export { cutShortArrayPrefix } from "./read-only-files.js";
